/** Words the agent says of its own: the goodbye before an `idle` ending, and visitor values filled into its welcome. */

const GOODBYES: Record<string, string> = {
  en: "It seems you've stepped away. Thanks for stopping by, goodbye!",
  es: 'Parece que te has ido. Gracias por visitarnos, ¡adiós!',
  fr: 'Il semble que vous soyez parti. Merci de votre visite, au revoir !',
  de: 'Sie scheinen weg zu sein. Danke für Ihren Besuch, auf Wiedersehen!',
  it: 'Sembra che tu ti sia allontanato. Grazie della visita, arrivederci!',
  pt: 'Parece que você saiu. Obrigado pela visita, tchau!',
};

/** The goodbye said when the visitor has been silent too long, in the conversation's language (English otherwise). */
export function goodbyeIn(language: string): string {
  return GOODBYES[language] ?? GOODBYES.en;
}

/** `{{visitor.<name>}}` in the agent's words, from the verified visitor values (unknown names say nothing). */
export function fillVisitorValues(text: string, visitor: Record<string, string>): string {
  return text
    .replace(/\{\{\s*visitor\.([a-z][a-z0-9_]{0,39})\s*\}\}/g, (_, name: string) => visitor[name] ?? '')
    .replace(/\s{2,}/g, ' ')
    .trim();
}

/** Engines name detected languages as ISO codes ("en"), BCP 47 tags ("en-US") or English names ("english"). */
const BY_NAME: Record<string, string> = {
  english: 'en',
  french: 'fr',
  german: 'de',
  spanish: 'es',
  italian: 'it',
  portuguese: 'pt',
  dutch: 'nl',
  polish: 'pl',
  russian: 'ru',
  ukrainian: 'uk',
  turkish: 'tr',
  arabic: 'ar',
  hebrew: 'he',
  hindi: 'hi',
  japanese: 'ja',
  korean: 'ko',
  chinese: 'zh',
  mandarin: 'zh',
  cantonese: 'yue',
  swedish: 'sv',
  danish: 'da',
  norwegian: 'no',
  finnish: 'fi',
  czech: 'cs',
  greek: 'el',
  romanian: 'ro',
  hungarian: 'hu',
  vietnamese: 'vi',
  thai: 'th',
  indonesian: 'id',
  malay: 'ms',
  catalan: 'ca',
};

export function isoLanguage(value: string | undefined | null): string | undefined {
  if (!value) return undefined;
  const v = value.trim().toLowerCase();
  if (/^[a-z]{2,3}([-_][a-z0-9]+)*$/.test(v) && !BY_NAME[v]) return v.split(/[-_]/)[0];
  return BY_NAME[v];
}

/**
 * What a detail is: its kinds and the guess of a detail's kind from its name and description.
 * Plain code, no parsers: the rule routes and the rules store use it at start, while the parsers
 * that read values (chrono, libphonenumber) load with the first conversation that needs them.
 */
export const DETAIL_KINDS = ['email', 'phone', 'name', 'date', 'number', 'yes_no', 'text'] as const;
export type DetailKind = (typeof DETAIL_KINDS)[number];

export interface DetailSpec {
  name: string;
  description: string;
  required: boolean;
  type?: DetailKind;
}

export function kindOf(detail: Pick<DetailSpec, 'name' | 'description' | 'type'>): DetailKind {
  if (detail.type) return detail.type;
  const text = `${detail.name.replace(/_/g, ' ')} ${detail.description}`.toLowerCase();
  const name = detail.name.toLowerCase();
  if (/e-?mail/.test(text)) return 'email';
  if (/phone|mobile|cell\b|telephone|whatsapp|number to call|call ?back number/.test(text)) return 'phone';
  if (
    /^(is|has|wants|needs|agreed|accepts|opt|consent|subscribe|interested)_|^(consent|newsletter|opt_in|callback)$/.test(name) ||
    /\bwhether\b|\byes\/no\b|\byes or no\b/.test(text)
  )
    return 'yes_no';
  if (
    /(^|_)(date|time|day|when|appointment|booking|deadline|birthday)(_|$)/.test(name) ||
    /\b(date|time|when|appointment|day)\b/.test(detail.description.toLowerCase())
  )
    return 'date';
  if (/\b(budget|amount|price|cost|how many|number of|count|quantity|guests|people|party size|headcount|age|seats|units|rooms|nights)\b/.test(text))
    return 'number';
  if (/(^|_)name(_|$)/.test(name) && !/company|business|organi[sz]ation|product|pet|street|project/.test(text)) return 'name';
  return 'text';
}

/**
 * CSV cells and rows as RFC 4180 writes them: a cell holding a comma, a double quote, a carriage
 * return or a line feed is quoted, its quotes doubled; rows end with CRLF. Text cells that a
 * spreadsheet would run as a formula (starting with = + - @, a tab or a carriage return) get a
 * leading apostrophe (OWASP's advice against CSV injection); numbers are written as they are.
 */
const NEEDS_QUOTES = /[",\r\n]/;
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  let text = String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRow(values: readonly unknown[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

/**
 * The five handoff formats (interface: Events › Outbound webhook, items 1 and 2). The template fixes
 * the shape; each value put into it is escaped for the format:
 *
 * | format | sent as                              | a value is                                      |
 * |--------|--------------------------------------|-------------------------------------------------|
 * | json   | POST application/json                | JSON string escaping (the template quotes it)   |
 * | xml    | POST application/xml                 | XML entities; characters XML forbids dropped    |
 * | text   | POST text/plain                      | as it is                                        |
 * | form   | POST application/x-www-form-urlencoded | URL encoding; one name=value a line, joined with & |
 * | query  | GET, appended to the URL             | URL encoding; one name=value a line, joined with & |
 */
export const FORMATS = ['json', 'xml', 'text', 'form', 'query'] as const;
export type Format = (typeof FORMATS)[number];

export const CONTENT_TYPES: Record<Format, string | null> = {
  json: 'application/json; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  text: 'text/plain; charset=utf-8',
  form: 'application/x-www-form-urlencoded; charset=utf-8',
  query: null,
};

export function methodFor(format: Format): 'POST' | 'GET' {
  return format === 'query' ? 'GET' : 'POST';
}

/** JSON string content: what goes between the template's quotes. */
export function escapeJson(value: string): string {
  return JSON.stringify(value)
    .slice(1, -1)
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

// Characters XML 1.0 does not allow at all (not even as entities).
// eslint-disable-next-line no-control-regex
const XML_FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function escapeXml(value: string): string {
  return value.replace(XML_FORBIDDEN, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

/** RFC 3986 percent-encoding of UTF-8 (what URLSearchParams and every form parser decode). */
export function escapeUrl(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function escapeFor(format: Format): (value: string) => string {
  switch (format) {
    case 'json':
      return escapeJson;
    case 'xml':
      return escapeXml;
    case 'form':
    case 'query':
      return escapeUrl;
    default:
      return (value) => value;
  }
}

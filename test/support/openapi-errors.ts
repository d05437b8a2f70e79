/**
 * Whether an answer is one /openapi.json lists for its operation: its status is among the
 * operation's responses and, for a catalogued `{code, message}`, the code is named in that
 * status's description. Used by the hostile-input sweeps so the documented errors stay true.
 */

/** Answers given before a route is chosen (an unmatched path, a bad URL): no operation's own. */
const BEFORE_ROUTING = new Set(['Not Found', 'The URL is not valid (bad percent-encoding)']);

/** A reason the answer is not listed for `method path` in `document`, or undefined when it is. */
export function unlistedAnswer(document: any, method: string, path: string, status: number, body: unknown): string | undefined {
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === 'string' && BEFORE_ROUTING.has(detail)) return undefined;
  const responses = document.paths?.[path]?.[method.toLowerCase()]?.responses ?? {};
  const answer = responses[String(status)];
  if (!answer) return `${status} is not listed`;
  const code = detail && typeof detail === 'object' && !Array.isArray(detail) ? (detail as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && !String(answer.description ?? '').includes(`\`${code}\``)) return `${status} ${code} is not listed`;
  return undefined;
}

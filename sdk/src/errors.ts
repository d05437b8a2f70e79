/**
 * The SDK's errors: every failure is a typed exception a caller can branch on, never a silent
 * drop or a promise that hangs. HTTP errors carry the server's `{detail: {code, message}}` (or the
 * 422 list); render-socket failures carry the close code or the refusing `error` event.
 */

/** One item of a 422 validation answer (the FastAPI HTTPValidationError shape). */
export interface ValidationIssue {
  type: string;
  /** Where: e.g. ["body", "agent_id"]. */
  loc: Array<string | number>;
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/** The `detail` of an error answer, normalised: the server's code and message. */
export interface ErrorDetail {
  /** The server's code (e.g. `agent_not_found`); `validation_error` for a 422 list; `http_<status>` when the server said only a sentence. */
  code: string;
  message: string;
}

/** A REST call answered with a status outside 2xx. */
export class PresenceApiError extends Error {
  override readonly name = 'PresenceApiError';
  /** The HTTP status. */
  readonly status: number;
  /** The server's code and message. */
  readonly detail: ErrorDetail;
  /** A 422's list of what was wrong, field by field (empty otherwise). */
  readonly errors: ValidationIssue[];
  /** The body as the server sent it. */
  readonly body: unknown;
  /** The method and path called (no query string). */
  readonly request: string;

  constructor(status: number, body: unknown, request: string) {
    const { detail, errors } = normaliseDetail(status, body);
    super(`${request} answered ${status} ${detail.code}: ${detail.message}`);
    this.status = status;
    this.detail = detail;
    this.errors = errors;
    this.body = body;
    this.request = request;
  }

  /** Shorthand for `detail.code`. */
  get code(): string {
    return this.detail.code;
  }
}

function normaliseDetail(status: number, body: unknown): { detail: ErrorDetail; errors: ValidationIssue[] } {
  const raw = body && typeof body === 'object' ? (body as { detail?: unknown }).detail : undefined;
  if (Array.isArray(raw)) {
    const errors = raw as ValidationIssue[];
    const message = errors.map((e) => `${(e.loc ?? []).join('.')}: ${e.msg}`).join('; ') || 'invalid request';
    return { detail: { code: 'validation_error', message }, errors };
  }
  if (raw && typeof raw === 'object' && typeof (raw as ErrorDetail).code === 'string') {
    const { code, message } = raw as ErrorDetail;
    return { detail: { code, message: String(message ?? code) }, errors: [] };
  }
  if (typeof raw === 'string') return { detail: { code: `http_${status}`, message: raw }, errors: [] };
  return { detail: { code: `http_${status}`, message: typeof body === 'string' && body ? body.slice(0, 500) : `HTTP ${status}` }, errors: [] };
}

/** The render socket closed (or was refused) while calls were waiting on it. */
export class RenderSocketClosedError extends Error {
  override readonly name = 'RenderSocketClosedError';
  constructor(
    /** The WebSocket close code (e.g. 4003 bad token, 4001 session ended, 1012 server restart; 1006 no close frame). */
    readonly code: number,
    readonly reason: string,
    /** True when the session will try to reconnect (the call itself is not retried). */
    readonly willReconnect = false,
  ) {
    super(`render socket closed (${code}${reason ? `: ${reason}` : ''})${willReconnect ? '; reconnecting' : ''}`);
  }
}

/** The render socket did not say `connected` within the connect timeout. */
export class RenderConnectTimeoutError extends Error {
  override readonly name = 'RenderConnectTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`render socket did not connect within ${timeoutMs} ms`);
  }
}

/** The server refused a command with an `error` event (other than a `queue_full` the SDK waits out). */
export class RenderCommandError extends Error {
  override readonly name = 'RenderCommandError';
  constructor(
    /** `invalid_request_error`, `queue_full`, `tts_error` or `stage_error`. */
    readonly type: string,
    message: string,
    /** The event_id of the refused command. */
    readonly sourceEventId?: string,
  ) {
    super(`${type}: ${message}`);
  }
}

/** A speak()/speakText() call dropped by interrupt() before all of it was accepted. */
export class SpeakInterruptedError extends Error {
  override readonly name = 'SpeakInterruptedError';
  constructor(readonly utteranceId: string) {
    super(`utterance ${utteranceId} was interrupted before it was all sent`);
  }
}

/** The server did not answer a command within the acknowledgement timeout. */
export class RenderAckTimeoutError extends Error {
  override readonly name = 'RenderAckTimeoutError';
  constructor(
    readonly commandType: string,
    readonly timeoutMs: number,
  ) {
    super(`${commandType} was not acknowledged within ${timeoutMs} ms`);
  }
}

/**
 * The one error type that leaves the speech layer. The render protocol turns it into a `tts_error`
 * event; `code` says what went wrong without leaking provider internals (never a key).
 */
import { errorCatalogue } from '../core/errors.js';
export type SpeechErrorCode =
  | 'unknown_provider'
  | 'unknown_voice'
  | 'not_configured'
  | 'auth_failed'
  | 'bad_request'
  | 'rate_limited'
  | 'provider_error'
  | 'provider_unavailable'
  | 'timeout'
  | 'engine_failed'
  | 'aborted';

export class SpeechError extends Error {
  readonly name = 'SpeechError';
  constructor(
    readonly code: SpeechErrorCode,
    message: string,
    readonly provider?: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Maps an HTTP status from a provider onto a SpeechError code. */
export function codeForStatus(status: number): SpeechErrorCode {
  if (status === 401 || status === 403) return 'auth_failed';
  if (status === 429) return 'rate_limited';
  if (status === 400 || status === 404 || status === 422) return 'bad_request';
  if (status >= 500) return 'provider_unavailable';
  return 'provider_error';
}

export function isAbort(error: unknown): boolean {
  return (error instanceof SpeechError && error.code === 'aborted') || (error instanceof Error && error.name === 'AbortError');
}

/** Throws SpeechError('aborted') when the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new SpeechError('aborted', 'synthesis was cancelled');
}

/** The errors the speech capability answers with (code, HTTP status, message); see `errorCatalogue`. */
export const speechErrors = errorCatalogue('speech', {
  tts_error: { status: 502, summary: 'The … voice could not be synthesised: …' },
  unknown_provider: { status: 404, summary: 'Unknown voice provider "…". Known providers: ….' },
  unknown_voice: { status: 404, summary: 'Provider "…" has no voice "…".' },
});

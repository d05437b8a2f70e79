/**
 * What the premium providers' WebSocket clients share (word timings for lip-sync, no per-sentence
 * HTTP setup): socket failures and silence as SpeechError exactly as for the HTTP clients (each
 * socket's messages reach its reader through core's AsyncQueue, read with an idle timeout).
 */
import { SpeechError, codeForStatus } from '../errors.js';

/** A silent provider: nothing arrived on its socket within `timeoutMs` (for `AsyncQueue.nextWithin`). */
export function silentProvider(provider: string, timeoutMs: number): () => SpeechError {
  return () => new SpeechError('timeout', `${provider} sent nothing for ${timeoutMs} ms`, provider);
}

export function socketError(provider: string, error: Error & { code?: string }): SpeechError {
  const status = /Unexpected server response: (\d+)/.exec(error.message)?.[1];
  if (status) return new SpeechError(codeForStatus(Number(status)), `${provider} refused the WebSocket: HTTP ${status}`, provider, Number(status));
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET'].includes(error.code ?? '')) {
    return new SpeechError('provider_unavailable', `${provider} is unreachable (${error.code})`, provider);
  }
  return new SpeechError('provider_error', `${provider} WebSocket failed: ${error.message}`, provider);
}

export function wsUrl(base: string, path: string): string {
  return base.replace(/^http/, 'ws').replace(/\/+$/, '') + path;
}

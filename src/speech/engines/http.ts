/** Shared plumbing for provider HTTP clients: timeouts, abort, typed errors, streamed bodies. */
import { SpeechError, codeForStatus } from '../errors.js';

export interface HttpOptions {
  /** Time allowed until response headers arrive, and between two body pieces. */
  timeoutMs: number;
}

/** fetch with the caller's abort signal plus a connect/idle timeout, errors mapped to SpeechError. */
export async function providerFetch(provider: string, url: string, init: RequestInit, signal: AbortSignal, timeoutMs: number): Promise<Response> {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => controller.abort(new SpeechError('timeout', `${provider} did not answer within ${timeoutMs} ms`, provider)), timeoutMs);
  try {
    const response = await fetch(url, { ...init, signal: controller.signal });
    if (!response.ok) {
      const body = (await response.text().catch(() => '')).slice(0, 300).replace(/\s+/g, ' ');
      throw new SpeechError(
        codeForStatus(response.status),
        `${provider} answered HTTP ${response.status}${body ? `: ${body}` : ''}`,
        provider,
        response.status,
      );
    }
    return response;
  } catch (error) {
    throw toSpeechError(provider, error, signal, controller.signal);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

export function toSpeechError(provider: string, error: unknown, callerSignal: AbortSignal, ownSignal?: AbortSignal): SpeechError {
  if (error instanceof SpeechError) return error;
  if (callerSignal.aborted) return new SpeechError('aborted', 'synthesis was cancelled', provider);
  if (ownSignal?.aborted && ownSignal.reason instanceof SpeechError) return ownSignal.reason;
  const cause = (error as { cause?: { code?: string } })?.cause;
  const code = cause?.code ?? (error as { code?: string })?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') {
    return new SpeechError('provider_unavailable', `${provider} is unreachable (${code})`, provider, undefined, { cause: error });
  }
  return new SpeechError('provider_error', `${provider} request failed: ${(error as Error)?.message ?? String(error)}`, provider, undefined, { cause: error });
}

/**
 * Reads a streamed body piece by piece; a gap longer than timeoutMs between pieces is a timeout.
 * Aborting the caller's signal cancels the body at once.
 */
export async function* readBody(provider: string, response: Response, signal: AbortSignal, timeoutMs: number): AsyncIterable<Uint8Array> {
  if (!response.body) return;
  const reader = response.body.getReader();
  const onAbort = () => void reader.cancel().catch(() => {});
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new SpeechError('timeout', `${provider} stalled for ${timeoutMs} ms mid-stream`, provider)), timeoutMs);
      });
      let result: ReadableStreamReadResult<Uint8Array>;
      try {
        result = await Promise.race([reader.read(), timeout]);
      } catch (error) {
        throw toSpeechError(provider, error, signal);
      } finally {
        clearTimeout(timer);
      }
      if (signal.aborted) throw new SpeechError('aborted', 'synthesis was cancelled', provider);
      if (result.done) return;
      if (result.value?.length) yield result.value;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    reader.cancel().catch(() => {});
  }
}

/** Re-chunks a byte stream of s16le into Int16Array pieces, holding an odd byte for the next piece. */
export async function* pcmFromBytes(bytes: AsyncIterable<Uint8Array>): AsyncIterable<Int16Array> {
  let carry: Uint8Array | undefined;
  for await (const piece of bytes) {
    let data = piece;
    if (carry) {
      data = new Uint8Array(carry.length + piece.length);
      data.set(carry);
      data.set(piece, carry.length);
      carry = undefined;
    }
    const even = data.length - (data.length % 2);
    if (data.length % 2) carry = data.slice(even);
    if (even) {
      const copy = data.slice(0, even);
      yield new Int16Array(copy.buffer, copy.byteOffset, even / 2);
    }
  }
}

/** Splits a byte stream into text lines (NDJSON). */
export async function* lines(bytes: AsyncIterable<Uint8Array>): AsyncIterable<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const piece of bytes) {
    buffer += decoder.decode(piece, { stream: true });
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (line) yield line;
    }
  }
  buffer += decoder.decode();
  if (buffer.trim()) yield buffer.trim();
}

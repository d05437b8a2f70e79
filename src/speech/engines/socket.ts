/**
 * What the premium providers' WebSocket clients share (word timings for lip-sync, no per-sentence
 * HTTP setup): an inbox read by one generator with an idle timeout, and socket failures as
 * SpeechError exactly as for the HTTP clients.
 */
import { SpeechError, codeForStatus } from '../errors.js';

/** A queue fed by socket events, read by one async generator, with an idle timeout. */
export class Inbox<T> {
  private items: T[] = [];
  private error: SpeechError | undefined;
  private ended = false;
  private wake: (() => void) | undefined;

  push(item: T) {
    this.items.push(item);
    this.poke();
  }
  fail(error: SpeechError) {
    this.error ??= error;
    this.poke();
  }
  end() {
    this.ended = true;
    this.poke();
  }
  private poke() {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
  async next(timeoutMs: number, provider: string): Promise<T | undefined> {
    for (;;) {
      if (this.items.length) return this.items.shift();
      if (this.error) throw this.error;
      if (this.ended) return undefined;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await new Promise<boolean>((resolve) => {
        this.wake = () => resolve(false);
        timer = setTimeout(() => resolve(true), timeoutMs);
      });
      clearTimeout(timer);
      if (timedOut) throw new SpeechError('timeout', `${provider} sent nothing for ${timeoutMs} ms`, provider);
    }
  }
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

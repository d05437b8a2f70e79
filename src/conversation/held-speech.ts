/** An answer's first audio voiced ahead of the end of the visitor's turn and held (preemptive generation). */
import type { Speaker } from '../realtime/session.js';
import type { SpeechPiece } from '../speech/piece.js';

/**
 * The first audio of an answer prepared ahead, voiced and held out of the real-time path (so the
 * playback clock, the page, captions and the render caller see nothing of it). `speaker()` gives a
 * speaker for the committed utterance that yields what was held and then carries on with the same
 * synthesis; `abort()` throws it away. Only the first piece is pulled ahead: the speech layer works
 * at most two sentences ahead of what is taken, so little is voiced for an answer thrown away.
 */
export class HeldSpeech {
  private readonly controller = new AbortController();
  private readonly iterator: AsyncIterator<SpeechPiece>;
  private readonly held: SpeechPiece[] = [];
  private first: Promise<void>;
  private ended = false;
  private failure: unknown;
  private taken = false;
  readonly startedAt = performance.now();
  readyAt?: number;

  constructor(speaker: Speaker, text: AsyncIterable<string>, sampleRate: number) {
    this.iterator = speaker({ text, sampleRate, signal: this.controller.signal })[Symbol.asyncIterator]();
    this.first = this.iterator.next().then(
      (result) => {
        this.readyAt = performance.now();
        if (result.done) this.ended = true;
        else this.held.push(result.value);
      },
      (error) => {
        this.readyAt = performance.now();
        this.ended = true;
        this.failure = error ?? new Error('speech failed');
      },
    );
  }

  /** The committed utterance's speaker (once): the held audio first, then the rest as it is voiced. */
  speaker(): Speaker {
    return (request) => {
      if (this.taken) throw new Error('held speech taken twice');
      this.taken = true;
      const self = this;
      const onAbort = () => self.controller.abort();
      if (request.signal.aborted) onAbort();
      else request.signal.addEventListener('abort', onAbort, { once: true });
      return (async function* () {
        try {
          await self.first;
          yield* self.held.splice(0);
          if (self.failure) throw self.failure;
          if (self.ended) return;
          for (;;) {
            const next = await self.iterator.next();
            if (next.done) return;
            yield next.value;
          }
        } finally {
          request.signal.removeEventListener('abort', onAbort);
          if (!self.ended) void self.iterator.return?.().catch(() => {});
        }
      })();
    };
  }

  abort(): void {
    this.controller.abort();
    void this.first.then(() => this.iterator.return?.()).catch(() => {});
  }
}

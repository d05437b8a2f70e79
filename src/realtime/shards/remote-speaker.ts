/**
 * A shard's voice for agent.speak_text: the text goes to the main process, which owns the speech
 * engines and the billing of premium speech, and the PCM pieces come back over the IPC channel.
 */
import type { Speaker } from '../session.js';
import type { SpeechPiece } from '../../speech/piece.js';
import type { SpeakerFactory } from '../service.js';
import type { FromShard, ToShard } from './messages.js';
import { AsyncQueue } from '../../core/async-queue.js';

type SpeechMessage = Extract<ToShard, { type: 'speech' }>;

export class RemoteSpeech {
  private next = 1;
  private readonly waiting = new Map<number, (message: SpeechMessage) => void>();

  constructor(private readonly send: (message: FromShard) => void) {}

  /** A speech message from the main process, for the request it answers. */
  deliver(message: SpeechMessage): void {
    this.waiting.get(message.id)?.(message);
  }

  factory(): SpeakerFactory {
    return (voice) =>
      ({ text, sampleRate, signal }) =>
        this.request(voice, text, sampleRate, signal);
  }

  private async *request(
    voice: Parameters<SpeakerFactory>[0],
    text: string | AsyncIterable<string>,
    sampleRate: number,
    signal: AbortSignal,
  ): AsyncIterable<SpeechPiece> {
    if (typeof text !== 'string') throw new Error('a shard voices whole texts only (streamed answers are conversation mode, which runs in the main process)');
    const id = this.next++;
    // Bounded by the text: speak_text takes at most MAX_QUEUED_TEXT_CHARS, and the session reads
    // pieces as they come (it queues them for the clock at once).
    const queue = new AsyncQueue<SpeechMessage>();
    this.waiting.set(id, (message) => queue.push(message));
    let stop: () => void = () => {};
    const aborted = new Promise<void>((resolve) => (stop = resolve));
    const abort = () => {
      this.send({ type: 'speak_abort', id });
      stop();
    };
    signal.addEventListener('abort', abort, { once: true });
    try {
      this.send({ type: 'speak', id, voice, text, sampleRate });
      for (;;) {
        if (signal.aborted) return;
        const message = await queue.next(aborted);
        if (!message || signal.aborted) return;
        if (message.error) throw new Error(message.error);
        if (message.done) return;
        if (message.piece) yield message.piece;
      }
    } finally {
      signal.removeEventListener('abort', abort);
      this.waiting.delete(id);
    }
  }
}

/**
 * The text of an answer as it streams, handed to the speech layer: an async iterable of text
 * pieces that the speech layer reads sentence by sentence.
 */

/** Text that ends like a sentence (the speech layer cuts a sentence only once white space follows). */
const SENTENCE_END = /[.!?…。！？]["'”’)\]»」』]*$/;
/** A pause this long after a sentence's last mark means the sentence is complete: voice it now. */
const SENTENCE_PAUSE_MS = 120;

/**
 * An async iterable of text pieces fed as an answer streams (speech reads it sentence by sentence).
 * A piece that ends a sentence and is not followed by more text soon gets the white space the
 * speech layer waits for, so a model that pauses after its first sentence is heard at once.
 */
export class TextPipe implements AsyncIterable<string> {
  private readonly pieces: string[] = [];
  private closed = false;
  private wake?: () => void;
  private pause?: NodeJS.Timeout;

  push(text: string): void {
    if (this.closed || !text) return;
    this.pieces.push(text);
    if (this.pause) clearTimeout(this.pause);
    this.pause = SENTENCE_END.test(text) ? setTimeout(() => this.push(' '), SENTENCE_PAUSE_MS) : undefined;
    this.wake?.();
  }

  close(): void {
    if (this.pause) clearTimeout(this.pause);
    this.closed = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    for (;;) {
      if (this.pieces.length) {
        yield this.pieces.splice(0).join('');
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

/** A text known whole (welcome, goodbye) as the same kind of stream. */
export async function* once(text: string): AsyncIterable<string> {
  yield text;
}

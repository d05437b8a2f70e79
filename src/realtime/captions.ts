/**
 * Captions read as the text was written. A speech engine reports the words it says without their
 * punctuation ("Hello world" for "Hello, world!"), and may say a word differently from how it is
 * written ("forty two" for "42"). The aligner follows the engine's words through the original text
 * and gives each piece of audio the stretch of text it covers, punctuation included.
 */
export class CaptionAligner {
  private text = '';
  private lower = '';
  /** Where the next piece's caption starts in the text. */
  private cursor = 0;

  constructor(text = '') {
    this.append(text);
  }

  /** More of the text (an answer streamed from a language model arrives in parts). */
  append(part: string): void {
    this.text += part;
    this.lower = this.text.toLowerCase();
  }

  /**
   * The caption of the next piece, whose engine words are `words`: from where the last piece
   * ended to the end of its last word found in the text, with the punctuation that follows it.
   * Words the text does not contain (spoken forms) are skipped; a piece none of whose words are
   * found gets its words joined, as the engine said them.
   */
  next(words: readonly string[]): string | undefined {
    if (!words.length) return undefined;
    let end = -1;
    let searchFrom = this.cursor;
    for (const word of words) {
      const found = word ? this.lower.indexOf(word.toLowerCase(), searchFrom) : -1;
      if (found < 0) continue;
      end = found + word.length;
      searchFrom = end;
    }
    if (end < 0) return words.join(' ');
    // The punctuation (and closing quotes or brackets) right after the last word belongs to it.
    while (end < this.text.length && !/\s/.test(this.text[end]!) && !/[\p{L}\p{N}]/u.test(this.text[end]!)) end++;
    const caption = this.text.slice(this.cursor, end).trim();
    this.cursor = end;
    return caption || words.join(' ');
  }
}

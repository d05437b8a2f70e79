/**
 * Expression tags inside agent.speak_text: `[smile]`, `[surprised 0.6]`, `[thinking:0.4]`.
 * A tag selects an expression from that point of the speech and is never spoken. Square-bracketed
 * text that is not a known cue is dropped from speech too (it was meant for the face, not the voice).
 */
import { CUES, type Cue } from './protocol.js';

export interface TaggedText {
  /** The text to voice, tags removed. */
  spoken: string;
  /** Each tag with the character offset in `spoken` where it applies. */
  tags: Array<{ cue: Cue; intensity: number; offset: number }>;
  unknown: string[];
}

const TAG = /\[\s*([a-zA-Z_]+)(?:\s*[:\s]\s*([01](?:\.\d+)?))?\s*\]/g;
const cueSet = new Set<string>(CUES);

export function parseExpressionTags(text: string): TaggedText {
  const tags: TaggedText['tags'] = [];
  const unknown: string[] = [];
  let spoken = '';
  // Whitespace is collapsed as the text is joined, so each tag's offset points into the final text.
  const append = (segment: string) => {
    let s = segment.replace(/\s+/g, ' ');
    if (!spoken || spoken.endsWith(' ')) s = s.replace(/^ /, '');
    spoken += s;
  };
  let last = 0;
  for (const match of text.matchAll(TAG)) {
    append(text.slice(last, match.index));
    last = match.index! + match[0].length;
    const name = match[1].toLowerCase();
    if (cueSet.has(name)) tags.push({ cue: name as Cue, intensity: match[2] ? Number(match[2]) : 0.8, offset: spoken.length });
    else unknown.push(name);
  }
  append(text.slice(last));
  spoken = spoken.trimEnd();
  for (const tag of tags) tag.offset = Math.min(tag.offset, spoken.length);
  return { spoken, tags, unknown };
}

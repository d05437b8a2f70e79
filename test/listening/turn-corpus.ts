/**
 * The cut-off corpus (corpus/turn-taking.json, where the labels and how they were made are told)
 * built from the installed recordings, and a replay that runs real listeners over it: Silero VAD,
 * the end-of-turn rule, live pocketsphinx words, in real time (the live decoder's words arrive when
 * they would for a visitor). Several listeners with different end-of-turn options hear the same
 * audio side by side, so "before" and "after" see the same machine load.
 *
 * For each labelled pause: a turn taken during a "still talking" pause is an early turn-taking (a
 * cut-off); at a "turn over" point, the wait is from the end of the last word (the audio's) to the
 * turn being decided, or the whole pause when the listener let it pass.
 */
import fs from 'node:fs';
import { VisitorListener, type ListenerOptions } from '../../src/conversation/listening/index.js';
import { PocketsphinxRecognizer } from '../../src/speech/recognition/pocketsphinx.js';
import type { Recognizer } from '../../src/speech/recognition/types.js';
import { cards, concat, jfk, librivox, silence, speechSpan, type Recording } from '../recognition/recordings.js';

export type Judgement = 'still talking' | 'turn over';

export interface LabelledPause {
  /** Audio time (ms from the item's start) of the last word before the pause, and of the speech after it (or the audio's end). */
  fromMs: number;
  toMs: number;
  judgement: Judgement;
  why: string;
}

export interface CorpusItem {
  id: string;
  pcm: Int16Array;
  pauses: LabelledPause[];
  text: string;
}

interface Labels {
  insertedPauseMs: number;
  joinPauseMs: number;
  tailMs: number;
  items: Array<{ id: string; clips: string[]; cutsMs?: number[]; naturalPausesMs?: Array<[number, number]>; text: string }>;
}

const LABELS = new URL('./corpus/turn-taking.json', import.meta.url);

/** The quietest 10 ms within 50 ms of `ms` (a word boundary from the decoder's word times). */
function quietest(pcm: Int16Array, ms: number): number {
  let best = ms;
  let bestEnergy = Number.POSITIVE_INFINITY;
  for (let at = ms - 50; at <= ms + 50; at += 5) {
    let e = 0;
    for (let i = Math.max(0, at * 16 - 80); i < Math.min(pcm.length, at * 16 + 80); i++) e += pcm[i] * pcm[i];
    if (e < bestEnergy) {
      bestEnergy = e;
      best = at;
    }
  }
  return best;
}

/** The corpus, or undefined when a recording is missing (pocketsphinx-testdata not installed, jfk.wav not fetched). */
export function turnCorpus(): CorpusItem[] | undefined {
  const labels = JSON.parse(fs.readFileSync(LABELS, 'utf8')) as Labels;
  const recordings = new Map<string, Recording>();
  try {
    for (const r of [...librivox(), ...cards()]) recordings.set(r.name, r);
  } catch {
    return undefined;
  }
  const j = jfk();
  if (j) recordings.set(j.name, j);
  const items: CorpusItem[] = [];
  for (const item of labels.items) {
    const clips = item.clips.map((name) => recordings.get(name));
    if (clips.some((c) => !c)) return undefined;
    const parts: Int16Array[] = [];
    const pauses: LabelledPause[] = [];
    let at = 0;
    const add = (pcm: Int16Array) => {
      parts.push(pcm);
      at += (pcm.length * 1000) / 16000;
    };
    clips.forEach((clip, k) => {
      const pcm = clip!.pcm;
      const offset = at;
      if (k > 0) {
        // A finished sentence, then a pause: the previous clip's last word to this clip's first.
        const previous = pauses.pop()!;
        const span = speechSpan(pcm);
        pauses.push({ ...previous, toMs: offset + span.startMs, why: 'a finished sentence, then a pause before the next' });
      }
      const cuts = (item.cutsMs ?? []).map((ms) => quietest(pcm, ms));
      let from = 0;
      for (const cut of cuts) {
        const piece = pcm.subarray(from * 16, cut * 16);
        const lastWord = at + speechSpan(piece).endMs;
        add(piece);
        add(silence(labels.insertedPauseMs));
        const next = pcm.subarray(cut * 16);
        pauses.push({ fromMs: lastWord, toMs: at + speechSpan(next).startMs, judgement: 'still talking', why: `cut at ${cut} ms, mid-sentence` });
        from = cut;
      }
      const rest = pcm.subarray(from * 16);
      const restStart = at;
      add(rest);
      for (const [a, b] of item.naturalPausesMs ?? [])
        pauses.push({ fromMs: offset + a, toMs: offset + b, judgement: 'still talking', why: 'a natural pause mid-sentence' });
      const end = restStart + speechSpan(rest).endMs;
      const tail = k === clips.length - 1 ? labels.tailMs : labels.joinPauseMs;
      add(silence(tail));
      pauses.push({ fromMs: end, toMs: at, judgement: 'turn over', why: k === clips.length - 1 ? 'the end' : '' });
    });
    items.push({ id: item.id, pcm: concat(...parts), pauses: pauses.sort((a, b) => a.fromMs - b.fromMs), text: item.text });
  }
  return items;
}

export interface PauseOutcome {
  item: string;
  pause: LabelledPause;
  /** Turns the listener decided during the pause (ms after its start), before the speech after it. */
  takenAfterMs?: number;
}

export interface ReplayResult {
  outcomes: PauseOutcome[];
  /** Turns taken during "still talking" pauses. */
  early: number;
  stillTalking: number;
  /** Waits at "turn over" points where the turn was taken (ms from the last word). */
  waits: number[];
  /** "Turn over" points the listener let pass. */
  missed: number;
  turnOver: number;
  errors: string[];
}

/** A turn decided up to this long after the speech resumed still fell in the pause (the VAD sees the voice a frame or two late). */
const RESUME_SLACK_MS = 100;

/**
 * Plays each item in real time to one fresh listener per set of options (a fresh visitor: the
 * silence learnt from one item's pauses does not carry to the next), all side by side.
 */
export async function replayCorpus(
  items: CorpusItem[],
  variants: ListenerOptions[],
  onItem?: (id: string) => void,
  recognizer: Recognizer = new PocketsphinxRecognizer(undefined, 2 * variants.length),
): Promise<ReplayResult[]> {
  const results: ReplayResult[] = variants.map(() => ({ outcomes: [], early: 0, stillTalking: 0, waits: [], missed: 0, turnOver: 0, errors: [] }));
  for (const item of items) {
    const t0 = performance.now();
    const decided: number[][] = variants.map(() => []);
    const listeners = variants.map(
      (options, v) =>
        new VisitorListener(
          recognizer,
          {
            turn: () => {},
            turnEnded: () => decided[v].push(performance.now() - t0),
            error: (e) => results[v].errors.push(`${item.id}: ${e.message}`),
          },
          // The end of turn is decided on the audio's clock: a frame's time, not when the VAD got to it.
          {
            ...options,
            now: () => performance.now() - t0,
          },
        ),
    );
    await Promise.all(listeners.map((l) => l.idle()));
    const start = performance.now();
    const t1 = start - t0;
    for (let i = 0; i < item.pcm.length; i += 320) {
      const wait = start + (i * 1000) / 16000 + 20 - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const piece = item.pcm.subarray(i, Math.min(item.pcm.length, i + 320));
      const now = performance.now() - t0;
      for (const l of listeners) l.push(piece, now);
    }
    await Promise.all(listeners.map((l) => l.idle()));
    for (const l of listeners) l.close();
    onItem?.(item.id);
    variants.forEach((_, v) => {
      const r = results[v];
      const ends = decided[v].map((ms) => ms - t1);
      for (const pause of item.pauses) {
        const inside = ends.find((ms) => ms > pause.fromMs && ms <= pause.toMs + (pause.judgement === 'still talking' ? RESUME_SLACK_MS : 0));
        const outcome: PauseOutcome = { item: item.id, pause, ...(inside !== undefined && { takenAfterMs: inside - pause.fromMs }) };
        r.outcomes.push(outcome);
        if (pause.judgement === 'still talking') {
          r.stillTalking++;
          if (inside !== undefined) r.early++;
        } else {
          r.turnOver++;
          if (inside === undefined) r.missed++;
          else r.waits.push(inside - pause.fromMs);
        }
      }
    });
  }
  await recognizer.close();
  return results;
}

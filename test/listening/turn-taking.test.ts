// @timed: the listeners hear the recordings in real time, side by side, and their waits are compared
/**
 * Turn-taking on the cut-off corpus (corpus/turn-taking.json): recordings no one here wrote, with
 * pauses where the speaker goes on and points where the turn is over. Real listeners (Silero VAD,
 * live pocketsphinx, the end-of-turn rule) hear part of it in real time side by side: the rule before
 * pitch (silence and words) and the shipped one (words, pitch and silence). The figures over the
 * whole corpus are in bench/README.md ("Turn-taking on the cut-off corpus").
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { PITCH_OFF } from '../../src/conversation/listening/end-of-turn.js';
import { replayCorpus, turnCorpus } from './turn-corpus.js';

const BEFORE = { endOfTurn: PITCH_OFF };

test('the labels are whole: every item ends with "turn over", pauses lie inside the audio and in order', () => {
  const labels = JSON.parse(fs.readFileSync(new URL('./corpus/turn-taking.json', import.meta.url), 'utf8'));
  assert.ok(labels.items.length >= 10);
  const corpus = turnCorpus();
  if (!corpus) return; // the recordings are not installed: the labels file alone was checked
  for (const item of corpus) {
    const ms = (item.pcm.length * 1000) / 16000;
    assert.equal(item.pauses.at(-1)!.judgement, 'turn over', item.id);
    for (const [k, p] of item.pauses.entries()) {
      assert.ok(p.fromMs > 0 && p.fromMs < p.toMs && p.toMs <= ms + 1, `${item.id}: pause ${k} ${p.fromMs}–${p.toMs} of ${ms}`);
      if (k > 0) assert.ok(p.fromMs >= item.pauses[k - 1].toMs - 1, `${item.id}: pauses overlap`);
    }
  }
  const still = corpus.flatMap((i) => i.pauses).filter((p) => p.judgement === 'still talking');
  assert.ok(still.length >= 12, `${still.length} mid-sentence pauses`);
});

const corpus = turnCorpus();

test('words, pitch and pause together: no more cut-offs than silence and words alone, and falling and rising ends taken sooner', {
  skip: !corpus && 'pocketsphinx-testdata (or jfk.wav) is not installed',
  timeout: 300_000,
}, async () => {
  const pick = ['cards-005', 'lv-0920', 'jfk', 'cards-002', 'lv-0880+0930'];
  const items = corpus!.filter((i) => pick.includes(i.id));
  assert.equal(items.length, pick.length);
  const [before, after] = await replayCorpus(items, [BEFORE, {}]);
  assert.deepEqual(after.errors, []);
  assert.deepEqual(before.errors, []);
  assert.ok(before.stillTalking >= 7);
  // The measure itself: the rule before pitch takes the turn in thinking pauses of 700 ms.
  assert.ok(before.early >= 3, `before: ${before.early} cut-offs of ${before.stillTalking}`);
  assert.ok(after.early <= before.early, `after: ${after.early} cut-offs, before: ${before.early}`);
  // Every turn that was over was taken, before and after.
  assert.equal(before.missed, 0);
  assert.equal(after.missed, 0);
  // The card names and the speech end on a falling pitch, and the first LibriVox sentence of
  // lv-0880+0930 on a rising one: taken sooner than the rule before it took them (the same audio,
  // side by side, so the same load).
  const waitAt = (r: typeof after, id: string) => r.outcomes.find((o) => o.item === id && o.pause.judgement === 'turn over')!.takenAfterMs!;
  for (const id of ['cards-005', 'cards-002', 'jfk', 'lv-0880+0930']) {
    assert.ok(waitAt(after, id) < waitAt(before, id), `${id}: ${waitAt(after, id)} ms after, ${waitAt(before, id)} ms before`);
  }
});

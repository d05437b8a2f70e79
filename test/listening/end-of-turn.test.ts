/** The end-of-turn silence: the visitor's pauses move it, the words heard so far and the pitch at the end shorten or lengthen it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { completeness, END_OF_TURN_DEFAULTS, EndOfTurn, PITCH_OFF } from '../../src/conversation/listening/end-of-turn.js';
import { VisitorListener } from '../../src/conversation/listening/listener.js';
import type { VoiceActivityDetector } from '../../src/conversation/listening/vad.js';
import { PocketsphinxRecognizer } from '../../src/speech/recognition/pocketsphinx.js';

test('complete questions and sentences, hanging endings, and the rest', () => {
  assert.equal(completeness('Where is my order?'), 'complete');
  assert.equal(completeness('what are your opening hours'), 'complete');
  assert.equal(completeness('Ich möchte bestellen.'), 'complete');
  assert.equal(completeness('I would like the red one and'), 'hanging');
  assert.equal(completeness('so my question is um'), 'hanging');
  assert.equal(completeness('thanks a lot'), 'unknown');
  assert.equal(completeness(''), 'unknown');
  assert.equal(completeness(undefined), 'unknown');
});

test("the silence follows the visitor's pauses within its bounds", () => {
  const eot = new EndOfTurn();
  assert.equal(eot.silenceNeeded(), 600);
  for (let i = 0; i < 4; i++) eot.recordPause(650);
  assert.equal(eot.silenceNeeded(), 600, 'five pauses are needed before it moves');
  eot.recordPause(650);
  assert.equal(eot.silenceNeeded(), 800);
  for (let i = 0; i < 20; i++) eot.recordPause(2000);
  assert.equal(eot.silenceNeeded(), 900, 'never more than the bound');
  const brisk = new EndOfTurn();
  for (let i = 0; i < 10; i++) brisk.recordPause(200);
  assert.equal(brisk.silenceNeeded(), 500, 'never less than the bound');
  for (let i = 0; i < 10; i++) brisk.recordPause(100);
  assert.equal(brisk.silenceNeeded(), 500, 'gaps between words are not pauses');
  assert.equal(eot.silenceNeeded('Can you help me with that?'), 350);
  assert.equal(eot.silenceNeeded('I want to order the'), 1200);
});

test('words, pitch and pause together: words first, then a falling or level end moves the silence', () => {
  const eot = new EndOfTurn();
  assert.equal(eot.silenceNeeded(undefined, 'falling'), 350, 'a final fall yields the turn');
  assert.equal(eot.silenceNeeded(undefined, 'level'), 800, 'a plateau holds it');
  assert.equal(eot.silenceNeeded(undefined, 'rising'), 450, 'a rise is a question or a list: between a fall and no cue');
  assert.equal(eot.silenceNeeded(undefined, 'unknown'), 600);
  assert.equal(eot.silenceNeeded('so I went to the', 'falling'), 1200, 'a hanging word outweighs a falling pitch');
  assert.equal(eot.silenceNeeded('Where is my order?', 'level'), 350, 'a complete question outweighs a level pitch');
  for (let i = 0; i < 10; i++) eot.recordPause(900);
  assert.equal(eot.silenceNeeded(undefined, 'level'), 900, 'a visitor who pauses long waits longer still');
  assert.equal(eot.silenceNeeded(undefined, 'falling'), 350);
  assert.equal(eot.silenceNeeded(undefined, 'rising'), 450);
  assert.equal(eot.silenceNeeded('so I went to the', 'rising'), 1200, 'a hanging word outweighs a rising pitch');
  const before = new EndOfTurn({ ...END_OF_TURN_DEFAULTS, ...PITCH_OFF });
  assert.equal(before.silenceNeeded(undefined, 'falling'), 600, 'with pitch left out, the rule before it');
  assert.equal(before.silenceNeeded(undefined, 'level'), 600);
  assert.equal(before.silenceNeeded(undefined, 'rising'), 600);
});

test('frames waiting for a stalled VAD are capped at 3 s; the oldest are dropped', async () => {
  let release!: () => void;
  const stalled = new Promise<void>((r) => (release = r));
  const vad: VoiceActivityDetector = { probability: async () => (await stalled, 0), reset: () => {} };
  const listener = new VisitorListener(new PocketsphinxRecognizer(), { turn: () => {} }, { vad });
  for (let i = 0; i < 500; i++) listener.push(new Int16Array(320), i * 20); // 10 s
  const framesIn10s = Math.floor((500 * 320) / 512);
  await new Promise((r) => setImmediate(r));
  assert.ok(listener.framesDropped >= framesIn10s - Math.ceil(3000 / 32) - 1, `dropped ${listener.framesDropped}`);
  release();
  await listener.idle();
  listener.close();
});

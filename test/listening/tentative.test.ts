/**
 * The listener's tentative words (what preemptive generation prepares an answer from): told when
 * the recogniser has the turn's words during the visitor's pause, withdrawn when the visitor goes on
 * or the turn will not be reported, numbered like the turn that follows. A VAD that hears loud
 * frames as voice and recognisers whose words the test sets stand in for Silero and pocketsphinx.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VisitorListener } from '../../src/conversation/listening/index.js';
import type { TentativeTurn, VisitorTurnHeard } from '../../src/conversation/listening/types.js';
import type { RecognitionOptions, RecognitionStream, Recognizer, Transcript } from '../../src/speech/recognition/types.js';
import { loudnessVad } from '../support/loudness-vad.js';

const vad = loudnessVad;

class Stream implements RecognitionStream {
  onPartial?: (text: string) => void;
  final = '';
  push(): void {}
  finish(): Promise<Transcript> {
    return Promise.resolve({ text: this.final, language: 'en' });
  }
  abort(): void {}
}

function listen(recognizer: Recognizer) {
  const events: Array<{ type: 'tentative'; turn: TentativeTurn } | { type: 'dropped' } | { type: 'turn'; turn: VisitorTurnHeard }> = [];
  let clock = 0;
  const listener = new VisitorListener(
    recognizer,
    {
      tentative: (turn) => events.push({ type: 'tentative', turn }),
      tentativeDropped: () => events.push({ type: 'dropped' }),
      turn: (turn) => events.push({ type: 'turn', turn }),
    },
    { vad, now: () => clock },
  );
  async function mic(kind: 'voice' | 'silence', ms: number) {
    for (let done = 0; done < ms; done += 20) {
      clock += 20;
      listener.push(new Int16Array(320).fill(kind === 'voice' ? 8000 : 0), clock);
    }
    await listener.idle();
  }
  return { listener, events, mic };
}

function streaming() {
  const streams: Stream[] = [];
  const recognizer: Recognizer = {
    name: 'fake-stream',
    transcribe: async () => ({ text: '' }),
    stream: () => {
      const stream = new Stream();
      streams.push(stream);
      return stream;
    },
    close: async () => {},
  };
  return { recognizer, streams };
}

test('words closed during the pause are told as tentative, and the turn that follows carries the same number and words', async () => {
  const { recognizer, streams } = streaming();
  const { events, mic } = listen(recognizer);
  await mic('voice', 600);
  streams[0].onPartial!('I would like'); // a phrase closed while the visitor still speaks: not the end
  await mic('voice', 300);
  assert.equal(events.length, 0);
  await mic('silence', 260);
  streams[0].onPartial!('I would like a cake');
  streams[0].onPartial!('I would like a cake'); // the same words again: told once
  assert.equal(events.length, 1);
  const told = events[0];
  assert.ok(told.type === 'tentative');
  assert.equal(told.turn.text, 'I would like a cake');
  streams[0].final = 'I would like a cake';
  await mic('silence', 1000);
  assert.equal(events.length, 2);
  const turn = events[1];
  assert.ok(turn.type === 'turn');
  assert.equal(turn.turn.turn, told.turn.turn);
  assert.equal(turn.turn.text, told.turn.text);
  assert.equal(told.turn.speechEndedAt, turn.turn.timings.speechEndedAt);
});

test('the visitor speaking again withdraws the tentative words; so does a turn heard as nothing', async () => {
  const { recognizer, streams } = streaming();
  const { events, mic } = listen(recognizer);
  await mic('voice', 600);
  await mic('silence', 260);
  streams[0].onPartial!('what time');
  await mic('voice', 400);
  assert.deepEqual(
    events.map((e) => e.type),
    ['tentative', 'dropped'],
  );
  streams[0].final = 'what time do you close';
  await mic('silence', 1300);
  assert.deepEqual(
    events.map((e) => e.type),
    ['tentative', 'dropped', 'turn'],
  );

  // Next turn: tentative words, then the recogniser's final says nothing (noise): withdrawn, no turn.
  await mic('voice', 600);
  await mic('silence', 260);
  streams[1].onPartial!('hmm');
  streams[1].final = '';
  await mic('silence', 1300);
  assert.deepEqual(
    events.slice(3).map((e) => e.type),
    ['tentative', 'dropped'],
  );
  const [first, second] = events.filter((e) => e.type === 'tentative') as Array<{ turn: TentativeTurn }>;
  assert.ok(second.turn.turn > first.turn.turn, 'turns are numbered');
});

test('without a streaming engine, the speculative recognition of the pause gives the tentative words', async () => {
  const calls: RecognitionOptions[] = [];
  const recognizer: Recognizer = {
    name: 'fake-whole',
    transcribe: async (_pcm, options) => {
      calls.push(options);
      return { text: 'do you deliver', language: 'en' };
    },
    close: async () => {},
  };
  const { events, mic } = listen(recognizer);
  await mic('voice', 600);
  await mic('silence', 300); // the speculative recognition starts at 250 ms of silence
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(calls.length, 1);
  assert.deepEqual(
    events.map((e) => e.type),
    ['tentative'],
  );
  assert.ok(events[0].type === 'tentative' && events[0].turn.text === 'do you deliver' && events[0].turn.language === 'en');
  await mic('silence', 1000);
  assert.deepEqual(
    events.map((e) => e.type),
    ['tentative', 'turn'],
  );
  assert.equal(calls.length, 1, "the speculation was the turn's recognition");
});

/**
 * The listener on recorded speech (pocketsphinx-testdata) with the real Silero VAD and the real
 * pocketsphinx recogniser: end of turn, pauses inside a turn, barge-in, a short back-channel, the
 * agent's own echo, and the cap on a turn's audio. Audio is pushed in 20 ms chunks (what the player
 * page sends) on a virtual clock, faster than real time.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { PocketsphinxRecognizer } from '../../src/speech/recognition/pocketsphinx.js';
import type { RecognitionStream, Recognizer } from '../../src/speech/recognition/types.js';
import { wordErrorRate } from '../../src/speech/recognition/wer.js';
import { listen } from './support/listen.js';
import { concat, echoOf, librivox, mix, silence, speechSpan, testdataInstalled, type Recording } from '../recognition/recordings.js';

/** A quiet room's noise (about -47 dBFS peak), deterministic. */
function roomNoise(ms: number): Int16Array {
  let seed = 7;
  return Int16Array.from({ length: ms * 16 }, () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return ((seed / 0x7fffffff) * 2 - 1) * 150;
  });
}

describe('listener on recorded speech', { skip: !testdataInstalled() && 'pocketsphinx-testdata is not installed' }, () => {
  let clips: Recording[];
  before(() => {
    clips = librivox();
  });

  test('two sentences with a pause between them are two turns, each ended soon after its last word', async () => {
    const { listener, heard, play } = listen();
    const [a, b] = [clips[1], clips[4]]; // "he was not an ill disposed young man", "he might even have been made amiable himself"
    const lead = 500;
    const gap = 1500;
    await play(concat(silence(lead), a.pcm, silence(gap), b.pcm, silence(1500)));
    listener.close();
    assert.equal(heard.errors.length, 0, heard.errors.join('; '));
    assert.equal(heard.turns.length, 2, `turns: ${heard.turns.map((t) => t.text).join(' | ')}`);
    assert.ok(heard.started >= 2);
    const aEnd = 1000 + lead + speechSpan(a.pcm).endMs;
    const bEnd = 1000 + lead + a.pcm.length / 16 + gap + speechSpan(b.pcm).endMs;
    for (const [turn, end, clip] of [
      [heard.turns[0], aEnd, a],
      [heard.turns[1], bEnd, b],
    ] as const) {
      assert.ok(Math.abs(turn.timings.speechEndedAt - end) < 200, `speech ended at ${turn.timings.speechEndedAt}, the last word at ${end}`);
      const wait = turn.timings.turnEndedAt - turn.timings.speechEndedAt;
      assert.ok(wait >= 300 && wait <= 1000, `the turn ended ${wait} ms after the speech`);
      assert.ok(turn.timings.recognisedAt >= turn.timings.turnEndedAt);
      assert.equal(turn.engine, 'pocketsphinx');
      assert.equal(turn.language, 'en');
      assert.ok(turn.speechSeconds > 1 && turn.speechSeconds < clip.pcm.length / 16000 + 0.5, `speech seconds ${turn.speechSeconds}`);
      assert.ok(wordErrorRate(clip.text, turn.text) < 0.7, `heard "${turn.text}" for "${clip.text}"`);
    }
  });

  test('a 300 ms pause inside a turn does not end it', async () => {
    const { listener, heard, play } = listen();
    const speechOf = (pcm: Int16Array) => {
      const span = speechSpan(pcm);
      return pcm.slice(span.startMs * 16, span.endMs * 16);
    };
    await play(concat(silence(400), speechOf(clips[1].pcm), silence(300), speechOf(clips[4].pcm), silence(1500)));
    listener.close();
    assert.equal(heard.turns.length, 1, `turns: ${heard.turns.map((t) => t.text).join(' | ')}`);
    assert.ok(heard.turns[0].speechSeconds > 4);
  });

  test('the visitor speaking over the agent for long enough interrupts it, and the words become a turn', async () => {
    const { listener, heard, play } = listen();
    listener.setAgentTalking(true);
    // No echo reaches the microphone (headphones): only the visitor's voice.
    const visitor = clips[2];
    const lead = 600;
    await play(concat(silence(lead), visitor.pcm, silence(1200)), clips[0].pcm);
    listener.close();
    assert.equal(heard.bargeIns.length, 1);
    const voiceStart = 1000 + lead + speechSpan(visitor.pcm).startMs;
    const after = heard.bargeIns[0] - voiceStart;
    assert.ok(after >= 300 && after < 1200, `barge-in ${after} ms after the visitor started`);
    // The voice paused first (what the visitor hears stops), and stayed paused until the barge-in.
    assert.equal(heard.pauses.length, 1);
    assert.ok(heard.pauses[0] > voiceStart && heard.pauses[0] < heard.bargeIns[0], `paused at ${heard.pauses[0] - voiceStart} ms`);
    assert.equal(heard.resumes.length, 0);
    assert.equal(heard.turns.length, 1);
    assert.ok(wordErrorRate(visitor.text, heard.turns[0].text) < 0.8, heard.turns[0].text);
  });

  test('a short acknowledgement over the agent ("mm-hm") neither interrupts it nor becomes a turn', async () => {
    const { listener, heard, play } = listen();
    listener.setAgentTalking(true);
    // 250 ms of recorded voice: the length of an "mm-hm".
    const voice = clips[1].pcm;
    const start = (speechSpan(voice).startMs + 100) * 16;
    const ack = voice.slice(start, start + 250 * 16);
    await play(concat(silence(500), ack, silence(1500)), clips[0].pcm);
    listener.close();
    assert.equal(heard.bargeIns.length, 0);
    assert.equal(heard.turns.length, 0);
    // Any pause it caused was taken back.
    assert.equal(heard.resumes.length, heard.pauses.length);
  });

  test('"mm-hm" once the echo path is known pauses the agent, and the pause is taken back soon after it', async () => {
    const { listener, heard, play } = listen();
    listener.setAgentTalking(true);
    const voice = clips[1].pcm;
    const start = (speechSpan(voice).startMs + 100) * 16;
    const ack = voice.slice(start, start + 250 * 16);
    // 3 s of the agent talking with a quiet room at the microphone: the guard learns there is no echo.
    const lead = 3000;
    const agent = concat(clips[0].pcm, clips[3].pcm);
    await play(mix(roomNoise(lead + 2000), concat(silence(lead), ack)), agent);
    listener.close();
    assert.equal(heard.bargeIns.length, 0, 'interrupted');
    assert.equal(heard.turns.length, 0);
    assert.equal(heard.pauses.length, 1, 'not paused');
    assert.equal(heard.resumes.length, 1, 'not resumed');
    const ackStart = 1000 + lead;
    assert.ok(heard.pauses[0] > ackStart && heard.resumes[0] > heard.pauses[0]);
    // Resumed once the voice stopped (192 ms of silence), well before the back-channel itself is dropped.
    assert.ok(heard.resumes[0] < ackStart + 250 + 600, `resumed ${heard.resumes[0] - ackStart} ms after the sound began`);
  });

  for (const [delayMs, gain] of [
    [120, 0.5],
    [250, 0.3],
    [350, 0.8],
  ]) {
    test(`the agent's own voice leaking back (${delayMs} ms later, gain ${gain}) neither interrupts it nor becomes a turn`, async () => {
      const { listener, heard, play } = listen();
      listener.setAgentTalking(true);
      const agent = concat(clips[0].pcm, clips[3].pcm);
      const mic = echoOf(agent, gain, delayMs, agent.length + 16000);
      await play(mic, agent);
      listener.setAgentTalking(false);
      await play(silence(1500));
      listener.close();
      assert.equal(heard.bargeIns.length, 0, 'the echo interrupted the agent');
      assert.equal(heard.pauses.length, 0, 'the echo paused the agent');
      assert.equal(heard.turns.length, 0, `the echo became a turn: ${heard.turns.map((t) => t.text).join(' | ')}`);
    });
  }

  test('the visitor speaking over the echo of the agent still interrupts it', async () => {
    const { listener, heard, play } = listen();
    listener.setAgentTalking(true);
    const agent = concat(clips[0].pcm, clips[3].pcm);
    const echo = echoOf(agent, 0.5, 150, agent.length);
    // The visitor starts 4 s in, once the echo path is known.
    const visitor = concat(silence(4000), clips[2].pcm);
    await play(mix(echo, visitor), agent);
    listener.close();
    assert.equal(heard.bargeIns.length, 1);
    assert.ok(heard.bargeIns[0] > 1000 + 4000, 'interrupted before the visitor spoke');
  });

  test("a visitor who starts within the agent's first second, quieter than the agent, still interrupts it and is heard", async () => {
    // The echo guard knows nothing of the echo path yet (it needs over a second of the agent's
    // voice) and assumes an echo at -6 dB; the visitor's voice is quieter than the agent's playback.
    // As the microphone stays uncorrelated with what the agent plays, that assumption must decay.
    const { listener, heard, play } = listen();
    listener.setAgentTalking(true);
    const visitor = clips[2];
    const quiet = echoOf(visitor.pcm, 0.35, 0, visitor.pcm.length);
    const lead = 200;
    const voiceStart = 1000 + lead + speechSpan(visitor.pcm).startMs;
    await play(concat(silence(lead), quiet, silence(1500)), concat(clips[0].pcm, clips[3].pcm));
    listener.close();
    assert.equal(heard.bargeIns.length, 1, "the visitor was taken for the agent's echo");
    const after = heard.bargeIns[0] - voiceStart;
    assert.ok(after >= 300 && after < 2500, `barge-in ${after} ms after the visitor started`);
    assert.equal(heard.turns.length, 1);
    assert.ok(wordErrorRate(visitor.text, heard.turns[0].text) < 0.8, heard.turns[0].text);
  });

  test('a visitor who never stops talking: the turn ends at the cap and the rest is the next turn', async () => {
    const { listener, heard, play } = listen({ maxTurnSeconds: 3 });
    await play(concat(silence(300), clips[0].pcm, silence(1500)));
    listener.close();
    assert.ok(heard.turns.length >= 2, `turns: ${heard.turns.length}`);
    assert.ok(heard.turns[0].speechSeconds <= 3, `first turn ${heard.turns[0].speechSeconds} s`);
  });

  test('with every live decoder busy, the turn waits for one and is recognised whole', async () => {
    const recognizer = new PocketsphinxRecognizer(undefined, 1);
    const busy = recognizer.stream({ language: 'en' })!; // another visitor's live turn holds the only decoder
    const { listener, heard, play } = listen({}, recognizer);
    let freedWith = -1;
    const free = setTimeout(() => {
      freedWith = heard.turns.length;
      busy.abort();
    }, 3000);
    const clip = clips[1];
    await play(concat(silence(500), clip.pcm, silence(1500)));
    clearTimeout(free);
    listener.close();
    assert.equal(freedWith, 0, 'no turn was recognised while the decoder was busy');
    assert.equal(heard.errors.length, 0, heard.errors.join('; '));
    assert.equal(heard.turns.length, 1);
    assert.ok(wordErrorRate(clip.text, heard.turns[0].text) < 0.7, `heard "${heard.turns[0].text}" for "${clip.text}"`);
  });

  test('words that ended the turn early count only until the visitor speaks again', async () => {
    // A streaming engine whose partial text the test writes: a complete question heard so far.
    const streams: RecognitionStream[] = [];
    const scripted: Recognizer = {
      name: 'scripted',
      transcribe: async () => ({ text: 'what is the price of the blue shoes' }),
      stream: () => {
        const stream: RecognitionStream = { push() {}, finish: async () => ({ text: 'what is the price of the blue shoes' }), abort() {} };
        streams.push(stream);
        return stream;
      },
      close: async () => {},
    };
    const clip = clips[1];
    /** Plays the clip with the partial text arriving `atMs` into it; answers the wait from its last word to the turn's end. */
    const waitAfterSpeech = async (atMs: number) => {
      const { listener, heard, play } = listen({}, scripted);
      const cut = Math.round((atMs * 16000) / 1000);
      await play(concat(silence(500), clip.pcm.subarray(0, cut)));
      streams.at(-1)!.onPartial!('what is the price of the blue shoes');
      await play(concat(clip.pcm.subarray(cut), silence(1500)));
      listener.close();
      assert.equal(heard.turns.length, 1, JSON.stringify(heard.turns.map((t) => t.timings)));
      return heard.turns[0].timings.turnEndedAt - heard.turns[0].timings.speechEndedAt;
    };
    const lastWordMs = speechSpan(clip.pcm).endMs;
    const fresh = await waitAfterSpeech(lastWordMs + 60);
    assert.ok(fresh < 500, `a complete question heard after the last words ends the turn sooner: ${fresh} ms`);
    const stale = await waitAfterSpeech(lastWordMs / 2);
    assert.ok(stale >= 500, `words from before the visitor resumed must not end the turn at 350 ms: ${stale} ms`);
  });

  test('the live recogniser is told once when the visitor pauses, before the turn ends', async () => {
    const calls: Array<{ call: string; atMs: number }> = [];
    let pushedSamples = 0;
    const recognizer: Recognizer = {
      name: 'scripted',
      transcribe: async () => ({ text: '' }),
      stream: () => ({
        push: (pcm) => void (pushedSamples += pcm.length),
        pause: () => void calls.push({ call: 'pause', atMs: (pushedSamples * 1000) / 16000 }),
        finish: async () => (calls.push({ call: 'finish', atMs: (pushedSamples * 1000) / 16000 }), { text: 'hello there' }),
        abort() {},
      }),
      close: async () => {},
    };
    const clip = clips[1];
    const { listener, heard, play } = listen({}, recognizer);
    await play(concat(silence(500), clip.pcm, silence(1500)));
    listener.close();
    assert.equal(heard.turns.length, 1);
    assert.deepEqual(
      calls.map((c) => c.call),
      ['pause', 'finish'],
    );
    // When it was told, counted back from the end of the turn (when the stream was finished), past the last voiced frame.
    const pauseAfterWords = calls[0].atMs - calls[1].atMs + (heard.turns[0].timings.turnEndedAt - heard.turns[0].timings.speechEndedAt);
    assert.ok(pauseAfterWords >= 150 && pauseAfterWords < 450, `told ${pauseAfterWords} ms after the last voiced frame`);
  });

  test('words the engine has settled in the pause end the turn without waiting for the decoder to finish', async () => {
    const settledWords = (pauseCloses: boolean) => {
      let stream: RecognitionStream | undefined;
      const recognizer: Recognizer = {
        name: 'scripted',
        transcribe: async () => ({ text: '' }),
        stream: () => {
          let closed = false;
          stream = {
            push() {},
            // The engine closes its phrase when told of the pause, as pocketsphinx does.
            pause: () => {
              closed = pauseCloses;
              if (closed) stream!.onPartial?.('the blue shoes');
            },
            settled: () => (closed ? { text: 'the blue shoes', language: 'en' } : undefined),
            // A decoder that never exits once its words are settled, and one that takes its time otherwise.
            finish: () => (closed ? new Promise(() => {}) : new Promise((resolve) => setTimeout(() => resolve({ text: 'from the decoder' }), 50))),
            abort() {},
          };
          return stream;
        },
        close: async () => {},
      };
      return recognizer;
    };
    for (const pauseCloses of [true, false]) {
      const { listener, heard, play } = listen({}, settledWords(pauseCloses));
      await play(concat(silence(500), clips[1].pcm, silence(1500)));
      listener.close();
      assert.deepEqual(
        heard.turns.map((t) => t.text),
        [pauseCloses ? 'the blue shoes' : 'from the decoder'],
        'settled words are the turn at once; otherwise the turn waits for the decoder',
      );
    }
  });

  test('after close nothing is reported and pushes are ignored', async () => {
    const { listener, heard, play } = listen();
    listener.close();
    await play(concat(clips[1].pcm, silence(1500)));
    assert.equal(heard.turns.length + heard.started + heard.bargeIns.length, 0);
  });
});

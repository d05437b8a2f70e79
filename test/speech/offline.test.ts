import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { concatInt16, rms, zeroCrossingRate } from '../../src/speech/audio.js';
import { ConversationSpeech } from '../../src/speech/conversation.js';
import { SpeechError } from '../../src/speech/errors.js';
import type { SpeechPiece } from '../../src/speech/synthesis.js';
import { makeService, medianPitch, sleep } from './helpers.js';

const lines: string[] = [];
const speech = makeService({}, lines);
before(() => speech.start());
after(() => speech.close());

test('says at start which engine speaks', () => {
  assert.ok(
    lines.some((l) => /no Kokoro model .*speaking with the offline flite engine/.test(l)),
    lines.join('\n'),
  );
  assert.equal(speech.engineFor('kokoro', 'af_heart'), 'flite');
});

test('offline engine produces real speech: energy, zero crossings, plausible duration, word times', async () => {
  const text = 'Good morning, and welcome to our store. What can I help you find today?';
  const { pcm, words } = await speech.synthesizeAll({ text, provider: 'kokoro', voiceId: 'af_heart', sampleRate: 16000 });
  const seconds = pcm.length / 16000;
  // 14 words at 2-4.5 words per second
  assert.ok(seconds > 3 && seconds < 7.5, `duration ${seconds}s`);
  assert.ok(rms(pcm) > 0.03, `rms ${rms(pcm)}`);
  const zcr = zeroCrossingRate(pcm, 16000);
  assert.ok(zcr > 300 && zcr < 4000, `zero-crossing rate ${zcr}/s`);
  // Speech has pauses: frames of 20 ms vary a lot in energy (a tone would not).
  const frame = 320;
  const energies: number[] = [];
  for (let i = 0; i + frame <= pcm.length; i += frame) energies.push(rms(pcm.subarray(i, i + frame)));
  const quiet = energies.filter((e) => e < 0.01).length / energies.length;
  const loud = energies.filter((e) => e > 0.05).length / energies.length;
  assert.ok(quiet > 0.05 && loud > 0.3, `quiet ${quiet}, loud ${loud}`);
  assert.deepEqual(
    words.map((w) => w.word),
    ['Good', 'morning', 'and', 'welcome', 'to', 'our', 'store', 'What', 'can', 'I', 'help', 'you', 'find', 'today'],
  );
  for (let i = 1; i < words.length; i++) assert.ok(words[i].start >= words[i - 1].start && words[i].end >= words[i].start);
  assert.ok(words.at(-1)!.end <= seconds + 0.05 && words.at(-1)!.end > seconds * 0.6);
  assert.ok(words[7].start > 1.2, 'second sentence words are offset into the stream');
});

test('female and male voices map to different offline voices (pitch)', async () => {
  const say = async (voiceId: string) =>
    (await speech.synthesizeAll({ text: 'This is my speaking voice, nice and clear.', provider: 'kokoro', voiceId, sampleRate: 16000 })).pcm;
  const female = medianPitch(await say('af_bella'), 16000);
  const male = medianPitch(await say('am_michael'), 16000);
  assert.ok(female > 140 && female < 300, `female pitch ${female}`);
  assert.ok(male > 70 && male < 140, `male pitch ${male}`);
});

test('first sentence is spoken before the rest of the text exists', async () => {
  let secondSentSince = 0;
  let firstAudioAt = 0;
  async function* tokens() {
    for (const t of ['Hello', ' there', '.', ' ']) yield t;
    // The LLM is "still thinking": hold the rest until audio of the first sentence came out.
    while (!firstAudioAt) await sleep(5);
    secondSentSince = performance.now();
    for (const t of ['How', ' are', ' you', '?']) yield t;
  }
  const chunks: SpeechPiece[] = [];
  for await (const c of speech.synthesize({ text: tokens(), provider: 'kokoro', voiceId: 'am_adam', sampleRate: 24000 })) {
    if (!firstAudioAt) firstAudioAt = performance.now();
    chunks.push(c);
  }
  assert.ok(secondSentSince >= firstAudioAt, 'audio arrived before the second sentence was written');
  const words = chunks.flatMap((c) => c.words ?? []).map((w) => w.word);
  assert.deepEqual(words, ['Hello', 'there', 'How', 'are', 'you']);
  assert.ok(concatInt16(chunks.map((c) => c.pcm)).length / 24000 > 1.2);
});

test('abort stops a long synthesis promptly and quietly', async () => {
  const controller = new AbortController();
  const text = Array.from({ length: 30 }, (_, i) => `This is sentence number ${i + 1} of a very long answer.`).join(' ');
  let chunks = 0;
  let abortedAt = 0;
  const started = performance.now();
  for await (const _ of speech.synthesize({ text, provider: 'kokoro', voiceId: 'af_heart', sampleRate: 16000, signal: controller.signal })) {
    chunks++;
    if (chunks === 2) {
      abortedAt = performance.now();
      controller.abort();
    }
  }
  const ended = performance.now();
  assert.equal(chunks, 2, 'nothing after the abort');
  assert.ok(ended - abortedAt < 50, `ended ${ended - abortedAt} ms after abort`);
  assert.ok(ended - started < 2000, 'did not synthesise the whole text');
});

test('abort while waiting for the first audio ends at once', async () => {
  const controller = new AbortController();
  async function* never() {
    yield 'Hello';
    await new Promise(() => {});
  }
  setTimeout(() => controller.abort(), 50);
  const t = performance.now();
  for await (const _ of speech.synthesize({ text: never(), provider: 'kokoro', voiceId: 'af_heart', sampleRate: 16000, signal: controller.signal }))
    assert.fail('no audio expected');
  assert.ok(performance.now() - t < 200);
});

test('unknown provider, unknown voice and a bad rate are SpeechErrors', async () => {
  const run = (req: any) => speech.synthesizeAll({ text: 'Hi.', sampleRate: 16000, ...req });
  await assert.rejects(run({ provider: 'nope', voiceId: 'x' }), (e: SpeechError) => e instanceof SpeechError && e.code === 'unknown_provider');
  await assert.rejects(run({ provider: 'kokoro', voiceId: 'zz_nobody' }), (e: SpeechError) => e.code === 'unknown_voice');
  await assert.rejects(run({ provider: 'kokoro', voiceId: 'af_heart', sampleRate: 1000 }), (e: SpeechError) => e.code === 'bad_request');
});

test('premium voice without a key falls back to the offline engine, with a log line', async () => {
  assert.equal(speech.engineFor('elevenlabs', '21m00Tcm4TlvDq8ikWAM'), 'flite');
  const { pcm } = await speech.synthesizeAll({ text: 'Hello.', provider: 'elevenlabs', voiceId: '21m00Tcm4TlvDq8ikWAM', sampleRate: 16000 });
  assert.ok(rms(pcm) > 0.03);
  assert.ok(lines.some((l) => l.includes('ELEVENLABS_API_KEY')));
  assert.ok(!lines.some((l) => /sk_|xi-api-key/i.test(l)));
});

test('welcome message and fillers', async () => {
  const conv = new ConversationSpeech(speech);
  const agent = {
    voice_id: 'af_heart',
    tts_primary: 'kokoro',
    languages: { main: 'en', also: [] },
    welcome_message: 'Welcome! How can I help?',
    fillers_enabled: true,
  };
  const welcome: Int16Array[] = [];
  for await (const c of conv.welcome(agent, { sampleRate: 16000 })) welcome.push(c.pcm);
  assert.ok(rms(concatInt16(welcome)) > 0.03);
  let none = 0;
  for await (const _ of conv.welcome({ ...agent, welcome_message: null }, { sampleRate: 16000 })) none++;
  assert.equal(none, 0);

  assert.equal(conv.filler(agent, { sampleRate: 16000 }), undefined, 'not prepared yet: no waiting');
  assert.equal(await conv.prepareFillers(agent, { sampleRate: 16000 }), 5);
  const t = performance.now();
  const a = conv.filler(agent, { sampleRate: 16000 })!;
  const b = conv.filler(agent, { sampleRate: 16000 })!;
  assert.ok(performance.now() - t < 5, 'cached fillers cost nothing');
  assert.notEqual(a, b, 'rotates');
  assert.ok(a.pcm.length / 16000 > 0.2 && a.pcm.length / 16000 < 2.5, `filler length ${a.pcm.length / 16000}`);
  assert.ok(rms(a.pcm) > 0.02);
  assert.equal(conv.filler({ ...agent, fillers_enabled: false }, { sampleRate: 16000 }), undefined);
});

/**
 * Preemptive generation in the live loop, on the real listener, the real real-time session and its
 * playback clock, with stand-ins for what is outside the loop: a VAD that hears loud frames as
 * voice, a streaming recogniser whose phrases and final words the test sets, an answering engine
 * that records its knowledge gaps like the real ones (at once, or held back when speculative), and
 * a speaker that voices each piece of text it is given.
 *
 * The answer is prepared from the recogniser's words during the visitor's pause, held unseen, and
 * released when the turn ends with the same words (its audio leaves while the engine is still
 * busy); thrown away without a trace when the visitor goes on or the turn ends with other words;
 * and agent.interrupt still cancels it, before and after it is committed.
 */
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { LiveConversation, LIVE_TIMING_DEFAULTS, type LiveTiming } from '../../src/conversation/live.js';
import { PreemptiveStats } from '../../src/conversation/preemptive-stats.js';
import type { TurnInput } from '../../src/conversation/records.js';
import type { AnswerEngine, AnswerEvent, AnswerRequest } from '../../src/brain/engine.js';
import { RealtimeSession, type Speaker, type SpeechRequest } from '../../src/realtime/session.js';
import type { PlayerSocket } from '../../src/realtime/player-out.js';
import { decodeFrame } from '../../src/realtime/frame-codec.js';
import type { RecognitionStream, Recognizer, Transcript } from '../../src/speech/recognition/types.js';
import type { ConversationSpeech } from '../../src/speech/conversation.js';
import { loudnessVad } from '../support/loudness-vad.js';

const vad = loudnessVad;

class FakeStream implements RecognitionStream {
  onPartial?: (text: string) => void;
  final = '';
  /** What the engine says of the language (undefined: it does not detect it). */
  language: string | undefined = 'en';
  aborted = false;
  finishing = false;
  push(): void {}
  finish(): Promise<Transcript> {
    this.finishing = true;
    return Promise.resolve({ text: this.final, ...(this.language && { language: this.language }) });
  }
  abort(): void {
    this.aborted = true;
  }
}

class FakeRecognizer implements Recognizer {
  readonly name = 'fake-stream';
  readonly streams: FakeStream[] = [];
  async transcribe(): Promise<Transcript> {
    throw new Error('the stand-in recognises live only');
  }
  stream(): RecognitionStream {
    const stream = new FakeStream();
    this.streams.push(stream);
    return stream;
  }
  async close(): Promise<void> {}
}

interface EngineCall {
  request: AnswerRequest;
  /** Opens the engine's end (its `done`); the first text comes at once. */
  finish(): void;
}

/** Answers "Answer to <words>." at once, then waits for the test before it is done; every answer is a gap. */
class FakeEngine implements AnswerEngine {
  readonly name = 'fake';
  readonly calls: EngineCall[] = [];
  readonly gaps: string[] = [];
  /** Finish every answer at once (no gate). */
  open = false;

  answer(request: AnswerRequest): AsyncIterable<AnswerEvent> {
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => (finish = resolve));
    if (this.open) finish();
    this.calls.push({ request, finish });
    const self = this;
    return (async function* (): AsyncGenerator<AnswerEvent> {
      yield { type: 'text', text: `Answer to ${request.text}. ` };
      await Promise.race([gate, new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }))]);
      if (request.signal.aborted) return;
      yield { type: 'text', text: 'That is all.' };
      const record = async () => {
        self.gaps.push(request.text);
        return self.gaps.length;
      };
      if (request.speculative) yield { type: 'done', answered: false, sources: [], engine: 'fake', commit: record };
      else yield { type: 'done', answered: false, sources: [], engine: 'fake', gapId: await record() };
    })();
  }
}

/** Voices each piece of text as 200 ms of tone per word (no word timings). */
function fakeSpeaker(calls: SpeechRequest[]): Speaker {
  return (request) => {
    calls.push(request);
    return (async function* () {
      const pieces = typeof request.text === 'string' ? [request.text] : request.text;
      for await (const text of pieces) {
        if (request.signal.aborted) return;
        const words = text.split(/\s+/).filter(Boolean).length;
        if (!words) continue;
        const pcm = new Int16Array(Math.round(request.sampleRate * 0.2 * words)).fill(3000);
        yield { pcm, text };
      }
    })();
  };
}

/** A page on the player channel: its JSON messages and the utterance of each audio frame. */
function fakePage() {
  const messages: any[] = [];
  const frames: string[] = [];
  const socket: PlayerSocket = {
    readyState: 1,
    bufferedAmount: 0,
    send(data) {
      if (typeof data === 'string') messages.push(JSON.parse(data));
      else frames.push(decodeFrame(data)!.track!.utterance);
    },
    close() {},
    terminate() {},
  };
  return { socket, messages, frames };
}

const timers: NodeJS.Timeout[] = [];
const conversations: LiveConversation[] = [];
afterEach(() => {
  for (const c of conversations.splice(0)) c.close();
  for (const t of timers.splice(0)) clearInterval(t);
});

function setup(options: { preparesSpeech?: boolean; languages?: { main: string; also?: string[] }; timing?: Partial<LiveTiming> } = {}) {
  const session = new RealtimeSession({
    sessionId: 'sess_preempt',
    sampleRate: 16000,
    stage: { camera: 'mid', camera_mode: 'auto', hold: false, backdrop: null, cameras: ['mid'], face_light: 1 },
    speaker: fakeSpeaker([]),
    findBackdrop: () => undefined,
  });
  // The hub's part: tick at once when woken, and every 5 ms.
  session.wake = () => session.tick();
  timers.push(setInterval(() => session.tick(), 5));
  const renderEvents: any[] = [];
  session.emit = (event) => renderEvents.push(event);
  const page = fakePage();
  session.player.add(page.socket);
  const recognizer = new FakeRecognizer();
  const engine = new FakeEngine();
  const speeches: SpeechRequest[] = [];
  const voices: string[] = [];
  const turns: TurnInput[] = [];
  const preemptiveStats = new PreemptiveStats();
  const conversation = new LiveConversation({
    sessionId: 'sess_preempt',
    session,
    answers: engine,
    addTurn: async (turn) => {
      turns.push(turn);
    },
    speech: { prepareFillers: async () => 0, filler: () => undefined } as unknown as ConversationSpeech,
    voiceFor: () => ({ provider: 'kokoro', voiceId: 'af_heart' }),
    speakerFor: ({ language }) => {
      voices.push(language);
      return fakeSpeaker(speeches);
    },
    load: async () => ({
      agent: {
        id: 1,
        account_id: 1,
        name: 'Ava',
        voice_id: 'af_heart',
        tts_primary: 'kokoro',
        languages: options.languages ?? { main: 'en' },
        welcome_message: null,
        fillers_enabled: false,
      },
      visitor: {},
      history: [],
    }),
    recognizer,
    listenerOptions: { vad },
    endSession: async () => {},
    timing: { ...LIVE_TIMING_DEFAULTS, idleMs: 600_000, visitorLeftGraceMs: 600_000, ...options.timing },
    preemptiveStats,
    ...(options.preparesSpeech === false && { preparesSpeech: () => false }),
    log: { warn: () => {}, error: () => {} },
  });
  conversations.push(conversation);
  conversation.pageConnected();
  renderEvents.length = 0; // the state it started in

  let clock = performance.now();
  /** Microphone audio: `ms` of voice or silence, in 20 ms pieces as the page sends them. */
  async function mic(kind: 'voice' | 'silence', ms: number) {
    for (let done = 0; done < ms; done += 20) {
      clock += 20;
      conversation.microphone(new Int16Array(320).fill(kind === 'voice' ? 8000 : 0), clock);
    }
    await settle();
  }
  const answerFrames = () => page.frames.filter((u) => /^answer_/.test(u)).length;
  /** What the page and a render caller have seen of an answer: states, captions, transcripts, frames. */
  const seen = () => ({
    thinking: page.messages.filter((m) => m.type === 'state' && m.state === 'thinking').length,
    captions: page.messages.filter((m) => m.type === 'caption').map((m) => m.text),
    finals: page.messages.filter((m) => m.type === 'visitor_transcript' && m.final).map((m) => m.text),
    answerFrames: answerFrames(),
    renderEvents: renderEvents.map((e) => e.type),
  });
  return { session, page, recognizer, engine, speeches, voices, turns, conversation, mic, seen, answerFrames, renderEvents, preemptiveStats };
}

const settle = (ms = 30) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, predicate: () => boolean, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await settle(5);
  }
}

/** The visitor says something, pauses, and the recogniser closes its phrase during the pause. */
async function speakAndPause(s: ReturnType<typeof setup>, words: string) {
  await s.mic('silence', 200);
  await s.mic('voice', 700);
  await s.mic('silence', 260); // the decoder closes its phrase after 250 ms of silence
  const stream = s.recognizer.streams.at(-1)!;
  stream.onPartial!(words);
  return stream;
}

const nothingSeen = { thinking: 0, captions: [], finals: [], answerFrames: 0, renderEvents: [] };

test('the answer is prepared during the pause unseen, and released when the turn ends with the same words: its audio leaves while the engine is still busy', async () => {
  const s = setup();
  const stream = await speakAndPause(s, 'what are your opening hours');
  stream.final = 'what are your opening hours';
  await until('the answer prepared', () => s.engine.calls.length === 1 && s.speeches.length === 1);
  await settle(50);
  const call = s.engine.calls[0];
  assert.equal(call.request.speculative, true);
  assert.equal(call.request.text, 'what are your opening hours');
  // Held: the page, a render caller and the record have seen nothing of it.
  assert.deepEqual(s.seen(), nothingSeen);
  assert.equal(s.session.queue.items.length, 0, 'nothing queued on the playback clock');
  assert.equal(s.turns.length, 0, 'nothing recorded');
  assert.equal(s.session.state, 'listening');

  const kept = s.preemptiveStats.kept;
  await s.mic('silence', 700); // the turn ends
  assert.ok(stream.finishing, 'the turn ended');
  await until('the answer audio at the page', () => s.answerFrames() > 0);
  // The engine has not finished (its gate is shut), and it was asked once: the held audio left.
  assert.equal(s.engine.calls.length, 1);
  assert.equal(call.request.signal.aborted, false);
  assert.equal(s.speeches.length, 1, 'the speech prepared ahead is the one played');
  assert.equal(s.preemptiveStats.kept, kept + 1);
  assert.deepEqual(s.seen().finals, ['what are your opening hours']);
  assert.deepEqual(s.engine.gaps, [], 'the gap waits for the answer to be given');
  call.finish();

  await until('both turns recorded', () => s.turns.length === 2, 10_000);
  await s.conversation.settled();
  const [visitor, agent] = s.turns as TurnInput[];
  assert.equal(visitor.role, 'visitor');
  assert.equal(visitor.text, 'what are your opening hours');
  assert.equal(agent.text, 'Answer to what are your opening hours. That is all.');
  assert.deepEqual(s.engine.gaps, ['what are your opening hours'], 'recorded once, when given');
  assert.equal((agent.details as any).gap_id, 1);
  const w = (agent.details as any).latency_ms;
  // Prepared ahead: it began, and had its text, before the turn ended; its audio left after the transcript.
  assert.ok(w.prepared <= w.first_text && w.first_text <= w.end_of_turn, JSON.stringify(w));
  assert.ok(w.end_of_turn <= w.recognised && w.recognised <= w.first_audio && w.first_audio < w.heard, JSON.stringify(w));
  assert.ok(s.seen().captions.some((c) => /Answer to what are your opening hours/.test(c)));
});

test('a visitor who goes on speaking gets no trace of the answer thrown away: not in the record, the page, the gaps or a render caller', async () => {
  const s = setup();
  const stream = await speakAndPause(s, 'what are your opening hours');
  await until('the answer prepared', () => s.engine.calls.length === 1 && s.speeches.length === 1);
  await settle(50);
  const [thrown] = s.engine.calls;
  const resumed = s.preemptiveStats.discarded.resumed;
  await s.mic('voice', 500); // "…on Sundays"
  assert.equal(thrown.request.signal.aborted, true, 'the engine was stopped');
  assert.equal(s.speeches[0].signal.aborted, true, 'the speech was stopped');
  assert.equal(s.preemptiveStats.discarded.resumed, resumed + 1);
  assert.deepEqual(s.seen(), nothingSeen);

  s.engine.open = true;
  stream.final = 'what are your opening hours on sundays';
  await s.mic('silence', 900);
  await until('both turns recorded', () => s.turns.length === 2, 10_000);
  await s.conversation.settled();
  assert.deepEqual(
    s.turns.map((t) => [t.role, t.text]),
    [
      ['visitor', 'what are your opening hours on sundays'],
      ['agent', 'Answer to what are your opening hours on sundays. That is all.'],
    ],
  );
  assert.equal(s.engine.calls.length, 2);
  assert.equal(s.engine.calls[1].request.speculative, undefined, 'answered as usual');
  assert.deepEqual(s.engine.gaps, ['what are your opening hours on sundays']);
  const seen = s.seen();
  assert.equal(seen.thinking, 1, 'thinking shown once, for the answer given');
  assert.ok(
    seen.captions.every((c) => !/hours\.\s*$/.test(c) && /sundays|That is all/.test(c)),
    JSON.stringify(seen.captions),
  );
  assert.deepEqual(seen.finals, ['what are your opening hours on sundays']);
  assert.equal(new Set(s.page.frames).size, 1, 'one utterance reached the page');
  assert.equal(s.renderEvents.filter((e) => e.type === 'agent.speak_started').length, 1);
  assert.equal((s.turns[1].details as any).latency_ms.prepared, undefined, 'not prepared ahead');
});

test('the turn ending with other words than the prepared answer was built on restarts the answer', async () => {
  const s = setup();
  const stream = await speakAndPause(s, 'what are your opening hours');
  await until('the answer prepared', () => s.engine.calls.length === 1);
  const mismatch = s.preemptiveStats.discarded.mismatch;
  s.engine.open = true;
  // The decoder's last words differ (it heard more once the audio ended).
  stream.final = 'what are your opening hours today';
  await s.mic('silence', 700);
  await until('both turns recorded', () => s.turns.length === 2, 10_000);
  await s.conversation.settled();
  assert.equal(s.preemptiveStats.discarded.mismatch, mismatch + 1);
  assert.equal(s.engine.calls[0].request.signal.aborted, true);
  assert.equal(s.engine.calls.length, 2);
  assert.equal(s.engine.calls[1].request.text, 'what are your opening hours today');
  assert.deepEqual(
    s.turns.map((t) => t.text),
    ['what are your opening hours today', 'Answer to what are your opening hours today. That is all.'],
  );
  assert.deepEqual(s.engine.gaps, ['what are your opening hours today']);
  assert.ok(
    s.seen().captions.every((c) => !/hours\.\s*$/.test(c)),
    'nothing of the first answer was voiced',
  );
});

test('agent.interrupt throws away an answer being prepared (the turn is answered when it ends) and cancels a committed one', async () => {
  const s = setup();
  let stream = await speakAndPause(s, 'do you deliver');
  await until('the answer prepared', () => s.engine.calls.length === 1);
  s.conversation.interrupted();
  assert.equal(s.engine.calls[0].request.signal.aborted, true);
  stream.final = 'do you deliver';
  s.engine.open = true;
  await s.mic('silence', 700);
  await until('answered after the interrupt', () => s.turns.length === 2, 10_000);
  assert.equal(s.engine.calls.length, 2, 'answered anew');
  assert.equal(s.turns[1].text, 'Answer to do you deliver. That is all.');
  await until('the answer played', () => s.session.queue.items.length === 0, 10_000);

  // Now one that is committed, then interrupted while it plays and the engine still writes.
  s.engine.open = false;
  stream = await speakAndPause(s, 'where are you');
  stream.final = 'where are you';
  await until('the answer prepared', () => s.engine.calls.length === 3);
  await s.mic('silence', 700);
  await until('the answer audio at the page', () => s.page.frames.filter((u) => /^answer_/.test(u)).length > 2);
  const committed = s.engine.calls[2];
  assert.equal(committed.request.speculative, true);
  s.session.interrupt('evt_interrupt'); // what the commands route does first for agent.interrupt
  s.conversation.interrupted();
  assert.equal(committed.request.signal.aborted, true, 'the engine stopped writing');
  await until('the cut answer recorded', () => s.turns.length === 4, 10_000);
  await s.conversation.settled();
  assert.equal((s.turns[3].details as any).interrupted, true);
  assert.deepEqual(s.engine.gaps, ['do you deliver'], 'an answer cut before its engine finished records no gap');
});

test('with a billed voice only the text is prepared ahead: the speech starts when the answer is committed', async () => {
  const s = setup({ preparesSpeech: false });
  const stream = await speakAndPause(s, 'what are your opening hours');
  stream.final = 'what are your opening hours';
  await until('the answer prepared', () => s.engine.calls.length === 1);
  await settle(50);
  assert.equal(s.speeches.length, 0, 'nothing voiced (nor billed) before the commit');
  s.engine.calls[0].finish();
  await s.mic('silence', 700);
  await until('the answer audio at the page', () => s.answerFrames() > 0);
  assert.equal(s.speeches.length, 1);
  assert.equal(s.engine.calls.length, 1, 'the prepared text was used');
  await until('both turns recorded', () => s.turns.length === 2, 10_000);
});

test('a pause of the agent for a barge-in that is never decided ends at its bound: the voice goes on, nothing is interrupted', async () => {
  for (const maxBargeInPauseMs of [150, LIVE_TIMING_DEFAULTS.maxBargeInPauseMs]) {
    const s = setup({ timing: { maxBargeInPauseMs } });
    s.session.speak({ text: 'We have fresh bread today, and cakes, and coffee, and many other things for you to try.', eventId: 'evt_talk' });
    await until('talking', () => s.session.state === 'talking');
    // Voice over the agent, long enough to pause it, too short to be a barge-in; then no more
    // microphone frames at all (a page that stalled): the listener never decides.
    await s.mic('voice', 320);
    const types = () => s.page.messages.map((m) => m.type);
    await until('paused', () => types().includes('pause'));
    await settle(400);
    const resumed = types().indexOf('resume') > types().indexOf('pause');
    assert.equal(resumed, maxBargeInPauseMs < 400, `bound ${maxBargeInPauseMs} ms: resumed after 400 ms is ${resumed}`);
    assert.ok(!types().includes('interrupt'), 'nothing interrupted');
    assert.equal(s.session.state, 'talking');
    for (const c of conversations.splice(0)) c.close();
  }
});

test('no answer is prepared while the agent is talking, nor more than one at a time', async () => {
  const s = setup();
  s.engine.open = true;
  s.session.speak({ text: 'We have fresh bread today, and cakes, and coffee, and many other things for you to try.', eventId: 'evt_talk' });
  await until('talking', () => s.session.state === 'talking');
  await s.mic('silence', 200);
  await s.mic('voice', 300); // short, over the agent: not a barge-in
  await s.mic('silence', 260);
  s.recognizer.streams.at(-1)?.onPartial?.('what are your opening hours');
  await settle(50);
  assert.equal(s.engine.calls.length, 0, 'nothing prepared over the agent');
  s.session.interrupt('evt_stop');
  await until('listening', () => s.session.state === 'listening');
  await s.mic('silence', 1500);

  const stream = await speakAndPause(s, 'what are your opening hours');
  await until('the answer prepared', () => s.engine.calls.length === 1);
  stream.onPartial!('what are your opening hours on sunday'); // the decoder's next phrase
  await settle(20);
  assert.equal(s.engine.calls.length, 2);
  assert.equal(s.engine.calls[0].request.signal.aborted, true, 'the first went when the second began');
  assert.equal(s.engine.calls[1].request.signal.aborted, false);
});

test('the answer prepared ahead is in the language of the words, and kept when the final words say the same', async () => {
  const s = setup({ languages: { main: 'en', also: ['es'] } });
  const words = '¿Cuál es vuestro número de teléfono, por favor?';
  s.engine.open = true;
  const stream = await speakAndPause(s, words);
  stream.final = words;
  stream.language = undefined; // detected from the text, as for typed turns
  await until('the answer prepared', () => s.engine.calls.length === 1 && s.speeches.length === 1);
  assert.equal(s.engine.calls[0].request.language, 'es');
  assert.deepEqual(s.voices, ['es'], 'voiced with the Spanish voice');
  await s.mic('silence', 900);
  await until('both turns recorded', () => s.turns.length === 2, 10_000);
  assert.equal(s.engine.calls.length, 1, 'kept');
  assert.deepEqual(
    s.turns.map((t) => t.language),
    ['es', 'es'],
  );

  await until('the answer played', () => s.session.queue.items.length === 0, 10_000);
  await s.conversation.settled();

  // The recogniser says English for the same words: the language differs, so the answer restarts in English.
  const next = await speakAndPause(s, words);
  next.final = words;
  next.language = 'en';
  await until('the answer prepared', () => s.engine.calls.length === 2);
  await s.mic('silence', 900);
  await until('answered', () => s.turns.length === 4, 10_000);
  assert.equal(s.engine.calls.length, 3);
  assert.equal(s.engine.calls[1].request.signal.aborted, true);
  assert.equal(s.engine.calls[2].request.language, 'en');
});

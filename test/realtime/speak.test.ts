/**
 * RealtimeSession.speak, the one entry for speech (text to be voiced) into a session: whole text
 * (agent.speak_text, previews) with its expression tags and the queue's caps, and text as it
 * streams (conversation answers) voiced into one utterance with the voice it is given; both queued
 * in order after caller audio. The real session and utterance queue; a stand-in speaker that voices
 * 100 ms of tone per word.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RealtimeSession, type Speaker, type SpeechRequest } from '../../src/realtime/session.js';
import { MAX_QUEUED_TEXT_CHARS } from '../../src/realtime/protocol.js';

function toneSpeaker(calls: SpeechRequest[], name = 'session'): Speaker {
  return (request) => {
    calls.push(request);
    return (async function* () {
      const texts = typeof request.text === 'string' ? [request.text] : request.text;
      for await (const text of texts) {
        const words = text.split(/\s+/).filter(Boolean).length;
        if (words) yield { pcm: new Int16Array(request.sampleRate * 0.1 * words).fill(name === 'session' ? 1000 : 2000), text };
      }
    })();
  };
}

function setup() {
  const calls: SpeechRequest[] = [];
  const session = new RealtimeSession({
    sessionId: 'sess_speak',
    sampleRate: 16000,
    stage: { camera: 'mid', camera_mode: 'auto', hold: false, backdrop: null, cameras: ['mid'], face_light: 1 },
    speaker: toneSpeaker(calls),
    findBackdrop: () => undefined,
  });
  const events: any[] = [];
  session.emit = (event) => events.push(event);
  return { session, calls, events };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

test('whole text: expression tags become cues, unknown tags are reported, and the session voice speaks it', async () => {
  const { session, calls, events } = setup();
  const utterance = session.speak({ text: 'Hello [smile] there [dance]', eventId: 'evt_1', cue: 'nod' });
  assert.ok(utterance, 'queued');
  await settle();
  assert.equal(calls.length, 1);
  assert.equal(calls[0].text, 'Hello there', 'tags are not spoken');
  const cues = utterance.actions.filter((a) => a.kind === 'cue').map((a) => (a.kind === 'cue' ? a.payload.name : ''));
  assert.deepEqual(cues, ['nod', 'smile'], 'the start cue, then the tag at its place');
  const errors = events.filter((e) => e.type === 'error');
  assert.equal(errors.length, 1);
  assert.match(errors[0].error.message, /\[dance\]/);
  assert.ok(utterance.pieces.length > 0 && utterance.sealed, 'voiced into the utterance');
  session.close();
});

test('whole text past the queue cap is refused with queue_full and nothing is queued', () => {
  const { session, calls, events } = setup();
  const refused = session.speak({ text: 'a'.repeat(MAX_QUEUED_TEXT_CHARS + 1), eventId: 'evt_big' });
  assert.equal(refused, undefined);
  assert.equal(session.queue.items.length, 0);
  assert.equal(calls.length, 0);
  assert.equal(events.find((e) => e.type === 'error')?.error.type, 'queue_full');
  session.close();
});

test('streamed text is spoken as it comes, with the voice given, tags and caps aside', async () => {
  const { session, calls } = setup();
  const own: SpeechRequest[] = [];
  let push!: (text: string | undefined) => void;
  const stream = (async function* () {
    for (;;) {
      const next = await new Promise<string | undefined>((resolve) => (push = resolve));
      if (next === undefined) return;
      yield next;
    }
  })();
  const utterance = session.speak({ text: stream, eventId: 'answer_1', speaker: toneSpeaker(own, 'answer') });
  await settle();
  assert.equal(calls.length, 0, 'not the session voice');
  assert.equal(own.length, 1);
  push('First sentence [smile]. ');
  await settle();
  assert.equal(utterance.pieces.length, 1, 'the first piece is queued before the text is complete');
  assert.equal(utterance.pieces[0].text, 'First sentence [smile]. ', 'a stream is spoken as is');
  assert.equal(utterance.sealed, false);
  push('Second one.');
  await settle();
  push(undefined);
  await settle();
  assert.equal(utterance.pieces.length, 2);
  assert.equal(utterance.sealed, true);
  assert.equal(utterance.actions.length, 0);
  session.close();
});

test('speech closes an open caller utterance and plays after it', async () => {
  const { session } = setup();
  session.audio(new Uint8Array(3200), 'evt_audio');
  const caller = session.queue.open;
  assert.ok(caller, 'caller audio opens an utterance');
  const spoken = session.speak({ text: 'After the audio', eventId: 'evt_text' });
  assert.equal(caller.sealed, true, 'the caller utterance is sealed');
  assert.equal(session.queue.open, undefined);
  assert.deepEqual(
    session.queue.items.map((u) => u.id),
    ['evt_audio', 'evt_text'],
  );
  assert.equal(spoken?.id, 'evt_text');
  session.close();
});

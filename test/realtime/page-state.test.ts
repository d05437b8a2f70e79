/**
 * The avatar's state has one owner, the session: the conversation loop asks it to show "thinking"
 * on the page (never to render clients, whose agent.state_updated knows idle, listening and
 * talking), a page that connects meanwhile is told so in its hello, and talking ends it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RealtimeSession } from '../../src/realtime/session.js';
import type { PlayerMessage } from '../../src/realtime/player-protocol.js';

function session() {
  const s = new RealtimeSession({
    sessionId: 'ses_page_state',
    sampleRate: 24000,
    stage: { camera: 'mid', camera_mode: 'auto', hold: false, backdrop: null, cameras: ['mid'], face_light: 1 },
    speaker: async function* () {},
    findBackdrop: () => undefined,
  });
  const events: any[] = [];
  s.emit = (e) => events.push(e);
  const sent: PlayerMessage[] = [];
  s.player.add({
    readyState: 1,
    bufferedAmount: 0,
    send: (d: string | Buffer) => typeof d === 'string' && sent.push(JSON.parse(d)),
    close() {},
    terminate() {},
  } as never);
  const states = () => sent.filter((m) => m.type === 'state').map((m) => (m as { state: string }).state);
  return { s, events, sent, states };
}

test('thinking is shown on the page only, once, and ends back in the resting state', () => {
  const { s, events, states } = session();
  s.startListening();
  s.showThinking();
  s.showThinking();
  assert.equal(s.shownState, 'thinking');
  assert.equal(s.state, 'listening', 'the render state is unchanged');
  s.stopThinking();
  s.stopThinking();
  assert.deepEqual(states(), ['listening', 'thinking', 'listening']);
  assert.deepEqual(
    events.filter((e) => e.type === 'agent.state_updated').map((e) => e.new_state),
    ['listening'],
    'render clients never see thinking',
  );
  s.close();
});

test("a visitor's words reach the page as its live caption", () => {
  const { s, sent } = session();
  s.showVisitorWords('what time do', false);
  s.showVisitorWords('what time do you open', true);
  assert.deepEqual(
    sent.filter((m) => m.type === 'visitor_transcript'),
    [
      { type: 'visitor_transcript', text: 'what time do', final: false },
      { type: 'visitor_transcript', text: 'what time do you open', final: true },
    ],
  );
  s.close();
});

/**
 * A socket is authenticated against a row read before its session ended (the lookup, or a
 * shard's queue, raced the stop): the live side must not open again for it. The render socket's
 * token is refused and the page is told the session ended, in the main process and in a shard
 * alike (both run attach.ts over RealtimeService.current). Sockets here are stand-ins that record
 * what they are sent: the race cannot be timed through a real server.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { RealtimeService } from '../../src/realtime/service.js';
import { serveRenderSocket, servePlayerSocket, type SocketDeps } from '../../src/realtime/attach.js';
import { CLOSE_BAD_TOKEN } from '../../src/realtime/protocol.js';
import type { SessionRow } from '../../src/sessions/service.js';
import { until } from '../support/until.js';

class FakeSocket extends EventEmitter {
  readyState = 1;
  bufferedAmount = 0;
  readonly sent: string[] = [];
  closedWith?: number;
  send(data: string): void {
    this.sent.push(data);
  }
  close(code?: number): void {
    this.closedWith = code;
    this.readyState = 3;
  }
  terminate(): void {
    this.readyState = 3;
  }
}

const row = {
  id: '6f2c1e4a-8b0d-4c3e-9a1f-2d3e4f5a6b7c',
  account_id: 1,
  agent_id: 1,
  mode: 'render',
  status: 'active',
  end_reason: null,
  avatar_id: 'face01',
  voice_provider: 'kokoro',
  voice_id: 'af_bella',
  max_session_seconds: 600,
  look: { camera: 'auto', cameras: ['mid'], backdrop: null, face_light: 1 },
} as unknown as SessionRow;

function service() {
  const realtime = new RealtimeService({ face: () => undefined, backdrop: () => undefined, hasBackdrop: () => false }, () => async function* () {});
  const log = { error: () => {}, warn: () => {} };
  const deps: SocketDeps = {
    realtime,
    studio: { face: () => undefined, backdrop: () => undefined, hasBackdrop: () => false },
    log,
    inputs: () => null,
    liveFor: () => {},
    inputStates: new WeakMap(),
  };
  return { realtime, deps };
}

describe('a row read before its session ended', () => {
  it('is ended to the process that saw the end, with the reason', () => {
    const { realtime } = service();
    assert.equal(realtime.current(row).status, 'active');
    realtime.end(row.id, 'stopped');
    assert.deepEqual([realtime.current(row).status, realtime.current(row).end_reason], ['ended', 'stopped']);
    realtime.stop();
  });

  it('does not reopen the live side for a render socket: its token is refused', async () => {
    const { realtime, deps } = service();
    realtime.ensure(row);
    realtime.end(row.id, 'stopped');
    const socket = new FakeSocket();
    serveRenderSocket(socket as never, async () => row, undefined, deps);
    await until(() => socket.closedWith !== undefined, 2000, 'the render socket closed');
    assert.equal(socket.closedWith, CLOSE_BAD_TOKEN);
    assert.equal(realtime.get(row.id), undefined, 'no live side');
    realtime.stop();
  });

  it('tells a page it ended, also when it ended while the page was being recorded as opened', async () => {
    for (const endDuringOpening of [false, true]) {
      const { realtime, deps } = service();
      realtime.ensure(row);
      if (!endDuringOpening) realtime.end(row.id, 'stopped');
      const socket = new FakeSocket();
      servePlayerSocket(
        socket as never,
        async () => row,
        async () => {
          if (endDuringOpening) realtime.end(row.id, 'stopped');
        },
        deps,
      );
      await until(() => socket.closedWith !== undefined, 2000, 'the page closed');
      assert.equal(socket.closedWith, 1000);
      assert.deepEqual(
        socket.sent.map((m) => JSON.parse(m)),
        [{ type: 'ended', reason: 'stopped' }],
        `ended during opening: ${endDuringOpening}`,
      );
      assert.equal(realtime.get(row.id), undefined, 'no live side');
      realtime.stop();
    }
  });
});

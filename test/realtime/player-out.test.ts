/**
 * The player channel's bound on a slow or stalled page (issue 16): past the high-water mark its
 * frames are skipped, so what the server holds for it stays bounded whatever the session sends;
 * once it drains it gets a resync (the session's hello) and frames again; a page that stays behind
 * is closed. The socket here records what it is handed and reports the send buffer the test sets,
 * standing in for a kernel buffer that a test cannot fill in reasonable time.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { PlayerOut, playerLimits, CLOSE_PLAYER_TOO_SLOW, type PlayerSocket } from '../../src/realtime/player-out.js';
import { analysePiece } from '../../src/realtime/lipsync/analysis.js';
import { voiced } from '../support/render-client.js';
import type { HelloMessage } from '../../src/realtime/player-protocol.js';

class RecordingSocket implements PlayerSocket {
  readyState = 1;
  bufferedAmount = 0;
  /** A stalled page: everything sent stays in the buffer. */
  stalled = false;
  readonly sent: Array<string | Buffer> = [];
  closedWith?: number;
  send(data: string | Buffer): void {
    this.sent.push(data);
    if (this.stalled) this.bufferedAmount += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
  }
  close(code?: number): void {
    this.closedWith = code;
    this.readyState = 3;
  }
  terminate(): void {
    this.readyState = 3;
  }
  texts(): any[] {
    return this.sent.filter((d): d is string => typeof d === 'string').map((d) => JSON.parse(d));
  }
}

const saved = { ...playerLimits };
afterEach(() => Object.assign(playerLimits, saved));

function streamFrames(out: PlayerOut, count: number): void {
  const pcm = voiced(0.04);
  const track = analysePiece(pcm, 24000);
  for (let i = 0; i < count; i++) out.frame('u1', i * 0.04, pcm, 0, pcm.length, 24000, track);
}

describe('player out: slow pages', () => {
  it('skips a stalled page past the high-water mark, so what is held for it stays bounded, while a fast page gets every frame', () => {
    const out = new PlayerOut();
    const slow = new RecordingSocket();
    const fast = new RecordingSocket();
    slow.stalled = true;
    const slowConnection = out.add(slow);
    out.add(fast);
    streamFrames(out, 3000); // two minutes of audio
    assert.equal(fast.sent.length, 3000);
    assert.ok(slow.bufferedAmount <= playerLimits.highWaterBytes + 4096, `held ${slow.bufferedAmount} bytes for the stalled page`);
    assert.ok(slowConnection.lagging);
    assert.ok(slowConnection.skippedFrames > 2500, `${slowConnection.skippedFrames} frames skipped`);
    // JSON messages are skipped for it too.
    out.json({ type: 'expression', t: 1, name: 'smile', intensity: 0.8 });
    assert.equal(fast.texts().length, 1);
    assert.equal(slow.texts().length, 0);
  });

  it('resynchronises a page once its buffer drains: a fresh hello marked resync, then frames again', () => {
    const out = new PlayerOut();
    const hello: HelloMessage = {
      type: 'hello',
      now: 42,
      session: { session_id: 'ses_1', mode: 'render', status: 'active', max_session_seconds: null },
      face: null,
      studio: { backdrop: null, cameras: ['mid'], face_light: 1 },
      sample_rate: 24_000,
      state: 'idle',
    };
    out.resync = () => hello;
    const slow = new RecordingSocket();
    slow.stalled = true;
    const connection = out.add(slow);
    streamFrames(out, 400);
    assert.ok(connection.lagging);
    const sentWhileLagging = slow.sent.length;
    // Still above the low-water mark: nothing yet.
    slow.stalled = false;
    slow.bufferedAmount = playerLimits.lowWaterBytes + 1;
    streamFrames(out, 5);
    assert.equal(slow.sent.length, sentWhileLagging);
    // Drained: the resync goes first, then the frame.
    slow.bufferedAmount = 0;
    streamFrames(out, 1);
    const resync = slow.sent.at(-2) as string;
    assert.equal(typeof resync, 'string');
    assert.deepEqual(JSON.parse(resync), { ...hello, resync: true, skipped_frames: connection.skippedFrames });
    assert.ok(Buffer.isBuffer(slow.sent.at(-1)));
    assert.equal(connection.lagging, false);
  });

  it('closes a page that stays behind with 4008 (it reconnects by itself)', async () => {
    playerLimits.maxLaggingMs = 50;
    const out = new PlayerOut();
    const slow = new RecordingSocket();
    slow.stalled = true;
    out.add(slow);
    streamFrames(out, 400);
    await new Promise((r) => setTimeout(r, 80));
    streamFrames(out, 1);
    assert.equal(slow.closedWith, CLOSE_PLAYER_TOO_SLOW);
    assert.equal(out.connections.size, 0);
  });
});

describe('lip-sync analysis reuses its scratch memory safely', () => {
  it('a piece analysed after another keeps its own tracks, and a silent piece gets no visemes from the voiced one before it', () => {
    const speech = analysePiece(voiced(0.2), 24000, 'hello there');
    const copy = { mouth: [...speech.mouth], viseme: [...speech.viseme], weight: [...speech.weight] };
    assert.ok(
      speech.mouth.some((m) => m > 0),
      'the voiced piece opens the mouth',
    );
    const quiet = analysePiece(new Int16Array(4800), 24000, 'hello there');
    // Text is spread over voiced frames only: flags left from the voiced piece would put visemes here.
    assert.ok(quiet.mouth.every((m) => m === 0) && quiet.weight.every((w) => w === 0), 'silence stays closed and unweighted');
    assert.deepEqual({ mouth: [...speech.mouth], viseme: [...speech.viseme], weight: [...speech.weight] }, copy);
  });
});

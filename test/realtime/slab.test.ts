/**
 * Slabs recycle the real-time path's memory (slab.ts): a steady stream of frames and pieces
 * allocates nothing, and memory that someone may still read is never handed out again.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Slab } from '../../src/realtime/slab.js';
import { PlayerOut, type PlayerSocket } from '../../src/realtime/player-out.js';
import { Utterance } from '../../src/realtime/utterance-queue.js';
import { analysePiece } from '../../src/realtime/lipsync/analysis.js';
import { decodeFrame } from '../../src/realtime/frame-codec.js';
import { voiced } from '../support/render-client.js';

const fill = (s: Slab, bytes: number, value: number) => {
  const { buffer, offset } = s.take(bytes);
  new Uint8Array(buffer, offset, bytes).fill(value);
  return { buffer, offset, bytes: new Uint8Array(buffer, offset, bytes) };
};

describe('slab', () => {
  it('starts a buffer again when every range cut from it was given back', () => {
    const slab = new Slab(1024);
    const buffers = new Set<ArrayBuffer>();
    for (let i = 0; i < 1000; i++) {
      const range = fill(slab, 200, i & 0xff);
      buffers.add(range.buffer);
      slab.give(range.buffer);
    }
    assert.equal(buffers.size, 1);
    assert.equal(slab.outstanding, 0);
  });

  it('recycles between two buffers for a queue with a few ranges in flight (pieces played in order)', () => {
    const slab = new Slab(1024);
    const buffers = new Set<ArrayBuffer>();
    const inFlight: ArrayBuffer[] = [];
    for (let i = 0; i < 1000; i++) {
      const range = fill(slab, 200, i & 0xff);
      buffers.add(range.buffer);
      inFlight.push(range.buffer);
      if (inFlight.length > 2) slab.give(inFlight.shift()!);
    }
    assert.equal(buffers.size, 2);
  });

  it('never hands out again memory that was not given back', () => {
    const slab = new Slab(1024);
    const kept = fill(slab, 100, 0xab);
    for (let i = 0; i < 500; i++) {
      const range = fill(slab, 300, i & 0x7f);
      slab.give(range.buffer);
    }
    assert.ok(
      kept.bytes.every((b) => b === 0xab),
      'a range still in use was overwritten',
    );
  });

  it('ignores a range of a buffer it no longer tracks, and gives large ranges their own memory', () => {
    const slab = new Slab(1024);
    const old = fill(slab, 400, 1); // kept: its buffer ends up left to the collector
    fill(slab, 400, 2);
    fill(slab, 400, 3); // turns: the first buffer becomes the spare (1 range live)
    fill(slab, 400, 4);
    fill(slab, 400, 5); // turns again: the spare still has a live range, a fresh buffer is taken
    slab.give(old.buffer);
    slab.give(new ArrayBuffer(8));
    assert.ok(old.bytes.every((b) => b === 1));
    const big = slab.take(600);
    assert.equal(big.buffer.byteLength, 600);
    assert.equal(big.offset, 0);
  });
});

class QueuedSocket implements PlayerSocket {
  readyState = 1;
  bufferedAmount = 0;
  /** The page's TCP socket: what was written, by reference, and how much the stream still holds. */
  readonly _socket = {
    written: [] as Buffer[],
    writableLength: 0,
    write(data: Buffer) {
      this.written.push(data);
      return true;
    },
  };
  send(): void {}
  close(): void {}
  terminate(): void {}
}

describe('player out: frame memory', () => {
  const pcm = voiced(0.04);
  const track = analysePiece(pcm, 24000);

  it('reuses the memory of frames the kernel took at once', () => {
    const out = new PlayerOut();
    const socket = new QueuedSocket();
    out.add(socket);
    for (let i = 0; i < 200; i++) out.frame('u1', i * 0.04, pcm, 0, pcm.length, 24000, track);
    const buffers = new Set(socket._socket.written.map((b) => b.buffer));
    assert.equal(buffers.size, 1, `${buffers.size} buffers for 200 frames`);
  });

  it('does not overwrite a frame whose write is still queued in the socket', () => {
    const out = new PlayerOut();
    const socket = new QueuedSocket();
    out.add(socket);
    socket._socket.writableLength = 10_000; // the first frame waits in the stream
    out.frame('u1', 0, pcm, 0, pcm.length, 24000, track);
    const queued = socket._socket.written[0];
    const before = Buffer.from(queued);
    socket._socket.writableLength = 0;
    for (let i = 1; i < 200; i++) out.frame('u1', i * 0.04, new Int16Array(pcm.length).fill(i), 0, pcm.length, 24000, track);
    assert.deepEqual(Buffer.from(queued), before, 'the queued frame was overwritten by later frames');
    assert.deepEqual(decodeFrame(queued.subarray(4))!.samples, pcm);
  });
});

describe('utterance: piece memory', () => {
  it('gives a piece back to its slab once it has played through, not before', () => {
    const slab = new Slab(8 * 1024);
    const u = new Utterance('u1', 24000, 'audio');
    const pieces = [1, 2, 3].map((value) => {
      const { buffer, offset } = slab.take(1920);
      const pcm = new Int16Array(buffer, offset, 960).fill(value);
      u.add({ pcm, slab });
      return pcm;
    });
    assert.equal(slab.outstanding, 3);
    const first = u.takeFrame(480)!;
    assert.equal(first.piece.pcm, pieces[0]);
    u.takeFrame(480); // the rest of the first piece: still being sent
    assert.equal(slab.outstanding, 3);
    u.takeFrame(480); // the second piece begins: the first is done with
    assert.equal(slab.outstanding, 2);
    assert.equal(u.waitingPieces, 2);
  });
});

/**
 * The player channel's binary frame (src/realtime/frame-codec.ts): what PlayerOut packs is what the
 * page and the tests decode — the 10 ms mouth grid, viseme changes only, the utterance, the samples
 * — and the page's TCP socket gets whole WebSocket frames written in one piece.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PlayerOut, type PlayerSocket } from '../../src/realtime/player-out.js';
import { analysePiece } from '../../src/realtime/lipsync/analysis.js';
import { VISEMES } from '../../src/realtime/lipsync/visemes.js';
import { decodeFrame, TRACK_FLAG } from '../../src/realtime/frame-codec.js';
import { voiced } from '../support/render-client.js';

class Captured implements PlayerSocket {
  readyState = 1;
  bufferedAmount = 0;
  readonly sent: Buffer[] = [];
  send(data: string | Buffer): void {
    if (typeof data !== 'string') this.sent.push(Buffer.from(data));
  }
  close(): void {}
  terminate(): void {}
}

/** A ws-like socket whose TCP socket (`_socket`) records the bytes written to it. */
class WithRawSocket extends Captured {
  readonly written: Buffer[] = [];
  readonly _socket = { write: (chunk: Buffer) => this.written.push(Buffer.from(chunk)) };
}

describe('player frames', () => {
  it('round-trips a frame: samples, start time, the mouth per 10 ms from the grid before t, viseme changes only, the utterance id', () => {
    const pcm = voiced(0.1);
    const track = analysePiece(pcm, 24000, 'hello there');
    const out = new PlayerOut();
    const page = new Captured();
    out.add(page);
    // A 40 ms frame that starts 5 ms into a 10 ms step (offset 120 samples at 24 kHz).
    out.frame('utt_é✓', 1.25, pcm, 120, 960, 24000, track);
    const frame = decodeFrame(page.sent[0])!;
    assert.equal(frame.t, 1.25);
    assert.deepEqual([...frame.samples], [...pcm.subarray(120, 1080)]);
    const t = frame.track!;
    assert.equal(t.type, 'track');
    assert.equal(t.utterance, 'utt_é✓');
    assert.equal(t.duration, 0.04);
    assert.equal(t.mouth.t0, 1.245);
    assert.equal(t.mouth.step, 0.01);
    // Steps 0..4 of the piece's grid cover samples 120..1080.
    assert.deepEqual(
      t.mouth.values,
      [...track.mouth.subarray(0, 5)].map((v) => Math.round((v / 255) * 100) / 100),
    );
    const expected: Array<[number, string, number]> = [];
    let previous = -1;
    for (let f = 0; f < 5; f++) {
      if (track.viseme[f] !== previous)
        expected.push([Math.round((1.245 + f * 0.01) * 1000) / 1000, VISEMES[track.viseme[f]], Math.round((track.weight[f] / 255) * 100) / 100]);
      previous = track.viseme[f];
    }
    assert.deepEqual(t.visemes, expected);
    // Sequence numbers count frames.
    out.frame('utt_é✓', 1.29, pcm, 1080, 960, 24000, track);
    assert.equal(decodeFrame(page.sent[1])!.seq, decodeFrame(page.sent[0])!.seq + 1);
  });

  it('starts the samples 2-byte aligned whatever the track length, and still decodes frames whose track is JSON', () => {
    const pcm = voiced(0.04);
    const track = analysePiece(pcm, 24000);
    for (const utterance of ['a', 'ab', 'abc']) {
      const out = new PlayerOut();
      const page = new Captured();
      out.add(page);
      out.frame(utterance, 0, pcm, 0, pcm.length, 24000, track);
      const bytes = page.sent[0];
      assert.equal((bytes.readUInt32LE(12) + 16) % 2, 0);
      assert.equal(decodeFrame(bytes)!.track!.utterance, utterance);
    }
    const json = Buffer.from(
      JSON.stringify({ type: 'track', utterance: 'u', t: 2, duration: 0.01, visemes: [[2, 'aa', 1]], mouth: { t0: 2, step: 0.01, values: [0.5] } }) + ' ',
    );
    const old = Buffer.alloc(16 + json.length + 4);
    old.writeUInt32LE((7 | TRACK_FLAG) >>> 0, 0);
    old.writeDoubleLE(2, 4);
    old.writeUInt32LE(json.length, 12);
    json.copy(old, 16);
    old.writeInt16LE(-5, 16 + json.length);
    const decoded = decodeFrame(old)!;
    assert.equal(decoded.seq, 7);
    assert.deepEqual(decoded.track!.visemes, [[2, 'aa', 1]]);
    assert.deepEqual([...decoded.samples], [-5, 0]);
    assert.equal(decodeFrame(Buffer.alloc(5)), null);
  });

  it('writes each frame to the page TCP socket whole, WebSocket header and all, in one write', () => {
    const pcm = voiced(0.04);
    const track = analysePiece(pcm, 24000);
    const out = new PlayerOut();
    const page = new WithRawSocket();
    out.add(page);
    out.frame('u1', 0.5, pcm, 0, pcm.length, 24000, track);
    assert.equal(page.sent.length, 0, 'not through ws send');
    assert.equal(page.written.length, 1);
    const written = page.written[0];
    assert.equal(written[0], 0x82, 'FIN, binary');
    assert.equal(written[1], 126, 'a 16-bit length follows');
    assert.equal(written.readUInt16BE(2), written.length - 4);
    const frame = decodeFrame(written.subarray(4))!;
    assert.equal(frame.t, 0.5);
    assert.deepEqual([...frame.samples], [...pcm]);
  });

  it('sends through ws when the socket negotiated an extension (a compressed socket must not get raw frames)', () => {
    const pcm = voiced(0.04);
    const track = analysePiece(pcm, 24000);
    const out = new PlayerOut();
    const page = new (class extends WithRawSocket {
      readonly extensions = 'permessage-deflate';
    })();
    out.add(page);
    out.frame('u1', 0.5, pcm, 0, pcm.length, 24000, track);
    assert.equal(page.written.length, 0, 'nothing written past ws');
    assert.equal(page.sent.length, 1);
    assert.deepEqual([...decodeFrame(page.sent[0])!.samples], [...pcm]);
  });
});

// Load for bench/realtime.ts, in a worker thread: for each session a render socket streaming
// 3 s utterances (75 binary pieces of 40 ms at real time, then speak_end and 0.52 s of quiet) and
// a player socket receiving. Measures relay latency per piece and speak timing error.
//
// The client is a minimal WebSocket implementation over raw TCP (handshake, frame parsing, one
// pre-masked piece shared by every socket) and one scheduler for all its sessions, so that the
// load generator, which shares the machine's cores with the server, costs as little as it can:
// its own CPU is reported beside the server's. Sockets are opened (paced, a few handshakes at a
// time) before the measured window starts.
import { parentPort, workerData } from 'node:worker_threads';
import net from 'node:net';
import crypto from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const { sessions, seconds, warmup = 0 } = workerData;
// The first `warmup` seconds run the same load unmeasured (fresh processes compile their hot code
// and size their heaps then); figures count pieces sent, and utterances begun, after it.
let measureFrom = Infinity;
const RATE = 24000;
const PIECE_MS = 40;
const PIECES = 75; // 3.000 s
const QUIET_SLOTS = 13; // 0.52 s between utterances
const CYCLE = PIECES + QUIET_SLOTS;
const UTTERANCE_MS = PIECES * PIECE_MS;
const OPENING_AT_ONCE = 16;

const now = () => performance.now();

/** A client frame: FIN + opcode, masked (clients must mask), payload pre-masked once. */
function clientFrame(opcode, payload) {
  const mask = crypto.randomBytes(4);
  const length = payload.length;
  const header = length < 126 ? Buffer.from([0x80 | opcode, 0x80 | length]) : Buffer.from([0x80 | opcode, 0x80 | 126, length >> 8, length & 0xff]);
  const masked = Buffer.alloc(length);
  for (let i = 0; i < length; i++) masked[i] = payload[i] ^ mask[i & 3];
  return Buffer.concat([header, mask, masked]);
}

const pcm = Buffer.alloc((RATE * PIECE_MS * 2) / 1000);
for (let i = 0; i < pcm.length / 2; i++) pcm.writeInt16LE(Math.round(6000 * Math.sin((2 * Math.PI * 180 * i) / RATE)), i * 2);
const PIECE_FRAME = clientFrame(0x2, pcm);
const SPEAK_END_FRAME = clientFrame(0x1, Buffer.from('{"type":"agent.speak_end"}'));
const CLOSE_FRAME = clientFrame(0x8, Buffer.from([0x03, 0xe8]));
const STARTED = Buffer.from('"agent.speak_started"');
const ENDED = Buffer.from('"agent.speak_ended"');
const CONNECTED = Buffer.from('"connected"');

/**
 * Opens a WebSocket and calls onFrame(opcode, buffer, start, end) for each whole server frame
 * (servers do not mask). Resolves with the socket once the handshake's 101 arrived.
 */
function open(url, onFrame) {
  const { hostname, port, pathname, search } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port), noDelay: true });
    const key = crypto.randomBytes(16).toString('base64');
    let pending = null; // bytes of an incomplete frame (or of the handshake)
    let upgraded = false;
    socket.once('error', reject);
    socket.on('connect', () => {
      socket.write(
        `GET ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
    socket.on('data', (chunk) => {
      const buffer = pending ? Buffer.concat([pending, chunk]) : chunk;
      pending = null;
      let offset = 0;
      if (!upgraded) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) {
          pending = buffer;
          return;
        }
        const head = buffer.toString('latin1', 0, end);
        if (!head.startsWith('HTTP/1.1 101')) {
          socket.destroy();
          reject(new Error(`handshake refused: ${head.split('\r\n')[0]}`));
          return;
        }
        upgraded = true;
        socket.removeListener('error', reject);
        socket.on('error', () => {});
        resolve(socket);
        offset = end + 4;
      }
      while (buffer.length - offset >= 2) {
        const opcode = buffer[offset] & 0x0f;
        let length = buffer[offset + 1] & 0x7f;
        let headerBytes = 2;
        if (length === 126) {
          if (buffer.length - offset < 4) break;
          length = buffer.readUInt16BE(offset + 2);
          headerBytes = 4;
        } else if (length === 127) {
          if (buffer.length - offset < 10) break;
          length = Number(buffer.readBigUInt64BE(offset + 2));
          headerBytes = 10;
        }
        if (buffer.length - offset < headerBytes + length) break;
        onFrame(opcode, buffer, offset + headerBytes, offset + headerBytes + length);
        offset += headerBytes + length;
      }
      if (offset < buffer.length) pending = buffer.subarray(offset);
    });
  });
}

// What the generator records must not make it collect garbage (a pause here would be measured as
// the server's latency): latencies go into a fixed histogram and send times into a small ring.
const BIN_MS = 0.05;
const latencyBins = new Uint32Array(200_000); // 0.05 ms bins up to 10 s; the last bin holds the rest
const recordLatency = (ms) => latencyBins[Math.min(latencyBins.length - 1, Math.max(0, Math.floor(ms / BIN_MS)))]++;
const IN_FLIGHT = 256; // pieces a session can have sent and not yet seen relayed, far above real
const timingErrors = [];
let missing = 0;

class Driven {
  constructor(session) {
    this.session = session;
    this.sentAt = new Float64Array(IN_FLIGHT);
    this.sent = 0;
    this.received = 0;
    this.started = 0;
    this.connected = false;
    this.offset = Math.floor(Math.random() * CYCLE);
    this.done = false;
  }

  async open() {
    if (!this.session.player_url) throw new Error(`the session did not start: ${JSON.stringify(this.session)}`);
    const playerUrl = this.session.player_url.replace(/^http/, 'ws') + '/ws';
    this.player = await open(playerUrl, (opcode) => {
      if (opcode !== 0x2) return;
      const t = now();
      if (this.received < this.sent && this.sent - this.received <= IN_FLIGHT) {
        const sentAt = this.sentAt[this.received % IN_FLIGHT];
        if (sentAt >= measureFrom) recordLatency(t - sentAt);
      }
      this.received++;
    });
    let onConnected;
    const connected = new Promise((resolve) => (onConnected = resolve));
    this.render = await open(this.session.ws_url, (opcode, buffer, start, end) => {
      if (opcode !== 0x1) return;
      const text = buffer.subarray(start, end);
      if (text.indexOf(STARTED) >= 0) this.started = now();
      else if (text.indexOf(ENDED) >= 0) {
        if (this.started >= measureFrom) timingErrors.push(now() - this.started - UTTERANCE_MS);
      } else if (!this.connected && text.indexOf(CONNECTED) >= 0) {
        this.connected = true;
        onConnected();
      }
    });
    await connected;
  }

  /**
   * Slot k of the run (one slot per 40 ms). Each session starts its first utterance at its own
   * slot within the first cycle, so utterance starts and ends are spread over the run as real
   * callers' are, not all at once; only utterances that can end before `lastSlot` are begun.
   */
  step(k, lastSlot) {
    if (k < this.offset) return;
    const position = (k - this.offset) % CYCLE;
    if (position === 0 && k + PIECES > lastSlot) this.done = true;
    if (this.done) return;
    if (position < PIECES) {
      this.sentAt[this.sent++ % IN_FLIGHT] = now();
      this.render.write(PIECE_FRAME);
      if (position === PIECES - 1) this.render.write(SPEAK_END_FRAME);
    }
  }
}

const driven = sessions.map((s) => new Driven(s));
// Paced opening, before anything is measured.
for (let i = 0; i < driven.length; i += OPENING_AT_ONCE) {
  await Promise.all(driven.slice(i, i + OPENING_AT_ONCE).map((d) => d.open()));
}
parentPort.postMessage({ opened: true });
await new Promise((resolve) => parentPort.once('message', resolve));

// One scheduler for every session: each has a phase within the 40 ms piece (spread evenly so
// sends interleave) and its own first slot (Driven.step), and the timer wakes every millisecond to
// send what is due. Only whole utterances are played, so every speak_ended − speak_started
// compares with 3 s.
const begin = now();
const lastSlot = Math.max(2 * CYCLE, Math.floor(((seconds + warmup) * 1000) / PIECE_MS));
measureFrom = begin + warmup * 1000;
let measuring = false;
const phases = driven.map((d, i) => ({ d, phase: (i / driven.length) * PIECE_MS, next: 0 }));
phases.sort((a, b) => a.phase - b.phase);
const loopDelay = monitorEventLoopDelay({ resolution: 5 });
loopDelay.enable();
await new Promise((resolve) => {
  const timer = setInterval(() => {
    const elapsed = now() - begin;
    if (!measuring && elapsed >= warmup * 1000) {
      measuring = true;
      loopDelay.reset();
      parentPort.postMessage({ measuring: true });
    }
    let busy = false;
    for (const p of phases) {
      while (p.next < lastSlot && p.phase + p.next * PIECE_MS <= elapsed) {
        p.d.step(p.next, lastSlot);
        p.next++;
      }
      if (p.next < lastSlot) busy = true;
    }
    if (!busy) {
      clearInterval(timer);
      resolve();
    }
  }, 1);
});
const wallSeconds = (now() - measureFrom) / 1000;
await new Promise((r) => setTimeout(r, 600));
loopDelay.disable();
for (const d of driven) {
  missing += Math.max(0, d.sent - d.received);
  d.render.end(CLOSE_FRAME);
  d.player.end(CLOSE_FRAME);
}
parentPort.postMessage({ latencyBins, binMs: BIN_MS, timingErrors, missing, wallSeconds, loopDelayP99: loopDelay.percentile(99) / 1e6 });

/**
 * Server CPU per audio frame on the real-time path, without sockets: N live sessions in this
 * process on a virtual clock, each fed a 40 ms piece of 24 kHz speech-like audio when due (with a
 * word of text on every tenth, so both lip-sync paths run), ticked every 5 ms as the hub does, with
 * one player connection that takes each packed frame. Measures process CPU time (user + system),
 * which a loaded machine disturbs far less than latency, per frame and per session-second.
 *
 *   node --import tsx bench/realtime-frame.ts [N ...]     (default: 200 1000)
 *
 * What it leaves out, on purpose: the WebSocket read of the piece and the write of the frame (ws
 * framing and the kernel), measured end to end by bench/realtime.ts.
 */
import os from 'node:os';
import { RealtimeSession } from '../src/realtime/session.js';
import { realtimeMetrics } from '../src/realtime/metrics.js';
import { voiced } from '../test/support/render-client.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const PIECE = 0.04;
const TICK = 0.005;

function run(n: number) {
  let now = 0;
  let bytesOut = 0;
  const socket = {
    readyState: 1,
    bufferedAmount: 0,
    send: (data: string | Buffer) => {
      bytesOut += typeof data === 'string' ? data.length : data.byteLength;
    },
    close: () => {},
    terminate: () => {},
  };
  const sessions = Array.from({ length: n }, (_, i) => {
    const s = new RealtimeSession({
      sessionId: `s${i}`,
      sampleRate: 24000,
      stage: { camera: 'mid', camera_mode: 'auto', hold: false, backdrop: null, cameras: ['mid'], face_light: 1 },
      speaker: async function* () {},
      findBackdrop: () => undefined,
      now: () => now,
    });
    s.player.add(socket);
    return s;
  });
  // Distinct pieces (a real caller's audio differs piece to piece), made before the clock starts.
  const audio = voiced(3.0);
  const piece = Math.round(24000 * PIECE);
  const pieces = Array.from({ length: 75 }, (_, k) => new Uint8Array(audio.buffer, k * piece * 2, piece * 2).slice());
  const offsets = sessions.map(() => Math.random() * PIECE);
  const sent = sessions.map(() => 0);
  const framesBefore = realtimeMetrics.framesRelayed;
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  for (now = 0; now < SECONDS; now += TICK) {
    for (let i = 0; i < n; i++) {
      const s = sessions[i];
      // Pieces arrive at real time (3 s utterances, then speak_end).
      while (offsets[i] + sent[i] * PIECE <= now) {
        const k = sent[i] % 75;
        s.audio(pieces[k], undefined, k % 10 === 0 ? 'hello there' : undefined);
        if (k === 74) s.speakEnd();
        sent[i]++;
      }
      s.tick(now);
    }
  }
  const cpu = process.cpuUsage(cpuBefore);
  const wall = (performance.now() - wallBefore) / 1000;
  const frames = realtimeMetrics.framesRelayed - framesBefore;
  for (const s of sessions) s.close();
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  return {
    n,
    frames,
    cpuSeconds,
    wall,
    usPerFrame: (cpuSeconds * 1e6) / frames,
    msPerSessionSecond: (cpuSeconds * 1000) / (n * SECONDS),
    mbOut: bytesOut / 1e6,
  };
}

const counts = process.argv.slice(2).map(Number).filter(Boolean);
const rows = (counts.length ? counts : [200, 1000]).map(run);
console.log(
  `\nReal-time path without sockets, ${SECONDS} s of virtual time per run, 24 kHz in 40 ms pieces; ${os.cpus().length} cores; 1-minute load average ${os.loadavg()[0].toFixed(1)}\n`,
);
console.log('| sessions | frames | CPU per frame | CPU per session-second | one core carries (this part alone) | bytes to players |');
console.log('|---:|---:|---:|---:|---:|---:|');
for (const r of rows)
  console.log(
    `| ${r.n} | ${r.frames} | ${r.usPerFrame.toFixed(1)} µs | ${r.msPerSessionSecond.toFixed(2)} ms | ${Math.floor(1000 / r.msPerSessionSecond)} sessions | ${r.mbOut.toFixed(0)} MB |`,
  );

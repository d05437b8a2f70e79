// Load for bench/realtime.ts, in a worker thread: for each session a render socket streaming
// 3 s utterances (40 ms binary pieces at real time, then speak_end and 0.5 s of quiet) and a
// player socket receiving. Measures relay latency per piece and speak timing error.
import { parentPort, workerData } from 'node:worker_threads';
import WebSocket from 'ws';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const { sessions, seconds } = workerData;
const RATE = 24000;
const PIECE = 0.04;
const UTTERANCE = 3.0;
const PIECES = Math.round(UTTERANCE / PIECE);
const piece = Buffer.alloc(RATE * PIECE * 2);
for (let i = 0; i < piece.length / 2; i++) piece.writeInt16LE(Math.round(6000 * Math.sin((2 * Math.PI * 180 * i) / RATE)), i * 2);

const latencies = [];
const timingErrors = [];
let missing = 0;
const now = () => performance.now();

async function open(url) {
  const socket = new WebSocket(url, { perMessageDeflate: false });
  await new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject); });
  return socket;
}

async function drive(session, until) {
  const player = await open(session.player_url.replace(/^http/, 'ws') + '/ws');
  const render = await open(session.ws_url);
  const sentAt = [];
  let received = 0;
  player.on('message', (data, isBinary) => {
    if (!isBinary) return;
    const t = now();
    if (received < sentAt.length) latencies.push(t - sentAt[received]);
    received++;
  });
  let started = 0;
  render.on('message', (data) => {
    const text = data.toString();
    if (text.includes('"agent.speak_started"')) started = now();
    else if (text.includes('"agent.speak_ended"') && started) timingErrors.push(now() - started - UTTERANCE * 1000);
  });
  // Spread session starts over one piece so sends interleave.
  await new Promise((r) => setTimeout(r, Math.random() * PIECE * 1000));
  // Only whole utterances, so every speak_ended − speak_started compares with 3 s.
  while (now() + (UTTERANCE + 0.5) * 1000 < until) {
    const t0 = now();
    for (let k = 0; k < PIECES; k++) {
      const due = t0 + k * PIECE * 1000;
      const wait = due - now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      sentAt.push(now());
      render.send(piece, { binary: true });
    }
    render.send('{"type":"agent.speak_end"}');
    await new Promise((r) => setTimeout(r, UTTERANCE * 1000 + 500 - (now() - t0)));
  }
  await new Promise((r) => setTimeout(r, 300));
  missing += Math.max(0, sentAt.length - received);
  render.close();
  player.close();
}

// This worker's own event-loop delay: when it is high, client-side times are late, not the server.
const loopDelay = monitorEventLoopDelay({ resolution: 5 });
loopDelay.enable();
const begin = now();
await Promise.all(sessions.map((s) => drive(s, begin + seconds * 1000)));
loopDelay.disable();
parentPort.postMessage({ latencies, timingErrors, missing, wallSeconds: (now() - begin) / 1000, loopDelayP99: loopDelay.percentile(99) / 1e6 });

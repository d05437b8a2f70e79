/**
 * Barge-in and echo with a loud, long agent voice (issue 26, item 5).
 *
 *     node --import tsx bench/barge-in.ts [--runs 3] [--room] [--at 3000]
 *
 * The agent's voice is the offline engine's real speech (about 13 s), peak-normalised to 0.95 of
 * full scale, Kokoro's level; the visitor is a LibriVox recording (pocketsphinx-testdata) at its
 * own level. The microphone gets the agent's voice back at a delay of 150 ms and a gain (as through
 * speakers; with `--room` through a reverberant room as well, test/listening/support/room.ts),
 * room noise, and the visitor from 3 s in (echo path known; `--at` ms) or 0.4 s in (not yet).
 * Printed, for each echo gain, from the visitor's voice onset, with the echo canceller (shipped)
 * and, where it says "guard alone → with canceller", the same audio with the canceller off first:
 * - voice stops: the listener's first decision that stops the agent's voice at the page (`pause`,
 *   bargeInStarted);
 * - turn taken: the barge-in decision (the answer dropped, `interrupt`);
 * - whether the echo alone paused or interrupted the agent;
 * - a 250 ms voiced burst (a back-channel's length, cut from the visitor's recording) at 3 s: whether
 *   it paused the agent, and how long the agent stayed silent before resuming.
 * Times are on the clock of the audio pushed (the VAD's decisions depend on the audio only), so
 * machine load does not change them; `--runs` repeats everything to show it.
 *
 * `--live-echo G` feeds the page's own playback back into its microphone at gain G in the live
 * trials (played at each frame's time, 100 ms after the first arrived, 30 ms to the microphone),
 * and compares the listener without and with its echo canceller; `--alone` leaves the visitor out
 * (what the echo alone does, counted from the microphone's start).
 *
 * `--live N` adds the whole path on a real server (PGlite, the offline voice, the real player
 * channel), N trials each way, alternated: a page streams a quiet room and then the visitor (no
 * echo: headphones) in 20 ms microphone frames at real time while the agent talks; measured on the
 * page's wall clock from the moment the visitor's onset sample was captured to the `pause` (now) or
 * `interrupt` (before) message arriving at the page, and to the `interrupt` (turn taken). The
 * page's own stop (its next render quantum; the mouth closes on the next animation frame) is
 * measured in test/player/player.test.ts.
 */
import os from 'node:os';
import WebSocket from 'ws';
import { startTestApp } from '../test/support/app.js';
import type { ListenerOptions } from '../src/conversation/listening/index.js';
import { MIC_CHUNK } from '../src/player/client/mic-worklet.js';
import { decodeFrame } from '../src/realtime/frame-codec.js';
import { VisitorListener } from '../src/conversation/listening/listener.js';
import { room } from '../test/listening/support/room.js';
import { PocketsphinxRecognizer } from '../src/speech/recognition/pocketsphinx.js';
import { speechConfig } from '../src/core/config.js';
import { SpeechService } from '../src/speech/synthesis.js';
import { concat, librivox, silence, speechSpan, testdataInstalled } from '../test/recognition/recordings.js';

if (!testdataInstalled()) {
  console.error('pocketsphinx-testdata is not installed');
  process.exit(1);
}

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 1;
const ROOM = process.argv.includes('--room');
const atArg = process.argv.indexOf('--at');
/** When the visitor starts in the "echo path known" columns (ms into the agent's voice). */
const AT = atArg > 0 ? Number(process.argv[atArg + 1]) : 3000;
const liveEchoArg = process.argv.indexOf('--live-echo');
/** Gain of the page's own playback fed back into its microphone in the live trials (0: none). */
const LIVE_ECHO = liveEchoArg > 0 ? Number(process.argv[liveEchoArg + 1]) : 0;
const LIVE_ALONE = process.argv.includes('--alone');
const liveArg = process.argv.indexOf('--live');
const LIVE = liveArg > 0 ? Number(process.argv[liveArg + 1]) : 0;
const CHUNK = 320;
/** A back-channel's length ("mm-hm"): what must pause the agent at most briefly and never interrupt it. */
const BURST_MS = 250;
const TEXT =
  'Thank you for asking. We are open every day from nine in the morning until six in the evening, and on Saturdays until noon. ' +
  'Parking is free for customers, and the entrance is on the side street next to the bakery.';
const quiet = { info() {}, warn() {}, error() {} };
const speech = new SpeechService(speechConfig({}, 'memory'), { logger: quiet, fliteWorkers: 1 });
const { pcm } = await speech.synthesizeAll({ text: TEXT, provider: 'kokoro', voiceId: 'af_heart', sampleRate: 16000 });
let max = 1;
for (const s of pcm) max = Math.max(max, Math.abs(s));
const agent = Int16Array.from(pcm, (s) => Math.round((s * 0.95 * 32767) / max));
const visitor = librivox()[2];
const onsetMs = speechSpan(visitor.pcm).startMs;
const burst = visitor.pcm.slice(Math.round(onsetMs * 16), Math.round((onsetMs + BURST_MS) * 16));
const roomNoise = (() => {
  let seed = 7;
  return Int16Array.from({ length: agent.length + 16000 }, () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return ((seed / 0x7fffffff) * 2 - 1) * 100;
  });
})();
const noiseAt = (i: number) => roomNoise[i] ?? 0;

interface Heard {
  pauses: number[];
  resumes: number[];
  bargeIns: number[];
}

/**
 * One conversation moment, in a closed loop as at a real page: the agent's voice plays (and comes
 * back through the speakers at `gain`, 150 ms late) until the listener pauses it, goes on when it
 * resumes it, and stops for good at the barge-in. `voice` is the visitor's side (already placed in time).
 */
async function run(gain: number, voice: Int16Array, options: ListenerOptions = {}): Promise<Heard> {
  const heard: Heard = { pauses: [], resumes: [], bargeIns: [] };
  let clock = 1000;
  let playing = true;
  let stopped = false;
  let position = 0;
  const listener = new VisitorListener(
    new PocketsphinxRecognizer(),
    {
      bargeInStarted: () => {
        heard.pauses.push(clock);
        playing = false;
      },
      bargeInDropped: () => {
        heard.resumes.push(clock);
        playing = !stopped;
      },
      bargeIn: () => {
        heard.bargeIns.push(clock);
        playing = false;
        stopped = true;
      },
      turn: () => {},
    },
    { now: () => clock, ...options },
  );
  listener.setAgentTalking(true);
  const total = agent.length + 8000;
  const played = new Int16Array(total + 4000); // what the speakers played, sample by sample
  const delay = 150 * 16;
  const taps = ROOM ? room(gain) : undefined;
  const reverb = new Float32Array(taps ? total + taps.length + 4000 : 0); // the room's reflections still to come
  for (let i = 0; i < total; i += CHUNK) {
    const end = Math.min(total, i + CHUNK);
    const n = end - i;
    clock += (n * 1000) / 16000;
    if (playing && position < agent.length) {
      const out = agent.subarray(position, Math.min(agent.length, position + n));
      played.set(out, i);
      // Through the room: each played sample spreads over the reflections that follow it.
      if (taps) for (let k = 0; k < out.length; k++) if (out[k]) for (let j = 16; j < taps.length; j++) reverb[i + k + j] += out[k] * taps[j];
      listener.agentAudio(out, 16000, clock - (n * 1000) / 16000);
      position += out.length;
    }
    listener.setAgentTalking(!stopped && position < agent.length);
    const mic = new Int16Array(n);
    for (let k = 0; k < n; k++) {
      const at = i + k;
      const echo = at >= delay ? played[at - delay] * gain + (taps ? reverb[at - delay] : 0) : 0;
      mic[k] = Math.max(-32768, Math.min(32767, Math.round(echo + (voice[at] ?? 0) + noiseAt(at))));
    }
    listener.push(mic, clock);
    // Every chunk through the VAD before the next: an event is stamped with the clock of the audio that caused it.
    await listener.idle();
  }
  await listener.idle();
  listener.close();
  return heard;
}

const rms = (p: Int16Array) => {
  let s = 0;
  let n = 0;
  for (const v of p)
    if (Math.abs(v) > 300) {
      s += (v / 32768) ** 2;
      n++;
    }
  return Math.sqrt(s / Math.max(1, n));
};
const db = (x: number) => (20 * Math.log10(x)).toFixed(1);
const after = (times: number[], onset: number) => (times.length ? `${Math.round(times[0] - onset)} ms` : '—');
console.log(`agent voice ${(agent.length / 16000).toFixed(1)} s, speech rms ${db(rms(agent))} dBFS; visitor rms ${db(rms(visitor.pcm))} dBFS`);
console.log(
  `load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);
const turn = (h: Heard, onset: number) => (h.bargeIns.length ? after(h.bargeIns, onset) : 'not interrupted');
for (let round = 1; round <= RUNS; round++) {
  if (RUNS > 1) console.log(`run ${round} of ${RUNS}\n`);
  console.log(`Echo path: ${ROOM ? 'a reverberant room (direct sound and 180 ms of reflections), 150 ms late' : "a copy of the agent's voice, 150 ms late"}.`);
  console.log('"guard alone → with canceller": the same audio with the echo canceller off, then on (shipped).\n');
  console.log(
    `| echo gain | echo vs visitor | echo alone: pauses / interrupts, guard alone → with canceller | at ${AT / 1000} s: voice stops, guard alone → with canceller | at ${AT / 1000} s: turn taken, guard alone → with canceller | at 0.4 s: voice stops | at 0.4 s: turn taken | ${BURST_MS} ms burst at 3 s: paused for |`,
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const gain of [0, 0.15, 0.3, 0.5, 0.7, 1.0, 1.6]) {
    const alone = await run(gain, new Int16Array(0));
    const aloneGuard = await run(gain, new Int16Array(0), { cancelEcho: false });
    const cells: string[] = [];
    {
      const voice = concat(silence(AT), visitor.pcm);
      const onset = 1000 + AT + onsetMs;
      const guardAlone = await run(gain, voice, { cancelEcho: false });
      const now = await run(gain, voice);
      cells.push(`${after(guardAlone.pauses, onset)} → ${after(now.pauses, onset)}`, `${turn(guardAlone, onset)} → ${turn(now, onset)}`);
    }
    {
      const voice = concat(silence(400), visitor.pcm);
      const onset = 1000 + 400 + onsetMs;
      const now = await run(gain, voice);
      cells.push(after(now.pauses, onset), turn(now, onset));
    }
    const b = await run(gain, concat(silence(3000), burst));
    const burstCell = b.bargeIns.length
      ? 'interrupted'
      : b.pauses.length
        ? b.resumes.length
          ? `${Math.round(b.resumes[0] - b.pauses[0])} ms, resumed`
          : 'paused, never resumed'
        : 'not paused';
    const ratio = gain ? `${db((gain * rms(agent)) / rms(visitor.pcm))} dB` : '—';
    const falseAlarm = (h: Heard) => `${h.pauses.length ? `YES (${h.pauses.length})` : 'no'} / ${h.bargeIns.length ? 'YES' : 'no'}`;
    const echoCell = `${falseAlarm(aloneGuard)} → ${falseAlarm(alone)}`;
    console.log(`| ${gain} | ${ratio} | ${echoCell} | ${cells[0]} | ${cells[1]} | ${cells[2]} | ${cells[3]} | ${burstCell} |`);
  }
  console.log('');
}
await speech.close();

if (LIVE > 0) await live(LIVE);

/** The whole path on a real server; see the header. */
async function live(trials: number): Promise<void> {
  const t = await startTestApp('pglite', { STT_ENGINE: 'pocketsphinx', RATE_LIMIT_PER_SECOND: '100000' });
  try {
    await t.context.speech.start();
    const agentId = (await t.request('POST', '/v1/agent/create', { body: { name: 'Ava', concurrency_limit: 100 } })).body.id;
    const lead = 2500;
    // --alone: no visitor at all (the echo alone); what pauses or interrupts the agent is counted from the microphone's start.
    const voice = LIVE_ALONE ? silence(lead + 5000) : concat(silence(lead), visitor.pcm, silence(1500));
    const mic = Int16Array.from(voice, (v, i) => Math.max(-32768, Math.min(32767, v + 3 * roomNoise[i % roomNoise.length])));
    const onsetSample = (lead + onsetMs) * 16;
    const results = { before: { stop: [] as number[], turn: [] as number[] }, now: { stop: [] as number[], turn: [] as number[] } };
    console.log(
      `## Live (real server, page frames of ${MIC_CHUNK / 16} ms at real time, ${LIVE_ECHO ? `its own playback back in the microphone at gain ${LIVE_ECHO}, 130 ms after the frame arrived` : 'no echo'}), load average ${os.loadavg()[0].toFixed(2)}\n`,
    );
    for (let i = 0; i < trials * 2; i++) {
      const pausing = i % 2 === 1;
      const started = await t.request('POST', '/v1/sessions', { body: { agent_id: agentId } });
      const id = started.body.session_id as string;
      const socket = new WebSocket(`${started.body.player_url.replace(/^http/, 'ws')}/ws`);
      const messages: Array<{ at: number; type: string; state?: string }> = [];
      // With --live-echo: a page that plays each frame at its time `t` (the first one 100 ms after it
      // arrived, as a playout buffer) through speakers that reach its microphone 30 ms later.
      let rate = 24000;
      let playOrigin: number | undefined;
      const played: Array<{ at: number; pcm: Int16Array }> = [];
      await new Promise<void>((resolve, reject) => {
        socket.once('error', reject);
        socket.on('message', (data: Buffer, binary: boolean) => {
          if (binary) {
            const frame = LIVE_ECHO ? decodeFrame(data) : null;
            if (!frame) return;
            playOrigin ??= performance.now() + 100 - frame.t * 1000;
            played.push({ at: playOrigin + frame.t * 1000, pcm: frame.samples });
            if (played.length > 2000) played.shift();
            return;
          }
          const m = JSON.parse(data.toString());
          if (m.type === 'hello') rate = m.sample_rate;
          messages.push({ at: performance.now(), type: m.type, state: m.state });
          if (m.type === 'hello') resolve();
        });
      });
      const conversation = t.context.conversationLoop.get(id)! as unknown as { deps: { listenerOptions?: ListenerOptions } };
      // Without an echo "before" is the listener not pausing; with one, the listener without its canceller.
      if (!pausing) conversation.deps.listenerOptions = { ...conversation.deps.listenerOptions, ...(LIVE_ECHO ? { cancelEcho: false } : { pauseAfterMs: 0 }) };
      await t.request('POST', `/v1/sessions/${id}/commands`, { body: { type: 'agent.speak_text', text: `${TEXT} ${TEXT}` } });
      for (const deadline = Date.now() + 20_000; !messages.some((m) => m.state === 'talking') && Date.now() < deadline; ) await sleep(10);
      // The microphone at real time, 20 ms frames; when the onset sample was captured, on this clock.
      let onsetAt = 0;
      const began = performance.now();
      let seq = 0;
      for (let k = 0; k < mic.length; k += MIC_CHUNK) {
        const piece = mic.slice(k, Math.min(mic.length, k + MIC_CHUNK));
        const due = began + ((k + piece.length) / 16000) * 1000;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        if (LIVE_ECHO) addPlayed(piece, began + (k / 16000) * 1000 - 30, played, rate, LIVE_ECHO);
        const bytes = Buffer.alloc(4 + piece.length * 2);
        bytes.writeUInt32LE(seq++, 0);
        Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).copy(bytes, 4);
        socket.send(bytes, { binary: true });
        if (LIVE_ALONE) onsetAt ||= began;
        else if (!onsetAt && k + piece.length > onsetSample) onsetAt = performance.now() - ((k + piece.length - onsetSample) / 16000) * 1000;
      }
      await sleep(300);
      socket.close();
      const first = (type: string) => messages.find((m) => m.type === type && m.at > onsetAt)?.at;
      const turn = first('interrupt');
      const stop = pausing || LIVE_ECHO ? first('pause') : turn;
      const r = results[pausing ? 'now' : 'before'];
      if (stop !== undefined) r.stop.push(stop - onsetAt);
      if (turn !== undefined) r.turn.push(turn - onsetAt);
      console.error(
        `trial ${i + 1} (${pausing ? 'pause' : 'before'}): voice stops ${stop === undefined ? '—' : Math.round(stop - onsetAt)} ms, turn ${turn === undefined ? '—' : Math.round(turn - onsetAt)} ms; load ${os.loadavg()[0].toFixed(2)}`,
      );
    }
    const median = (v: number[]) => (v.length ? Math.round([...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]) : NaN);
    const range = (v: number[]) => (v.length ? `${Math.round(Math.min(...v))}–${Math.round(Math.max(...v))}` : '—');
    console.log(`| from the visitor's onset to the page getting | before (${LIVE_ECHO ? 'no canceller' : 'no pause'}): median, range | now: median, range |`);
    console.log('|---|---|---|');
    console.log(
      `| the voice stopping (\`interrupt\` before, \`pause\` now) | ${median(results.before.stop)} ms, ${range(results.before.stop)} (${results.before.stop.length}/${trials}) | ${median(results.now.stop)} ms, ${range(results.now.stop)} (${results.now.stop.length}/${trials}) |`,
    );
    console.log(
      `| the turn taken (\`interrupt\`) | ${median(results.before.turn)} ms, ${range(results.before.turn)} | ${median(results.now.turn)} ms, ${range(results.now.turn)} |`,
    );
  } finally {
    await t.close();
  }
}

/** Adds to `piece` (16 kHz, its first sample at `atMs` on the page's playback clock) what the page played then, at `gain`. */
function addPlayed(piece: Int16Array, atMs: number, played: Array<{ at: number; pcm: Int16Array }>, rate: number, gain: number): void {
  for (const frame of played) {
    const endMs = frame.at + (frame.pcm.length / rate) * 1000;
    if (endMs < atMs || frame.at > atMs + (piece.length / 16000) * 1000) continue;
    for (let i = 0; i < piece.length; i++) {
      const position = ((atMs + (i / 16000) * 1000 - frame.at) / 1000) * rate;
      const j = Math.floor(position);
      if (j < 0 || j + 1 >= frame.pcm.length) continue;
      const value = frame.pcm[j] + (frame.pcm[j + 1] - frame.pcm[j]) * (position - j);
      piece[i] = Math.max(-32768, Math.min(32767, Math.round(piece[i] + value * gain)));
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

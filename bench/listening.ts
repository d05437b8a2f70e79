/**
 * The listening path's cost and delays.
 *
 * 1. Cost per 32 ms frame: Silero VAD (onnxruntime-node), the echo guard while the agent talks,
 *    and the whole listener per frame, on real speech.
 * 2. End-of-turn delay over N turns (default 30) played in real time in 20 ms pieces, as the player
 *    page sends them: from the end of the last word (known from the audio) to the `turn` event,
 *    split into the silence wait (last word → turn decided) and recognition (turn decided →
 *    transcript), with pocketsphinx (the engine every machine here has). Then the CPU one talking
 *    visitor costs: this process's CPU plus the decoders' (child processes), per second of audio.
 *
 *   node --import tsx bench/listening.ts [--turns 30] [--no-speculate]
 */
import fs from 'node:fs';
import os from 'node:os';
import { EchoCanceller } from '../src/conversation/listening/echo-canceller.js';
import { EchoGuard } from '../src/conversation/listening/echo-guard.js';
import { PitchTrack } from '../src/conversation/listening/pitch.js';
import { PITCH_OFF } from '../src/conversation/listening/end-of-turn.js';
import { VisitorListener } from '../src/conversation/listening/listener.js';
import type { VisitorTurnHeard } from '../src/conversation/listening/types.js';
import { SileroVad, VAD_FRAME } from '../src/conversation/listening/vad.js';
import { PocketsphinxRecognizer } from '../src/speech/recognition/pocketsphinx.js';
import { wordErrors } from '../src/speech/recognition/wer.js';
import { cards, concat, jfk, librivox, silence, speechSpan, testdataInstalled, type Recording } from '../test/recognition/recordings.js';

const args = process.argv.slice(2);
const TURNS = Number(args[args.indexOf('--turns') + 1]) || 30;
const SPECULATE = !args.includes('--no-speculate');

function cpuSeconds(): { self: number; children: number } {
  const usage = process.cpuUsage();
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return { self: (usage.user + usage.system) / 1e6, children: (Number(fields[13]) + Number(fields[14])) / 100 };
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))];
}

const fmt = (ms: number) => `${Math.round(ms)} ms`;

async function frameCosts(speech: Int16Array) {
  const frames: Float32Array[] = [];
  for (let i = 0; i + VAD_FRAME <= speech.length; i += VAD_FRAME) frames.push(Float32Array.from(speech.subarray(i, i + VAD_FRAME), (s) => s / 32768));
  const vad = await SileroVad.create();
  for (const f of frames.slice(0, 50)) await vad.probability(f); // warm-up
  const vadUs: number[] = [];
  for (let round = 0; round < 3; round++) {
    for (const f of frames) {
      const t = performance.now();
      await vad.probability(f);
      vadUs.push((performance.now() - t) * 1000);
    }
  }
  // Echo guard with the agent talking: its audio added and the microphone frame checked.
  const guard = new EchoGuard();
  const guardUs: number[] = [];
  let clock = 0;
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i + VAD_FRAME <= speech.length; i += VAD_FRAME) {
      clock += 32;
      const frame = speech.subarray(i, i + VAD_FRAME);
      const t = performance.now();
      guard.addAgentAudio(frame, 16000, clock - 32);
      guard.visitorShare(frame, clock + 150);
      guardUs.push((performance.now() - t) * 1000);
    }
  }
  // Echo canceller with the agent talking and its echo in the microphone (150 ms, gain 0.5), the
  // path known: the reference added and the frame cancelled, both filters running.
  const canceller = new EchoCanceller();
  const cancellerUs: number[] = [];
  clock = 0;
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i + VAD_FRAME <= speech.length; i += VAD_FRAME) {
      clock += 32;
      const frame = speech.subarray(i, i + VAD_FRAME);
      const mic = Int16Array.from(frame, (_, k) => (i + k >= 2400 ? speech[i + k - 2400] * 0.5 : 0));
      const t = performance.now();
      canceller.addAgentAudio(frame, 16000, clock - 32);
      canceller.process(mic, clock, { delayMs: 150, gain: 0.5 });
      cancellerUs.push((performance.now() - t) * 1000);
    }
  }
  // Pitch (YIN) of one voiced frame, as the listener runs it on every voiced frame of a turn.
  const pitchUs: number[] = [];
  const track = new PitchTrack();
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i + VAD_FRAME <= speech.length; i += VAD_FRAME) {
      const t = performance.now();
      track.push(speech.subarray(i, i + VAD_FRAME));
      pitchUs.push((performance.now() - t) * 1000);
    }
  }
  // The whole listener per frame (VAD + guard + turn logic), main-thread CPU, recognition excluded;
  // with the pitch of voiced frames (the shipped end of turn) and without it (the rule before it),
  // alternated round by round so both see the same load.
  const perFrame = { pitch: { us: 0, frames: 0 }, none: { us: 0, frames: 0 } };
  for (let round = 0; round < 6; round++) {
    const withPitch = round % 2 === 0;
    const listener = new VisitorListener(
      { name: 'none', transcribe: async () => ({ text: '' }), close: async () => {} },
      { turn: () => {} },
      withPitch ? {} : { endOfTurn: PITCH_OFF },
    );
    await listener.idle();
    const before = process.cpuUsage();
    let pushed = 0;
    for (let i = 0; i + 320 <= speech.length; i += 320) {
      listener.push(speech.subarray(i, i + 320), (pushed += 20));
      if (i % (320 * 16) === 0) await listener.idle();
    }
    await listener.idle();
    const used = process.cpuUsage(before);
    listener.close();
    const cell = withPitch ? perFrame.pitch : perFrame.none;
    cell.us += used.user + used.system;
    cell.frames += Math.floor(((pushed / 1000) * 16000) / VAD_FRAME);
  }
  const perFrameUs = perFrame.pitch.us / perFrame.pitch.frames;
  const withoutPitchUs = perFrame.none.us / perFrame.none.frames;
  const nFrames = perFrame.pitch.frames;
  console.log('### Cost per 32 ms frame\n');
  console.log('| part | mean | p50 | p99 |');
  console.log('|---|---:|---:|---:|');
  const row = (name: string, v: number[]) =>
    console.log(`| ${name} | ${(v.reduce((a, b) => a + b, 0) / v.length).toFixed(0)} µs | ${pct(v, 0.5).toFixed(0)} µs | ${pct(v, 0.99).toFixed(0)} µs |`);
  row('Silero VAD (onnxruntime-node, 1 thread)', vadUs);
  row('echo guard (agent talking)', guardUs);
  row('echo canceller (agent talking, its echo in the microphone)', cancellerUs);
  row('pitch of a frame (YIN, voiced frames only)', pitchUs);
  console.log(`| whole listener, CPU (VAD + guard + pitch + turn logic) | ${perFrameUs.toFixed(0)} µs | | |`);
  console.log(`| whole listener without pitch (the end of turn before it) | ${withoutPitchUs.toFixed(0)} µs | | |`);
  console.log(
    `\nOne listening visitor: ${((perFrameUs / 32000) * 100).toFixed(2)} % of a core for the frame path (${nFrames} frames; without pitch ${((withoutPitchUs / 32000) * 100).toFixed(2)} %).\n`,
  );
}

async function endOfTurn(clips: Recording[]) {
  const recognizer = new PocketsphinxRecognizer(undefined, 2);
  const turns: Array<VisitorTurnHeard & { lastWordAt: number; reference: string }> = [];
  let expected: { lastWordAt: number; reference: string } | undefined;
  const listener = new VisitorListener(
    recognizer,
    {
      turn: (turn) => {
        if (expected) turns.push({ ...turn, ...expected });
        else console.error(`a turn ended before the clip's last word: "${turn.text}"`);
      },
      error: (e) => console.error('error:', e.message),
    },
    { speculateAfterMs: SPECULATE ? 250 : 0 },
  );
  await listener.idle();
  const cpu0 = cpuSeconds();
  let audioSeconds = 0;
  const began = performance.now();
  const push = async (pcm: Int16Array, onPiece?: (index: number, at: number) => void) => {
    // Paced from the clip's own start: the wait for the previous turn's transcript is not made up.
    const start = performance.now();
    for (let i = 0; i < pcm.length; i += 320) {
      const wait = start + (i * 1000) / 16000 + 20 - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const piece = pcm.subarray(i, Math.min(pcm.length, i + 320));
      const now = performance.now();
      onPiece?.(i + piece.length, now);
      listener.push(piece, now);
    }
  };
  for (let n = 0; n < TURNS; n++) {
    const clip = clips[n % clips.length];
    const audio = concat(clip.pcm, silence(2000));
    const lastWord = (speechSpan(clip.pcm).endMs * 16000) / 1000;
    audioSeconds += audio.length / 16000;
    expected = undefined;
    await push(audio, (index, at) => {
      // The piece holding the last word's final sample was pushed at `at`: the word ended then,
      // minus the samples after it in that piece.
      if (!expected && index >= lastWord) expected = { lastWordAt: at - ((index - lastWord) * 1000) / 16000, reference: clip.text };
    });
    // Every turn of this clip recognised before the next clip starts.
    await listener.idle();
  }
  await listener.idle();
  listener.close();
  const wall = (performance.now() - began) / 1000;
  const cpu1 = cpuSeconds();
  const waits = turns.map((t) => t.timings.turnEndedAt - t.lastWordAt);
  const recog = turns.map((t) => t.timings.recognisedAt - t.timings.turnEndedAt);
  const total = turns.map((t) => t.timings.recognisedAt - t.lastWordAt);
  const vadEnd = turns.map((t) => t.timings.speechEndedAt - t.lastWordAt);
  let errors = 0;
  let words = 0;
  for (const t of turns) {
    const e = wordErrors(t.reference, t.text);
    errors += e.errors;
    words += e.words;
  }
  console.log(`### End of turn (${turns.length} turns heard for ${TURNS} clips, pocketsphinx, speculative recognition ${SPECULATE ? 'on' : 'off'})\n`);
  console.log('| step | p50 | p95 | max |');
  console.log('|---|---:|---:|---:|');
  const row = (name: string, v: number[]) => console.log(`| ${name} | ${fmt(pct(v, 0.5))} | ${fmt(pct(v, 0.95))} | ${fmt(Math.max(...v))} |`);
  row("last word → VAD's last voiced frame (`speechEndedAt`)", vadEnd);
  row('last word → turn decided (`turnEndedAt`: silence wait, frame, VAD)', waits);
  row('turn decided → transcript (`recognisedAt`)', recog);
  row('**last word → `turn` event**', total);
  console.log(`\nWER over these turns: ${((100 * errors) / Math.max(1, words)).toFixed(1)} %.`);
  const self = cpu1.self - cpu0.self;
  const children = cpu1.children - cpu0.children;
  console.log(
    `CPU for ${audioSeconds.toFixed(0)} s of audio (${wall.toFixed(0)} s wall): listener ${self.toFixed(1)} s (${((100 * self) / audioSeconds).toFixed(1)} % of a core), pocketsphinx ${children.toFixed(1)} s (${((100 * children) / audioSeconds).toFixed(1)} % of a core) → one talking visitor ≈ ${((100 * (self + children)) / audioSeconds).toFixed(1)} % of a core.`,
  );
}

async function main() {
  if (!testdataInstalled()) throw new Error('pocketsphinx-testdata is not installed (apt-get install pocketsphinx-testdata)');
  console.log(`${os.cpus()[0].model}, ${os.availableParallelism()} cores, Node ${process.version}\n`);
  const clips = [...librivox(), ...cards()];
  const j = jfk();
  if (j) clips.push(j);
  await frameCosts(concat(...librivox().map((c) => c.pcm)));
  await endOfTurn(clips);
}

await main();

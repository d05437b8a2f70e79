/**
 * Tells the visitor's voice from the agent's own voice leaking back through the microphone.
 *
 * Chrome's echo canceller can miss audio played through Web Audio (how the player plays), so the
 * server keeps its own guard. The listener is told exactly what the agent says and when
 * (`agentAudio` at the session clock). The guard keeps 10 ms amplitude envelopes of the agent's
 * output and of the microphone, finds the echo path's delay and gain over a window of delays
 * (0..1 s: network, playout buffer and capture; see estimatePath), and then calls a microphone bin
 * "visitor" only when it is clearly louder than the echo predicted from the agent's output at that
 * delay. Envelopes, not samples: 51 delays × 150 bins every 200 ms costs tens of microseconds, where
 * a sample-level correlation over the same window would cost milliseconds per frame.
 */

import { CLIPPED_LEVEL } from '../../speech/audio.js';

const BIN_MS = 10;
const HISTORY_BINS = 400; // 4 s of envelope, ring buffers: memory is fixed per listener
const MAX_LAG_BINS = 100; // echo arrives up to 1 s after the server sent the audio
const WINDOW_BINS = 150; // 1.5 s of envelope to estimate the echo path from
const UPDATE_EVERY_BINS = 20; // re-estimate every 200 ms while the agent talks
const LAG_STEP_BINS = 2; // delays tried 20 ms apart; the prediction's smear covers the rest
/** Loud agent bins an estimate needs (200 ms of the agent's voice). */
const MIN_LOUD_BINS = 20;
/** Agent output below -50 dBFS teaches nothing about the echo. */
const AGENT_FLOOR = 0.003;
/** A bin is the visitor's when the microphone is this many times louder than the predicted echo (6 dB). */
const DOMINANCE = 2;
/** Echo gain assumed before the path is known while the agent talks (-6 dB: an open speaker, no echo cancelling). */
const UNKNOWN_GAIN = 0.5;
/**
 * The assumed echo decays (halves every DECAY_HALF_MS) while the microphone carries sound that
 * does not follow the agent's voice: the best envelope correlation over all delays, in the last
 * CORRELATION_BINS, stays under UNCORRELATED. An echo follows its source (a correlation near 1 at
 * its delay, measured on our recordings); a visitor's voice does not.
 */
const DECAY_HALF_MS = 300;
/** One judgement is not enough (an echo just arriving correlates weakly for a moment): two are. */
const DECAY_AFTER_MS = 200;
const CORRELATION_BINS = 150;
/** Fewer bins than this (half a second) say nothing reliable about a correlation. */
const MIN_CORRELATION_BINS = 50;
const UNCORRELATED = 0.6;
/** The microphone's mean amplitude under this (-56 dBFS) carries no sound to judge. */
const MIC_FLOOR = 0.0015;
/** A reverberant room smears the echo: the prediction takes the loudest agent bin in this span around the delay. */
const SMEAR_BEFORE = 2;
const SMEAR_AFTER = 6;
/**
 * An echo this loud (RMS over 10 ms, -10 dBFS) has peaks at full scale: a clipped bin under it may
 * be the echo's doing. A visitor shouting over a quieter echo clips bins this does not count.
 */
const ECHO_MAY_CLIP = 0.3;
/** Share of the correlation's window in such bins past which the correlation is not judged. */
const CLIPPED_SHARE = 0.25;

class Envelope {
  private readonly values = new Float32Array(HISTORY_BINS);
  private readonly owners = new Float64Array(HISTORY_BINS).fill(-1);

  set(bin: number, amplitude: number): void {
    const i = bin % HISTORY_BINS;
    if (this.owners[i] === bin) {
      this.values[i] = Math.max(this.values[i], amplitude);
    } else {
      this.owners[i] = bin;
      this.values[i] = amplitude;
    }
  }

  /** Amplitude of an absolute bin, 0 when nothing was recorded for it (silence or too old). */
  get(bin: number): number {
    const i = ((bin % HISTORY_BINS) + HISTORY_BINS) % HISTORY_BINS;
    return this.owners[i] === bin ? this.values[i] : 0;
  }
}

export interface EchoPath {
  delayMs: number;
  /** Echo amplitude over the agent's (0 when no echo reaches the microphone). */
  gain: number;
  /** Bins of the agent's voice the estimate rests on. */
  loudBins: number;
}

export class EchoGuard {
  private readonly agent = new Envelope();
  private readonly mic = new Envelope();
  /** 1 for the microphone's bins with a clipped sample while the echo assumed there is loud enough to have clipped it. */
  private readonly echoClipped = new Envelope();
  private lastAgentBin = -Infinity;
  /** First bin of the agent's current spell of talking (after 2 s without its audio). */
  private agentSpellStart = -Infinity;
  private lastMicBin = -Infinity;
  private binsSinceUpdate = 0;
  private path: EchoPath | undefined;
  /** How long the microphone has carried sound uncorrelated with the agent's voice (this spell). */
  private uncorrelatedMs = 0;

  /** The agent's audio as it leaves toward the player (any rate, mono s16), starting at `atMs`. */
  addAgentAudio(pcm: Int16Array, sampleRate: number, atMs: number): void {
    const perBin = Math.max(1, Math.round((sampleRate * BIN_MS) / 1000));
    const firstBin = Math.floor(atMs / BIN_MS);
    if (firstBin - this.lastAgentBin > 200) {
      this.agentSpellStart = firstBin;
      this.uncorrelatedMs = 0;
    }
    for (let k = 0; k * perBin < pcm.length; k++) {
      const end = Math.min(pcm.length, (k + 1) * perBin);
      this.agent.set(firstBin + k, amplitude(pcm, k * perBin, end));
      this.lastAgentBin = Math.max(this.lastAgentBin, firstBin + k);
    }
  }

  /**
   * Records a microphone frame (16 kHz) that ended at `endMs` and answers which share of it is the
   * visitor's voice rather than the agent's echo (1 when the agent has been silent for a while).
   * With `cancelled` (the echo canceller's output for the frame), the path is still learnt from the
   * microphone itself, and the visitor is looked for in what the canceller left, over the part of
   * the predicted echo it says is left.
   */
  visitorShare(frame: Int16Array | Float32Array, endMs: number, cancelled?: { residual: Int16Array; echoLeft: number }): number {
    const perBin = 160;
    const bins = Math.max(1, Math.floor(frame.length / perBin));
    const firstBin = Math.floor(endMs / BIN_MS) - bins;
    let visitor = 0;
    for (let k = 0; k < bins; k++) {
      const bin = firstBin + k;
      const value = amplitude(frame, k * perBin, Math.min(frame.length, (k + 1) * perBin));
      this.mic.set(bin, value);
      if (bin > this.lastMicBin) {
        this.lastMicBin = bin;
        if (++this.binsSinceUpdate >= UPDATE_EVERY_BINS) {
          this.binsSinceUpdate = 0;
          // Double talk freezes neither: a visitor's voice only lowers a correlation, and the path's
          // estimate rests on minimum statistics (see estimatePath). Freezing the path while a
          // segment is open let a segment the echo itself opened (the room changed: the volume
          // went up) keep the old, lower echo until it became a false barge-in.
          this.updateCorrelation(bin);
          this.estimatePath(bin);
        }
      }
      const heard = cancelled ? amplitude(cancelled.residual, k * perBin, Math.min(frame.length, (k + 1) * perBin)) : value;
      const assumed = this.assumedEcho(bin);
      const echoMayClip = assumed >= ECHO_MAY_CLIP && clipped(frame, k * perBin, Math.min(frame.length, (k + 1) * perBin));
      this.echoClipped.set(bin, echoMayClip ? 1 : 0);
      const echo = this.echoFactor() * assumed * (cancelled?.echoLeft ?? 1);
      if (heard > DOMINANCE * echo + 1e-4) visitor++;
    }
    return visitor / bins;
  }

  /** Whether agent audio was sent recently enough to still be echoing in the microphone. */
  agentAudible(atMs: number): boolean {
    return Math.floor(atMs / BIN_MS) - this.lastAgentBin <= MAX_LAG_BINS + SMEAR_AFTER;
  }

  echoPath(): EchoPath | undefined {
    return this.path;
  }

  /**
   * Whether the guard knows how the echo behaves: its path, or, before that, that the microphone
   * has long stopped following the agent's voice.
   */
  echoKnown(): boolean {
    return this.path !== undefined || this.echoFactor() < 0.25;
  }

  /** 1 while the echo may be there as assumed; halves every DECAY_HALF_MS of uncorrelated sound. */
  private echoFactor(): number {
    return 0.5 ** (Math.max(0, this.uncorrelatedMs - DECAY_AFTER_MS) / DECAY_HALF_MS);
  }

  /**
   * Every UPDATE_EVERY_BINS: when the microphone carried sound while the agent talked, does that
   * sound follow the agent's voice at any delay? If not, the assumed echo decays; if so, the
   * assumption is restored at once.
   */
  private updateCorrelation(lastBin: number): void {
    if (lastBin - this.lastAgentBin > MAX_LAG_BINS + SMEAR_AFTER) return;
    let best: number | undefined;
    let heard = false;
    for (let lag = 0; lag <= MAX_LAG_BINS; lag += LAG_STEP_BINS) {
      // Only this spell of the agent's voice, at this delay: the silence before it would line up
      // with any onset in the microphone and read as a correlation.
      const first = Math.max(lastBin - CORRELATION_BINS + 1, this.agentSpellStart + lag);
      const n = lastBin - first + 1;
      if (n < MIN_CORRELATION_BINS) continue;
      let micMean = 0;
      let agentMean = 0;
      for (let b = first; b <= lastBin; b++) {
        micMean += this.mic.get(b);
        agentMean += this.agent.get(b - lag);
      }
      micMean /= n;
      agentMean /= n;
      if (micMean < MIC_FLOOR || agentMean < AGENT_FLOOR / 4) continue; // nothing to judge at this delay
      heard = true;
      let cross = 0;
      let micVar = 0;
      let agentVar = 0;
      for (let b = first; b <= lastBin; b++) {
        const m = this.mic.get(b) - micMean;
        const a = this.agent.get(b - lag) - agentMean;
        cross += m * a;
        micVar += m * m;
        agentVar += a * a;
      }
      const r = micVar > 0 && agentVar > 0 ? cross / Math.sqrt(micVar * agentVar) : 0;
      best = Math.max(best ?? -1, r);
    }
    if (!heard || best === undefined) return; // nothing heard, or no delay could be judged yet
    // A microphone the echo drives into clipping carries a flattened copy of the agent's voice that
    // no longer correlates with it: that says nothing about a visitor, so the assumed echo stays.
    let clippedBins = 0;
    for (let b = lastBin - CORRELATION_BINS + 1; b <= lastBin; b++) clippedBins += this.echoClipped.get(b);
    if (clippedBins > CORRELATION_BINS * CLIPPED_SHARE) return;
    this.uncorrelatedMs = best < UNCORRELATED ? this.uncorrelatedMs + UPDATE_EVERY_BINS * BIN_MS : 0;
  }

  /** The echo's amplitude in `bin` from the agent's voice over the path (or, unknown, the worst delay), before any decay. */
  private assumedEcho(bin: number): number {
    if (bin - this.lastAgentBin > MAX_LAG_BINS + SMEAR_AFTER) return 0;
    if (this.path) {
      const lag = Math.round(this.path.delayMs / BIN_MS);
      let loudest = 0;
      for (let j = bin - lag - SMEAR_AFTER; j <= bin - lag + SMEAR_BEFORE; j++) loudest = Math.max(loudest, this.agent.get(j));
      return this.path.gain * loudest;
    }
    // Path unknown: assume the worst delay in the window.
    let loudest = 0;
    for (let j = bin - MAX_LAG_BINS - SMEAR_AFTER; j <= bin; j++) loudest = Math.max(loudest, this.agent.get(j));
    return UNKNOWN_GAIN * loudest;
  }

  /**
   * Finds the echo path by minimum statistics: if the agent's voice reaches the microphone after
   * `d` with gain `g`, then wherever the agent was loud at t-d the microphone is at least g loud at
   * t, whatever the visitor does (the visitor only adds). So for each candidate delay the 10th
   * percentile of mic/agent over the agent's loud bins is a lower bound of the gain, the true delay
   * has the highest one, and without an echo every bound is near zero. Double talk does not fool
   * it (it raises ratios, the low percentile ignores them), where a correlation would collapse.
   */
  private estimatePath(lastBin: number): void {
    // Until the agent has talked for longer than the longest delay, "no echo yet" cannot be told
    // from "no echo": keep the last path (or none).
    if (lastBin - this.agentSpellStart < MAX_LAG_BINS + MIN_LOUD_BINS) return;
    const first = lastBin - WINDOW_BINS + 1;
    let peak = 0;
    for (let b = first - MAX_LAG_BINS; b <= lastBin; b++) peak = Math.max(peak, this.agent.get(b));
    if (peak < AGENT_FLOOR) return; // the agent was silent: keep what was learnt
    let best: { lag: number; bound: number } | undefined;
    const ratios: number[] = [];
    for (let lag = 0; lag <= MAX_LAG_BINS; lag += LAG_STEP_BINS) {
      ratios.length = 0;
      for (let i = 0; i < WINDOW_BINS; i++) {
        const agentValue = this.agent.get(first + i - lag);
        if (agentValue > peak * 0.3) ratios.push(this.mic.get(first + i) / agentValue);
      }
      if (ratios.length < MIN_LOUD_BINS) continue;
      ratios.sort((x, y) => x - y);
      const bound = ratios[Math.floor(ratios.length * 0.1)];
      if (!best || bound > best.bound) best = { lag, bound };
    }
    if (!best) return;
    // At that delay the gain itself is nearer the median ratio: the low percentile understates it
    // (the 10 ms bins of the two envelopes do not line up exactly).
    ratios.length = 0;
    for (let i = 0; i < WINDOW_BINS; i++) {
      const agentValue = this.agent.get(first + i - best.lag);
      if (agentValue > peak * 0.3) ratios.push(this.mic.get(first + i) / agentValue);
    }
    ratios.sort((x, y) => x - y);
    // A visitor talking through the whole window raises the median; the bound caps it.
    const gain = Math.min(ratios[Math.floor(ratios.length / 2)], 2.5 * best.bound);
    this.path = { delayMs: best.lag * BIN_MS, gain, loudBins: ratios.length };
  }
}

/** Whether a sample from `start` to `end` was clipped (CLIPPED_LEVEL). */
function clipped(pcm: Int16Array | Float32Array, start: number, end: number): boolean {
  const limit = pcm instanceof Int16Array ? CLIPPED_LEVEL * 32767 : CLIPPED_LEVEL;
  for (let i = start; i < end; i++) if (pcm[i] >= limit || pcm[i] <= -limit) return true;
  return false;
}

function amplitude(pcm: Int16Array | Float32Array, start: number, end: number): number {
  if (end <= start) return 0;
  const scale = pcm instanceof Int16Array ? 1 / 32768 : 1;
  let sum = 0;
  for (let i = start; i < end; i++) sum += (pcm[i] * scale) ** 2;
  return Math.sqrt(sum / (end - start));
}

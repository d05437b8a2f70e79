/**
 * Tells the visitor's voice from the agent's own voice leaking back through the microphone.
 *
 * Chrome's echo canceller can miss audio played through Web Audio (how the player plays), so the
 * server keeps its own guard. The listener is told exactly what the agent says and when
 * (`agentAudio` at the session clock). The guard keeps 10 ms amplitude envelopes of the agent's
 * output and of the microphone, finds the echo path's delay and gain by correlating the two
 * envelopes over a window of delays (0..1 s: network, playout buffer and capture), and then calls a
 * microphone bin "visitor" only when it is clearly louder than the echo predicted from the agent's
 * output at that delay. Envelopes, not samples: 100 lags × 150 bins per update costs microseconds,
 * where a sample-level correlation over the same window would cost milliseconds per frame.
 */

const BIN_MS = 10;
const HISTORY_BINS = 400; // 4 s of envelope, ring buffers: memory is fixed per listener
const MAX_LAG_BINS = 100; // echo arrives up to 1 s after the server sent the audio
const WINDOW_BINS = 150; // 1.5 s of envelope to estimate the echo path from
const UPDATE_EVERY_BINS = 10; // re-estimate every 100 ms while the agent talks
const MIN_CORRELATION = 0.6;
/** A bin is the visitor's when the microphone is this many times louder than the predicted echo (6 dB). */
const DOMINANCE = 2;
/** Echo gain assumed before the path is known while the agent talks (-10 dB, a laptop without echo cancelling). */
const UNKNOWN_GAIN = 0.3;
/** A reverberant room smears the echo: the prediction takes the loudest agent bin in this span around the delay. */
const SMEAR_BEFORE = 2;
const SMEAR_AFTER = 6;

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
  gain: number;
  correlation: number;
}

export class EchoGuard {
  private readonly agent = new Envelope();
  private readonly mic = new Envelope();
  private lastAgentBin = -Infinity;
  private lastMicBin = -Infinity;
  private binsSinceUpdate = 0;
  private path: EchoPath | undefined;

  /** The agent's audio as it leaves toward the player (any rate, mono s16), starting at `atMs`. */
  addAgentAudio(pcm: Int16Array, sampleRate: number, atMs: number): void {
    const perBin = Math.max(1, Math.round((sampleRate * BIN_MS) / 1000));
    const firstBin = Math.floor(atMs / BIN_MS);
    for (let k = 0; k * perBin < pcm.length; k++) {
      const end = Math.min(pcm.length, (k + 1) * perBin);
      this.agent.set(firstBin + k, amplitude(pcm, k * perBin, end));
      this.lastAgentBin = Math.max(this.lastAgentBin, firstBin + k);
    }
  }

  /**
   * Records a microphone frame (16 kHz) that ended at `endMs` and answers which share of it is the
   * visitor's voice rather than the agent's echo (1 when the agent has been silent for a while).
   */
  visitorShare(frame: Int16Array | Float32Array, endMs: number): number {
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
          this.estimatePath(bin);
        }
      }
      if (value > DOMINANCE * this.predictedEcho(bin) + 1e-4) visitor++;
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

  private predictedEcho(bin: number): number {
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

  /** Finds the delay at which the microphone envelope follows the agent's, and the gain at it. */
  private estimatePath(lastBin: number): void {
    const first = lastBin - WINDOW_BINS + 1;
    let agentEnergy = 0;
    for (let b = first - MAX_LAG_BINS; b <= lastBin; b++) agentEnergy += this.agent.get(b);
    if (agentEnergy === 0) return; // nothing to learn from: keep the last estimate
    const m = new Float64Array(WINDOW_BINS);
    let mMean = 0;
    for (let i = 0; i < WINDOW_BINS; i++) mMean += m[i] = this.mic.get(first + i);
    mMean /= WINDOW_BINS;
    let mVar = 0;
    for (let i = 0; i < WINDOW_BINS; i++) mVar += (m[i] - mMean) ** 2;
    if (mVar === 0) return;
    let best = { lag: 0, correlation: -1 };
    const a = new Float64Array(WINDOW_BINS);
    for (let lag = 0; lag <= MAX_LAG_BINS; lag++) {
      let aMean = 0;
      for (let i = 0; i < WINDOW_BINS; i++) aMean += a[i] = this.agent.get(first + i - lag);
      aMean /= WINDOW_BINS;
      let cov = 0;
      let aVar = 0;
      for (let i = 0; i < WINDOW_BINS; i++) {
        cov += (m[i] - mMean) * (a[i] - aMean);
        aVar += (a[i] - aMean) ** 2;
      }
      if (aVar === 0) continue;
      const correlation = cov / Math.sqrt(mVar * aVar);
      if (correlation > best.correlation) best = { lag, correlation };
    }
    if (best.correlation < MIN_CORRELATION) return;
    // Gain: median ratio over the bins where the agent is loud; the visitor talking over some of
    // them (double talk) raises a few ratios but not the median.
    const ratios: number[] = [];
    let peak = 0;
    for (let i = 0; i < WINDOW_BINS; i++) peak = Math.max(peak, this.agent.get(first + i - best.lag));
    for (let i = 0; i < WINDOW_BINS; i++) {
      const agentValue = this.agent.get(first + i - best.lag);
      if (agentValue > peak * 0.3) ratios.push(m[i] / agentValue);
    }
    if (ratios.length < 10) return;
    ratios.sort((x, y) => x - y);
    const gain = ratios[Math.floor(ratios.length / 2)];
    this.path = { delayMs: best.lag * BIN_MS, gain, correlation: best.correlation };
  }
}

function amplitude(pcm: Int16Array | Float32Array, start: number, end: number): number {
  if (end <= start) return 0;
  const scale = pcm instanceof Int16Array ? 1 / 32768 : 1;
  let sum = 0;
  for (let i = start; i < end; i++) sum += (pcm[i] * scale) ** 2;
  return Math.sqrt(sum / (end - start));
}

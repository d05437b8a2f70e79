/**
 * Takes the agent's own voice out of the microphone, sample by sample, so that a visitor speaking
 * under a loud echo (an open laptop speaker, the browser's canceller missing Web Audio) is still
 * heard. The echo guard (echo-guard.ts) can only tell a visitor who is louder than the echo; what
 * this leaves is the visitor plus a residue some 15–25 dB under the echo.
 *
 * A partitioned-block frequency-domain adaptive filter (overlap-save, normalised LMS per bin, as in
 * Speex's MDF and WebRTC's AEC3): the agent's audio is known exactly, so the filter learns the path
 * from it to the microphone (speaker, room, capture) over a 256 ms window placed where the echo
 * guard found the echo's delay, and subtracts its prediction. It does not start from nothing there
 * (LMS on speech takes seconds to converge): a cross-correlation around the guard's delay finds the
 * direct path, to the sample, and the filter starts as that one tap. Two filters, as those cancellers keep:
 * a background one that always adapts, and a foreground one that produces the output and takes the
 * background's weights only when they cancel clearly better. A visitor talking over the agent
 * throws the adapting filter off (double talk), never the output; after the room changes, the
 * background learns the new path and is taken over.
 *
 * It also tells the guard how much of the echo is left: the residue's share of the microphone on
 * the agent's loud blocks while the visitor is silent (energy over energy, the last 2 s of them), or, when more, the part of the leftover that still follows the filter's
 * prediction (the path changed and the filter is behind: that part is echo, not a visitor).
 *
 * Cost: six 512-point FFTs and three passes over 16 × 257 bins per 16 ms block, only while the
 * agent's voice is in the window; otherwise the microphone passes through untouched. The search for
 * the direct path adds about 0.6 ms per block for its 16 blocks, once per window.
 */
import FFT from 'fft.js';
import { CLIPPED_LEVEL } from '../../speech/audio.js';

const RATE = 16_000;
/** Samples per block (16 ms); the FFT is twice as long (overlap-save). */
const ECHO_BLOCK = 256;
const SIZE = 2 * ECHO_BLOCK;
const BINS = ECHO_BLOCK + 1;
/** Blocks of echo path the filter spans: 256 ms (a room's reverberation after the direct sound). */
const PARTITIONS = 16;
/** The window starts this long before the guard's delay (its estimate is 20 ms coarse, and the clocks jitter). */
const LEAD_MS = 48;
/** The window is moved (and the filter learns afresh) when the guard's delay leaves this span inside it. */
const KEEP_DELAY_MS = [16, 160] as const;
/** Echo gain under which nothing is cancelled (-30 dB: the guard alone copes). */
const MIN_GAIN = 0.03;
/** The agent's reference, 2 s at 16 kHz: the echo's delay (≤ 1 s) plus the window. */
const RING = 1 << 15;
const RING_BLOCKS = RING / ECHO_BLOCK;
/** Step of the background filter's normalised LMS. */
const STEP = 1.0;
/**
 * The frames' dates (the listener's microphone clock, mic-clock.ts) may wander this far from the
 * canceller's own sample count before it follows them: that clock's anchor moves by fractions of a
 * millisecond as its window slides, and every move would otherwise shift the filter's path.
 */
const RESYNC_MS = 2;
/** References under this (-50 dBFS RMS over a block) teach the filter nothing about the echo. */
const LOUD_REFERENCE = 0.003;
/** Loud blocks the residue's share is measured over: 1 s of them. */
const SHARES = 62;
/** Correlation of two unrelated signals over a block that is chance (about 3/√256). */
const CHANCE = 0.2;
/** Echo the filter is behind on (amplitude share) past which the guard gets no credit for its work. */
const BEHIND = 0.25;
/** Trust (an amplitude factor) is never more than this: 26 dB. */
const MAX_CREDIT = 0.05;
/**
 * Blocks of the agent's voice the direct path is looked for over (0.25 s), once the guard knows the
 * delay: normalised LMS on speech needs seconds to converge from nothing (measured: 2 dB after 1 s,
 * 10 dB after 2 s), a filter seeded with the direct path cancels most of a laptop's echo at once.
 */
const SEEK_BLOCKS = 16;
/** Lags looked at either side of the guard's delay (64 ms): its 20 ms steps, and its smear, which live put it 28 ms late. */
const SEEK_SPAN = 1024;
/** The direct path seeds the filter only when it follows the microphone this closely (it carries half of it). */
const SEEK_MIN_CORRELATION = 0.7;
/** Samples at CLIPPED_LEVEL (speech/audio.ts): more than this share of them, and no tap is placed. */
const MAX_CLIPPED_SHARE = 0.001;

export interface CancelledFrame {
  /** The microphone with the agent's predicted echo taken out (the frame itself when nothing was cancelled). */
  residual: Int16Array;
  /**
   * How much of the echo is left in `residual`, as an amplitude factor (1: all of it, or not
   * known; 0.1: a hundredth of its power). The guard scales its predicted echo by it.
   */
  echoLeft: number;
}

/** BINS complex values, interleaved re, im. Single precision (as Speex keeps its filter): half the memory. */
type Spectrum = Float32Array;

export class EchoCanceller {
  private readonly fft = new FFT(SIZE);
  private readonly reference = new Float32Array(RING);
  /** The absolute block number each ring block holds; any other block reads as silence. */
  private readonly referenceBlock = new Float64Array(RING_BLOCKS).fill(-1);
  /** The sample after the last one written, for placing the next piece of a continuous stream. */
  private referenceEnd = -Infinity;
  /** Linear interpolation state across pieces at other rates (the last input sample, the phase). */
  private lastInput = 0;
  private phase = 0;

  /** The microphone's sample count's origin: when its sample 0 was captured (ms). */
  private anchorMs: number | undefined;
  private micSamples = 0;

  /** Where the window starts, in samples behind the microphone; undefined while inactive. */
  private windowStart: number | undefined;
  private nextReferenceAt: number | undefined;
  /** The reference's spectra, newest first (a ring of PARTITIONS). */
  private readonly history: Spectrum[] = Array.from({ length: PARTITIONS }, () => new Float32Array(2 * BINS));
  private newest = 0;
  private historyEmpty = true;
  /** Per history slot: the reference block it was read from (its second half's first sample). */
  private readonly historyAt = new Float64Array(PARTITIONS);
  /**
   * Per history slot: how far the reference was written when it was read, if not to its end (-1
   * when it was complete). The agent's audio is handed over when each frame is due, up to tens of
   * ms late under load; a slot read before its reference arrived is read again once it has.
   */
  private readonly historySeenTo = new Float64Array(PARTITIONS).fill(-1);
  private readonly background: Spectrum[] = Array.from({ length: PARTITIONS }, () => new Float32Array(2 * BINS));
  private readonly foreground: Spectrum[] = Array.from({ length: PARTITIONS }, () => new Float32Array(2 * BINS));
  private constrainNext = 0;
  /** Smoothed block energies: microphone, background's and foreground's leftovers. */
  private micEnergy = 0;
  private backgroundEnergy = 0;
  private foregroundEnergy = 0;
  /** Per loud block with the visitor silent: the microphone's energy and what the canceller left of it. */
  private readonly sharesMic = new Float64Array(SHARES);
  private readonly sharesLeft = new Float64Array(SHARES);
  private sharesCount = 0;
  private sharesNext = 0;
  private visitorTalking = false;
  /** The direct path's search (a cross-correlation around the guard's delay), while it runs. */
  private seek: { center: number; blocks: number; cross: Float64Array; micEnergy: number; referenceEnergy: number; clipped: number } | undefined;
  /** The search ran for this window (it runs again when the window moves). */
  private seeded = false;
  /** The background was seeded and the foreground has not taken it over yet. */
  private seedPending = false;

  // Scratch, reused every block: nothing is allocated on the real-time path.
  private readonly timeIn = new Float64Array(SIZE);
  // fft.js indexes plain arrays; typed ones are as good to it and faster to fill.
  private readonly complexOut = new Float64Array(2 * SIZE);
  private readonly complexIn = new Float64Array(2 * SIZE);
  private readonly power = new Float64Array(BINS);
  private readonly accumulated = new Float64Array(2 * BINS);
  private readonly errorSpectrum = new Float64Array(2 * BINS);
  private readonly backgroundOut = new Float64Array(ECHO_BLOCK);
  private readonly foregroundOut = new Float64Array(ECHO_BLOCK);
  private readonly seekReference = new Float64Array(ECHO_BLOCK + 2 * SEEK_SPAN);
  private seekCross: Float64Array | undefined;
  private readonly micBlock = new Float64Array(ECHO_BLOCK);

  /** The agent's audio as played (any rate, mono), `atMs` being when its first sample plays, on the microphone's clock. */
  addAgentAudio(pcm: Int16Array, sampleRate: number, atMs: number): void {
    let at = Math.round((atMs * RATE) / 1000);
    // Pieces of one stream follow each other: a clock's jitter must not move them by samples.
    const continuous = Math.abs(at - this.referenceEnd) <= RATE * 0.03;
    if (continuous) at = this.referenceEnd;
    else {
      this.lastInput = 0;
      this.phase = 0;
    }
    if (sampleRate === RATE) {
      for (let i = 0; i < pcm.length; i++) this.writeReference(at + i, pcm[i] / 32768);
      this.referenceEnd = at + pcm.length;
      return;
    }
    // Linear interpolation to 16 kHz, continuing across pieces. Its aliasing (speech above 8 kHz is
    // some 30 dB down) bounds the cancelling at about that much, which is more than a room allows.
    const step = sampleRate / RATE;
    let position = this.phase;
    let written = 0;
    for (; position < pcm.length - 1; position += step, written++) {
      const i = Math.floor(position);
      const before = i < 0 ? this.lastInput : pcm[i] / 32768;
      const after = pcm[i + 1] / 32768;
      this.writeReference(at + written, before + (after - before) * (position - i));
    }
    this.phase = position - pcm.length;
    this.lastInput = pcm.length ? pcm[pcm.length - 1] / 32768 : this.lastInput;
    this.referenceEnd = at + written;
  }

  /**
   * One microphone frame (16 kHz, a multiple of 256 samples) captured ending at `endMs`, and the
   * echo path the guard knows: the frame with the echo taken out, and how much of the echo is left.
   */
  process(frame: Int16Array, endMs: number, path: { delayMs: number; gain: number } | undefined): CancelledFrame {
    const start = this.micClock(frame.length, endMs);
    this.place(path);
    if (this.windowStart === undefined) return { residual: frame, echoLeft: 1 };
    let residual: Int16Array | undefined;
    /** Bit b: in block b the leftover was quieter than the microphone (used only when the filter is behind). */
    let quieterBlocks = 0;
    let behind = 0;
    for (let offset = 0, b = 0; offset + ECHO_BLOCK <= frame.length; offset += ECHO_BLOCK, b++) {
      const result = this.block(frame, offset, start + offset);
      if (!result) continue;
      behind = Math.max(behind, result.behind);
      residual ??= frame.slice();
      if (result.useMicrophone) continue;
      for (let i = 0; i < ECHO_BLOCK; i++) residual[offset + i] = clampSample(this.foregroundOut[i] * 32768);
      if (result.quieter) quieterBlocks |= 1 << b;
    }
    // Until the guard knows the path the filter learns, but its output is not used: the guard's
    // first-second rules were measured on the microphone itself.
    if (!residual || !path) return { residual: frame, echoLeft: 1 };
    // The filter is behind the room (it moved, the volume changed): until it has caught up, the
    // guard gets no less than it would without a canceller: the whole predicted echo, against
    // what is quieter of the microphone and the leftover, block by block.
    if (behind > BEHIND) {
      for (let offset = 0, b = 0; offset + ECHO_BLOCK <= frame.length; offset += ECHO_BLOCK, b++)
        if (!(quieterBlocks & (1 << b))) residual.set(frame.subarray(offset, offset + ECHO_BLOCK), offset);
      return { residual, echoLeft: 1 };
    }
    return { residual, echoLeft: Math.max(behind, this.echoLeft()) };
  }

  /**
   * While the visitor talks, the residue's share of the microphone says nothing about the echo
   * (it is mostly the visitor's voice): the shares stand still, as cancellers' estimates do in
   * double talk. The filters go on adapting (the foreground only takes what cancels better).
   */
  setVisitorTalking(talking: boolean): void {
    this.visitorTalking = talking;
  }

  /** The residue's amplitude share of the echo the canceller leaves (1 until it has seen enough). */
  private echoLeft(): number {
    if (this.sharesCount < SHARES / 4) return 1;
    let mic = 0;
    let left = 0;
    for (let i = 0; i < this.sharesCount; i++) {
      mic += this.sharesMic[i];
      left += this.sharesLeft[i];
    }
    return Math.min(1, Math.max(MAX_CREDIT, Math.sqrt(left / mic)));
  }

  /**
   * Sample number (on the reference's clock) of the frame's first sample: the microphone's own
   * sample count, following the frames' dates only when they move by more than RESYNC_MS (a drift
   * the window has taken up, or a gap in the stream).
   */
  private micClock(length: number, endMs: number): number {
    const startMs = endMs - (length * 1000) / RATE;
    const sinceAnchorMs = (this.micSamples * 1000) / RATE;
    if (this.anchorMs === undefined || Math.abs(startMs - (this.anchorMs + sinceAnchorMs)) > RESYNC_MS) this.anchorMs = startMs - sinceAnchorMs;
    const start = Math.round(((this.anchorMs ?? 0) * RATE) / 1000) + this.micSamples;
    this.micSamples += length;
    return start;
  }

  /** Places (or moves, or drops) the window from the guard's echo path. */
  private place(path: { delayMs: number; gain: number } | undefined): void {
    // Before the guard knows the path, the window covers the commonest delays (a page on a near
    // network): the filter learns meanwhile (its output unused), and is kept when the guard's
    // delay falls inside the window.
    if (!path) {
      this.windowStart ??= 0;
      return;
    }
    if (path.gain < MIN_GAIN) {
      if (this.windowStart !== undefined) this.reset();
      this.windowStart = undefined;
      return;
    }
    const delay = Math.round((path.delayMs * RATE) / 1000);
    if (this.windowStart !== undefined) {
      const inside = delay - this.windowStart;
      if (inside >= (KEEP_DELAY_MS[0] * RATE) / 1000 && inside <= (KEEP_DELAY_MS[1] * RATE) / 1000) return this.startSeek(delay);
      this.reset();
    }
    this.windowStart = Math.max(0, delay - (LEAD_MS * RATE) / 1000);
    this.startSeek(delay);
  }

  /** Starts looking for the direct path around `delay` (samples), once per window. */
  private startSeek(delay: number): void {
    if (this.seeded) return;
    this.seeded = true;
    // One array for the sums, reused by every window's search (allocated when first needed).
    const cross = this.seekCross ?? new Float64Array(2 * SEEK_SPAN + 1);
    this.seekCross = cross.fill(0);
    this.seek = { center: delay, blocks: 0, cross, micEnergy: 0, referenceEnergy: 0, clipped: 0 };
  }

  /**
   * One loud block of the search: the microphone (micBlock, at sample `at`) against the reference
   * at every lag around the guard's delay. After SEEK_BLOCKS, the strongest lag, when it follows
   * the microphone closely, becomes the background filter's one tap (the least-squares gain): it
   * starts again from the direct path and learns the room around it.
   */
  private seekBlock(at: number): void {
    const seek = this.seek!;
    // seekReference[q] is the reference at sample at - center - SEEK_SPAN + q.
    this.readReference(at - seek.center - SEEK_SPAN, this.seekReference);
    const m = this.micBlock;
    const r = this.seekReference;
    for (let s = -SEEK_SPAN; s <= SEEK_SPAN; s++) {
      let sum = 0;
      for (let i = 0, q = SEEK_SPAN - s; i < ECHO_BLOCK; i++, q++) sum += m[i] * r[q];
      seek.cross[s + SEEK_SPAN] += sum;
    }
    for (let i = 0; i < ECHO_BLOCK; i++) {
      seek.micEnergy += m[i] * m[i];
      seek.referenceEnergy += r[SEEK_SPAN + i] * r[SEEK_SPAN + i];
      if (Math.abs(m[i]) >= CLIPPED_LEVEL) seek.clipped++;
    }
    if (++seek.blocks < SEEK_BLOCKS) return;
    this.seek = undefined;
    // A clipping microphone is no linear echo: one tap would cancel its peaks and leave the rest.
    if (seek.clipped > SEEK_BLOCKS * ECHO_BLOCK * MAX_CLIPPED_SHARE) return;
    let best = SEEK_SPAN;
    for (let j = 0; j < seek.cross.length; j++) if (seek.cross[j] > seek.cross[best]) best = j;
    const correlation = seek.cross[best] / Math.sqrt(seek.micEnergy * seek.referenceEnergy + 1e-20);
    const tap = seek.center + best - SEEK_SPAN - (this.windowStart ?? 0);
    if (correlation < SEEK_MIN_CORRELATION || tap < 0 || tap >= PARTITIONS * ECHO_BLOCK) return;
    const partition = Math.floor(tap / ECHO_BLOCK);
    this.timeIn.fill(0);
    this.timeIn[tap - partition * ECHO_BLOCK] = seek.cross[best] / seek.referenceEnergy;
    // The background only: the output takes it over when it cancels better (a room whose
    // reflections the filter had begun to learn keeps what it learnt until then).
    for (const w of this.background) w.fill(0);
    this.forward(this.timeIn, this.background[partition]);
    this.seedPending = true;
  }

  private reset(): void {
    this.seek = undefined;
    this.seeded = this.seedPending = false;
    for (const w of this.background) w.fill(0);
    for (const w of this.foreground) w.fill(0);
    this.clearHistory();
    this.micEnergy = this.backgroundEnergy = this.foregroundEnergy = 0;
    this.sharesCount = this.sharesNext = 0;
  }

  private clearHistory(): void {
    if (!this.historyEmpty) for (const x of this.history) x.fill(0);
    this.historySeenTo.fill(-1);
    this.power.fill(0);
    this.historyEmpty = true;
    this.nextReferenceAt = undefined;
  }

  /**
   * One 16 ms block at microphone sample `at`: fills foregroundOut with the leftover. Undefined when
   * the agent's voice is nowhere in the window (the microphone passes through).
   */
  private block(frame: Int16Array, offset: number, at: number): { behind: number; useMicrophone: boolean; quieter: boolean } | undefined {
    const referenceAt = at - (this.windowStart ?? 0);
    // The window holds the reference from (PARTITIONS) blocks back to this one's end.
    if (referenceAt - PARTITIONS * ECHO_BLOCK >= this.referenceEnd) {
      this.clearHistory();
      return undefined;
    }
    if (this.nextReferenceAt !== undefined && this.nextReferenceAt !== referenceAt) this.clearHistory();
    this.nextReferenceAt = referenceAt + ECHO_BLOCK;

    // Partitions read before their reference had all arrived, read again now that more has.
    for (let p = 0; p < PARTITIONS; p++) {
      const seenTo = this.historySeenTo[p];
      if (seenTo >= 0 && this.referenceEnd > seenTo) this.readPartition(p, this.historyAt[p]);
    }
    // The newest partition: the spectrum of the last two blocks of reference. Power per bin over
    // the whole window (the step's normaliser) is kept as a running sum: the partition leaving
    // the window out, the new one in.
    this.newest = (this.newest + PARTITIONS - 1) % PARTITIONS;
    this.readPartition(this.newest, referenceAt);
    this.historyEmpty = false;
    let referenceEnergy = 0;
    for (let i = ECHO_BLOCK; i < SIZE; i++) referenceEnergy += this.timeIn[i] * this.timeIn[i];
    let meanPower = 0;
    for (let k = 0; k < BINS; k++) meanPower += this.power[k];
    meanPower /= BINS;

    this.predict(this.background, this.backgroundOut);
    this.predict(this.foreground, this.foregroundOut);
    let mic = 0;
    let backgroundLeft = 0;
    let foregroundLeft = 0;
    let cross = 0;
    let predicted = 0;
    for (let i = 0; i < ECHO_BLOCK; i++) {
      const d = frame[offset + i] / 32768;
      this.micBlock[i] = d;
      const eb = d - this.backgroundOut[i];
      const ef = d - this.foregroundOut[i];
      const y = this.foregroundOut[i];
      this.backgroundOut[i] = eb; // from here on: the background's leftover
      this.foregroundOut[i] = ef;
      mic += d * d;
      backgroundLeft += eb * eb;
      foregroundLeft += ef * ef;
      cross += ef * y;
      predicted += y * y;
    }

    this.adapt(meanPower);
    if (this.seek && referenceEnergy / ECHO_BLOCK > LOUD_REFERENCE * LOUD_REFERENCE) this.seekBlock(at);
    // Smoothed over ~8 blocks: which filter cancels better, and whether the background went astray.
    const a = 1 / 8;
    this.micEnergy += a * (mic - this.micEnergy);
    this.backgroundEnergy += a * (backgroundLeft - this.backgroundEnergy);
    this.foregroundEnergy += a * (foregroundLeft - this.foregroundEnergy);
    if (this.backgroundEnergy < 0.7 * this.foregroundEnergy && this.backgroundEnergy < this.micEnergy) {
      for (let p = 0; p < PARTITIONS; p++) this.foreground[p].set(this.background[p]);
      this.foregroundEnergy = this.backgroundEnergy;
      // The seeded filter taken over: the share of echo left is measured again from here (the
      // last second's blocks were the filter learning from nothing, and would understate it).
      if (this.seedPending) {
        this.seedPending = false;
        this.sharesCount = this.sharesNext = 0;
      }
    } else if (this.backgroundEnergy > 2 * this.micEnergy && this.backgroundEnergy > 4 * this.foregroundEnergy) {
      // Double talk threw the background off: it starts again from what works.
      for (let p = 0; p < PARTITIONS; p++) this.background[p].set(this.foreground[p]);
      this.backgroundEnergy = this.foregroundEnergy;
    }

    // A filter that adds more than it takes (the path moved under it) is not used at all. Up to
    // twice is double talk's chance (the visitor's voice and the residue adding up), not the filter.
    const useMicrophone = foregroundLeft > 2 * mic;
    const left = useMicrophone ? mic : foregroundLeft;
    if (!this.visitorTalking && referenceEnergy / ECHO_BLOCK > LOUD_REFERENCE * LOUD_REFERENCE && mic > 0) {
      this.sharesMic[this.sharesNext] = mic;
      this.sharesLeft[this.sharesNext] = left;
      this.sharesNext = (this.sharesNext + 1) % SHARES;
      this.sharesCount = Math.min(SHARES, this.sharesCount + 1);
    }
    // The leftover's part that follows the prediction, over the prediction (≈ the echo): echo the
    // filter has not caught up with. A visitor's voice does not follow it: two unrelated voices
    // over 256 samples correlate by chance up to about CHANCE, which is not counted.
    let behind = useMicrophone ? 1 : 0;
    if (!useMicrophone && predicted > 0 && foregroundLeft > 0) {
      const correlation = Math.abs(cross) / Math.sqrt(foregroundLeft * predicted);
      behind = Math.max(0, correlation - CHANCE) * Math.sqrt(foregroundLeft / predicted);
    }
    return { behind, useMicrophone, quieter: foregroundLeft < mic };
  }

  /** History slot `slot` becomes the spectrum of the reference's two blocks ending at `referenceAt` + one block (the samples stay in timeIn). */
  private readPartition(slot: number, referenceAt: number): void {
    this.readReference(referenceAt - ECHO_BLOCK, this.timeIn);
    const x = this.history[slot];
    for (let k = 0; k < BINS; k++) this.power[k] -= x[2 * k] * x[2 * k] + x[2 * k + 1] * x[2 * k + 1];
    this.forward(this.timeIn, x);
    for (let k = 0; k < BINS; k++) this.power[k] = Math.max(0, this.power[k] + x[2 * k] * x[2 * k] + x[2 * k + 1] * x[2 * k + 1]);
    this.historyAt[slot] = referenceAt;
    this.historySeenTo[slot] = this.referenceEnd < referenceAt + ECHO_BLOCK ? this.referenceEnd : -1;
  }

  /** Overlap-save: `out` gets the block's prediction from `weights` over the window. */
  private predict(weights: Spectrum[], out: Float64Array): void {
    const sum = this.accumulated;
    sum.fill(0);
    for (let p = 0; p < PARTITIONS; p++) {
      const x = this.history[(this.newest + p) % PARTITIONS];
      const w = weights[p];
      for (let k = 0; k < BINS; k++) {
        const xr = x[2 * k];
        const xi = x[2 * k + 1];
        const wr = w[2 * k];
        const wi = w[2 * k + 1];
        sum[2 * k] += wr * xr - wi * xi;
        sum[2 * k + 1] += wr * xi + wi * xr;
      }
    }
    this.inverse(sum, this.timeIn);
    for (let i = 0; i < ECHO_BLOCK; i++) out[i] = this.timeIn[ECHO_BLOCK + i];
  }

  /** Normalised LMS on the background filter from its leftover (in backgroundOut), one partition constrained per block. */
  private adapt(meanPower: number): void {
    this.timeIn.fill(0, 0, ECHO_BLOCK);
    for (let i = 0; i < ECHO_BLOCK; i++) this.timeIn[ECHO_BLOCK + i] = this.backgroundOut[i];
    this.forward(this.timeIn, this.errorSpectrum);
    const e = this.errorSpectrum;
    const floor = 1e-6 * SIZE + 0.01 * meanPower;
    for (let p = 0; p < PARTITIONS; p++) {
      const x = this.history[(this.newest + p) % PARTITIONS];
      const w = this.background[p];
      for (let k = 0; k < BINS; k++) {
        const g = STEP / (this.power[k] + floor);
        const xr = x[2 * k];
        const xi = x[2 * k + 1];
        const er = e[2 * k];
        const ei = e[2 * k + 1];
        // conj(X) · E
        w[2 * k] += g * (xr * er + xi * ei);
        w[2 * k + 1] += g * (xr * ei - xi * er);
      }
    }
    // The gradient's circular wrap is taken out of one partition per block, in turn (as MDF does).
    const w = this.background[this.constrainNext];
    this.constrainNext = (this.constrainNext + 1) % PARTITIONS;
    this.inverse(w, this.timeIn);
    this.timeIn.fill(0, ECHO_BLOCK);
    this.forward(this.timeIn, w);
  }

  private forward(input: Float64Array, out: Float32Array | Float64Array): void {
    this.fft.realTransform(this.complexOut, input);
    for (let i = 0; i < 2 * BINS; i++) out[i] = this.complexOut[i];
  }

  /** Real inverse of a half spectrum into `out` (SIZE samples). */
  private inverse(half: Float32Array | Float64Array, out: Float64Array): void {
    const full = this.complexIn;
    for (let i = 0; i < 2 * BINS; i++) full[i] = half[i];
    for (let k = BINS; k < SIZE; k++) {
      full[2 * k] = half[2 * (SIZE - k)];
      full[2 * k + 1] = -half[2 * (SIZE - k) + 1];
    }
    this.fft.inverseTransform(this.complexOut, full);
    for (let i = 0; i < SIZE; i++) out[i] = this.complexOut[2 * i];
  }

  private writeReference(sample: number, value: number): void {
    const block = Math.floor(sample / ECHO_BLOCK);
    const slot = ((block % RING_BLOCKS) + RING_BLOCKS) % RING_BLOCKS;
    if (this.referenceBlock[slot] !== block) {
      this.referenceBlock[slot] = block;
      this.reference.fill(0, slot * ECHO_BLOCK, (slot + 1) * ECHO_BLOCK);
    }
    this.reference[slot * ECHO_BLOCK + (sample - block * ECHO_BLOCK)] = value;
  }

  /** The reference from `sample` on into `out` (its whole length), silence where nothing was written. */
  private readReference(sample: number, out: Float64Array): void {
    for (let i = 0; i < out.length; ) {
      const at = sample + i;
      const block = Math.floor(at / ECHO_BLOCK);
      const slot = ((block % RING_BLOCKS) + RING_BLOCKS) % RING_BLOCKS;
      const within = at - block * ECHO_BLOCK;
      const n = Math.min(ECHO_BLOCK - within, out.length - i);
      if (this.referenceBlock[slot] === block) for (let j = 0; j < n; j++) out[i + j] = this.reference[slot * ECHO_BLOCK + within + j];
      else out.fill(0, i, i + n);
      i += n;
    }
  }
}

function clampSample(value: number): number {
  return Math.max(-32768, Math.min(32767, Math.round(value)));
}

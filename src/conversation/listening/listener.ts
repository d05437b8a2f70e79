/**
 * One session's listener: microphone PCM (16 kHz) in, visitor turns out.
 *
 *   push() ─▶ 32 ms frames ─▶ echo canceller ─▶ Silero VAD ─▶ echo guard ─▶ speech segment ─▶ end of turn ─▶ recogniser ─▶ turn
 *
 * Frames are dated by when they were captured (mic-clock.ts), not by when they arrived in a burst.
 * The echo canceller takes the agent's own voice out of each frame first; everything after it (the
 * VAD, the guard's judgement, the turn's audio for the recogniser) hears what it left, while the
 * guard still learns the echo's path from the microphone itself.
 *
 * A segment opens on voiced visitor frames (with 320 ms of audio before them, so first syllables are
 * not clipped). It becomes speech once it has 160 ms of voice (`speechStarted`, a streaming engine is
 * opened), and ends after a silence that EndOfTurn picks from the visitor's pauses, the words heard
 * so far and the pitch at the end of the last voiced stretch (pitch.ts, on voiced frames only).
 * While the agent talks, the visitor's voice must last `bargeInMs` to interrupt (`bargeIn`); shorter
 * speech over the agent ("mm-hm") is a back-channel and is dropped. So that the visitor is not
 * talked over meanwhile, `pauseAfterMs` of unbroken visitor voice over the agent already pauses it
 * (`bargeInStarted`); a pause that does not become a barge-in (the voice stops for 192 ms first: a
 * back-channel, a cough) is taken back (`bargeInDropped`) and the agent goes on where it paused. For engines without streaming the turn is recognised speculatively
 * once the silence reaches `speculateAfterMs`, so the transcript is often ready when the turn ends;
 * a voiced frame cancels that work. When the words look final before the turn has ended (the live
 * decoder closed its phrase, or the speculative recognition finished, during the silence), they are
 * told as `tentative`, and withdrawn (`tentativeDropped`) if the visitor speaks again.
 *
 * Everything a visitor can grow is bounded: frames waiting for the VAD (3 s, oldest dropped), a
 * turn's audio (`maxTurnSeconds`: at the cap the turn ends as if the visitor had paused, and what
 * follows is a new turn), and turns waiting for recognition (`maxQueuedTurns`).
 */
import type { RecognitionStream, Recognizer, Transcript } from '../../speech/recognition/types.js';
import { RECOGNITION_SAMPLE_RATE } from '../../speech/recognition/types.js';
import { concatInt16 } from '../../speech/audio.js';
import { type CancelledFrame, EchoCanceller } from './echo-canceller.js';
import { EchoGuard } from './echo-guard.js';
import { MicClock } from './mic-clock.js';
import { END_OF_TURN_DEFAULTS, EndOfTurn, type EndOfTurnOptions, usesPitch } from './end-of-turn.js';
import { type PitchEnd, PitchTrack } from './pitch.js';
import type { Listener, ListenerEvents, VisitorTurnHeard } from './types.js';
import { SileroVad, VAD_FRAME, type VoiceActivityDetector } from './vad.js';

const FRAME_MS = (VAD_FRAME / RECOGNITION_SAMPLE_RATE) * 1000; // 32

export interface ListenerOptions {
  /** Voice activity detector (default: Silero VAD). */
  vad?: VoiceActivityDetector | Promise<VoiceActivityDetector>;
  languages?: string[];
  endOfTurn?: Partial<EndOfTurnOptions>;
  /** VAD probability at which a frame is voice, and below which it is silence (hysteresis between). */
  speechProbability?: number;
  silenceProbability?: number;
  /** Voice before a segment counts as speech. */
  minSpeechMs?: number;
  /** Visitor voice over the agent that interrupts it. */
  bargeInMs?: number;
  /** Unbroken visitor voice over the agent that pauses it until the barge-in is decided; 0 turns pausing off. */
  pauseAfterMs?: number;
  /** Extra voice needed while the agent is audible and the echo path is not known yet. */
  bargeInUnknownEchoMs?: number;
  /** Silence after which a turn is recognised speculatively (engines without streaming); 0 turns it off. */
  speculateAfterMs?: number;
  prerollMs?: number;
  /** Longest turn; at the cap the turn ends and what follows is a new one. */
  maxTurnSeconds?: number;
  /** Turns recognised or waiting for recognition at once; past it the newest is dropped with an error. */
  maxQueuedTurns?: number;
  /**
   * Takes the agent's echo out of the microphone sample by sample (echo-canceller.ts) before the
   * VAD, the guard and the recogniser (default on; off for the benches' "before").
   */
  cancelEcho?: boolean;
  /** Clock of `receivedAtMs`, `agentAudio` and the timings (default performance.now). */
  now?: () => number;
}

const DEFAULTS = {
  speechProbability: 0.5,
  silenceProbability: 0.35,
  minSpeechMs: 160,
  bargeInMs: 400,
  pauseAfterMs: 96,
  bargeInUnknownEchoMs: 200,
  speculateAfterMs: 250,
  prerollMs: 320,
  maxTurnSeconds: 30,
  maxQueuedTurns: 4,
};
/** Frames waiting for the VAD: 3 s. Past it the oldest are dropped (the node is overloaded). */
const MAX_PENDING_FRAMES = Math.ceil(3000 / FRAME_MS);
/** Silence that drops a segment that never became speech, or a back-channel over the agent. */
const DISCARD_SILENCE_MS = 300;
/**
 * Silence after which a pause for a barge-in not decided yet is taken back: the agent goes on
 * while the segment may still be dropped (a back-channel) or become a turn (which interrupts).
 */
const RESUME_SILENCE_MS = 192;
/**
 * Silence after which the live recogniser is told the visitor paused (RecognitionStream.pause), so
 * an engine that waits for more audio closes its phrase and its words can reach the end of turn
 * (≥ 350 ms) and the answer prepared ahead. Shorter gaps are between words (end-of-turn.ts).
 */
const PAUSE_TOLD_MS = 150;

interface Segment {
  /** The listener's number for the turn. */
  turn: number;
  frames: Int16Array[];
  samples: number;
  voicedMs: number;
  voicedOverAgentMs: number;
  /** Voice over the agent since the last silent frame. */
  voicedOverAgentRunMs: number;
  silenceMs: number;
  lastVoicedEndMs: number;
  started: boolean;
  bargedIn: boolean;
  /** The agent was paused for this segment (`bargeInStarted`) and neither interrupted nor resumed yet. */
  pausedAgent: boolean;
  stream?: RecognitionStream;
  partialText?: string;
  /** The visitor spoke again after the latest partial text: it no longer tells how the turn ends. */
  partialStale?: boolean;
  speculation?: { controller: AbortController; result: Promise<Transcript>; text?: string };
  /** Words told as `tentative` and not withdrawn since. */
  tentativeText?: string;
  /** The pitch of the turn's voiced frames (only when pitch moves the end of turn). */
  pitch?: PitchTrack;
  /** How the last voiced stretch ended, judged once per pause. */
  pitchEnd?: PitchEnd;
}

export class VisitorListener implements Listener {
  private readonly options: typeof DEFAULTS;
  private readonly now: () => number;
  private readonly guard = new EchoGuard();
  private readonly micClock = new MicClock();
  private readonly canceller: EchoCanceller | undefined;
  private readonly endOfTurn: EndOfTurn;
  private readonly usePitch: boolean;
  private vad: VoiceActivityDetector | undefined;
  private readonly vadReady: Promise<VoiceActivityDetector | undefined>;
  private languages: string[];
  private agentTalking = false;
  private closed = false;

  private readonly frame = new Int16Array(VAD_FRAME);
  private frameFill = 0;
  private readonly pending: Array<{ pcm: Int16Array; endMs: number }> = [];
  private pumping: Promise<void> | undefined;
  private droppedFrames = 0;

  private readonly preroll: Int16Array[] = [];
  private readonly prerollFrames: number;
  private inSpeech = false;
  private segment: Segment | undefined;

  private queuedTurns = 0;
  private turns = 0;
  private turnChain: Promise<void> = Promise.resolve();

  constructor(
    private readonly recognizer: Recognizer,
    private readonly events: ListenerEvents,
    options: ListenerOptions = {},
  ) {
    this.options = { ...DEFAULTS, ...definedOnly(options) } as typeof DEFAULTS;
    if (options.cancelEcho !== false) this.canceller = new EchoCanceller();
    this.now = options.now ?? (() => performance.now());
    const endOfTurn = { ...END_OF_TURN_DEFAULTS, ...options.endOfTurn };
    this.endOfTurn = new EndOfTurn(endOfTurn);
    this.usePitch = usesPitch(endOfTurn);
    this.languages = options.languages?.length ? [...options.languages] : ['en'];
    this.prerollFrames = Math.ceil(this.options.prerollMs / FRAME_MS);
    this.vadReady = Promise.resolve(options.vad ?? SileroVad.create()).then(
      (vad) => (this.vad = vad),
      (error: Error) => {
        this.events.error?.(new Error(`voice activity detection could not start: ${error.message}`));
        return undefined;
      },
    );
  }

  /** `lostBefore`: samples of the microphone captured just before these that never came (mic-clock.ts). */
  push(pcm: Int16Array, receivedAtMs: number, lostBefore = 0): void {
    if (this.closed) return;
    // When the push's last sample was captured: frames arrive in bursts (see mic-clock.ts).
    const capturedAtMs = this.micClock.date(pcm.length, receivedAtMs, lostBefore);
    for (let i = 0; i < pcm.length; ) {
      const take = Math.min(VAD_FRAME - this.frameFill, pcm.length - i);
      this.frame.set(pcm.subarray(i, i + take), this.frameFill);
      this.frameFill += take;
      i += take;
      if (this.frameFill === VAD_FRAME) {
        // The frame's last sample is `pcm.length - i` samples before the end of this push.
        const endMs = capturedAtMs - ((pcm.length - i) * 1000) / RECOGNITION_SAMPLE_RATE;
        this.pending.push({ pcm: this.frame.slice(), endMs });
        this.frameFill = 0;
        if (this.pending.length > MAX_PENDING_FRAMES) {
          this.pending.shift();
          this.droppedFrames++;
        }
      }
    }
    this.pumping ??= this.pump().finally(() => (this.pumping = undefined));
  }

  agentAudio(pcm: Int16Array, sampleRate: number, atMs: number): void {
    if (this.closed) return;
    this.guard.addAgentAudio(pcm, sampleRate, atMs);
    this.canceller?.addAgentAudio(pcm, sampleRate, atMs);
  }

  setAgentTalking(talking: boolean): void {
    this.agentTalking = talking;
  }

  setLanguages(languages: string[]): void {
    if (languages.length) this.languages = [...languages];
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending.length = 0;
    this.dropSegment();
  }

  /** Resolves once every frame pushed so far went through the VAD and every turn ended so far was reported (tests, bench). */
  async idle(): Promise<void> {
    while (this.pumping) await this.pumping;
    await this.turnChain;
  }

  /** Frames dropped because the VAD fell more than 3 s behind. */
  get framesDropped(): number {
    return this.droppedFrames;
  }

  private async pump(): Promise<void> {
    const vad = await this.vadReady;
    if (!vad) {
      this.pending.length = 0;
      return;
    }
    const samples = new Float32Array(VAD_FRAME);
    while (this.pending.length && !this.closed) {
      const { pcm: microphone, endMs } = this.pending.shift()!;
      // From here on the visitor's side is what the canceller (when on) left of the microphone.
      const cancelled = this.canceller?.process(microphone, endMs, this.guard.echoPath()) ?? { residual: microphone, echoLeft: 1 };
      const pcm = cancelled.residual;
      for (let i = 0; i < VAD_FRAME; i++) samples[i] = pcm[i] / 32768;
      let probability: number;
      try {
        probability = await vad.probability(samples);
      } catch (error) {
        this.events.error?.(error as Error);
        continue;
      }
      if (!this.closed) this.onFrame(microphone, cancelled, endMs, probability);
    }
  }

  private onFrame(microphone: Int16Array, cancelled: CancelledFrame, endMs: number, probability: number): void {
    const pcm = cancelled.residual;
    this.canceller?.setVisitorTalking(this.segment !== undefined);
    const visitorShare = this.guard.visitorShare(microphone, endMs, cancelled);
    const agentAudible = this.agentTalking || this.guard.agentAudible(endMs);
    const mostlyVisitor = !agentAudible || visitorShare >= 0.5;
    if (probability >= this.options.speechProbability && mostlyVisitor) this.inSpeech = true;
    else if (probability < this.options.silenceProbability || !mostlyVisitor) this.inSpeech = false;

    let segment = this.segment;
    if (!segment) {
      if (!this.inSpeech) {
        this.preroll.push(pcm);
        if (this.preroll.length > this.prerollFrames) this.preroll.shift();
        return;
      }
      const frames = this.preroll.splice(0);
      segment = this.segment = {
        turn: ++this.turns,
        frames,
        samples: frames.length * VAD_FRAME,
        voicedMs: 0,
        voicedOverAgentMs: 0,
        voicedOverAgentRunMs: 0,
        silenceMs: 0,
        lastVoicedEndMs: endMs,
        started: false,
        bargedIn: false,
        pausedAgent: false,
        ...(this.usePitch && { pitch: new PitchTrack() }),
      };
    }
    segment.frames.push(pcm);
    segment.samples += pcm.length;
    segment.stream?.push(pcm);

    if (this.inSpeech) this.onVoice(segment, pcm, endMs, agentAudible);
    else this.onSilence(segment);

    if (this.segment === segment && segment.samples >= this.options.maxTurnSeconds * RECOGNITION_SAMPLE_RATE) {
      // A visitor who never stops: the turn ends here, what follows is the next turn.
      if (segment.started) this.endTurn(segment);
      else this.dropSegment();
    }
  }

  private onVoice(segment: Segment, pcm: Int16Array, endMs: number, agentAudible: boolean): void {
    if (segment.silenceMs > 0 && segment.started) this.endOfTurn.recordPause(segment.silenceMs);
    if (segment.speculation) {
      segment.speculation.controller.abort();
      segment.speculation = undefined;
    }
    this.dropTentative(segment);
    segment.silenceMs = 0;
    if (segment.partialText !== undefined) segment.partialStale = true;
    segment.pitchEnd = undefined;
    segment.pitch?.push(pcm);
    segment.voicedMs += FRAME_MS;
    segment.lastVoicedEndMs = endMs;
    if (this.agentTalking) {
      segment.voicedOverAgentMs += FRAME_MS;
      segment.voicedOverAgentRunMs += FRAME_MS;
    }

    if (!segment.started && segment.voicedMs >= this.options.minSpeechMs) {
      segment.started = true;
      this.events.speechStarted?.();
      this.openStream(segment);
    }
    if (this.agentTalking && !segment.bargedIn) {
      // Until the guard knows the echo's path, a loud agent's echo can pass for the visitor: more voice is needed.
      const unsure = agentAudible && !this.guard.echoKnown() ? this.options.bargeInUnknownEchoMs : 0;
      if (segment.voicedOverAgentMs >= this.options.bargeInMs + unsure) {
        segment.bargedIn = true;
        segment.pausedAgent = false;
        this.events.bargeIn?.();
      } else if (!segment.pausedAgent && this.options.pauseAfterMs > 0 && segment.voicedOverAgentRunMs >= this.options.pauseAfterMs + unsure) {
        segment.pausedAgent = true;
        this.events.bargeInStarted?.();
      }
    }
  }

  /** The agent paused for `segment` goes on: its voice was no barge-in after all. */
  private takeBackPause(segment: Segment): void {
    if (!segment.pausedAgent) return;
    segment.pausedAgent = false;
    this.events.bargeInDropped?.();
  }

  private onSilence(segment: Segment): void {
    segment.silenceMs += FRAME_MS;
    segment.voicedOverAgentRunMs = 0;
    if (segment.silenceMs >= RESUME_SILENCE_MS) this.takeBackPause(segment);
    const backChannel = !segment.bargedIn && segment.voicedOverAgentMs > segment.voicedMs / 2;
    if ((!segment.started || backChannel) && segment.silenceMs >= DISCARD_SILENCE_MS) {
      this.dropSegment();
      return;
    }
    if (!segment.started) return;
    if (segment.silenceMs >= PAUSE_TOLD_MS && segment.silenceMs - FRAME_MS < PAUSE_TOLD_MS) segment.stream?.pause?.();
    const speculateAfter = this.options.speculateAfterMs;
    if (!segment.stream && !segment.speculation && speculateAfter > 0 && segment.silenceMs >= speculateAfter) {
      this.speculate(segment);
    }
    const words = (segment.partialStale ? undefined : segment.partialText) ?? segment.speculation?.text;
    segment.pitchEnd ??= segment.pitch?.end();
    if (segment.silenceMs >= this.endOfTurn.silenceNeeded(words, segment.pitchEnd)) this.endTurn(segment);
  }

  private openStream(segment: Segment): void {
    if (!this.recognizer.stream) return;
    try {
      const stream = this.recognizer.stream(this.recognitionOptions());
      if (!stream) return; // busy: the turn is recognised whole (speculatively) instead
      stream.onPartial = (text) => {
        if (this.segment !== segment || !text.trim()) return;
        const changed = text !== segment.partialText;
        segment.partialText = text;
        segment.partialStale = false;
        // Engines repeat unchanged words (Deepgram, sherpa-onnx): the caption gets each change once.
        if (changed) this.events.partial?.(text);
        // A phrase closed during the visitor's silence: the turn's words, unless the visitor goes on.
        if (segment.silenceMs > 0) this.tell(segment, text);
      };
      for (const frame of segment.frames) stream.push(frame);
      segment.stream = stream;
    } catch (error) {
      this.events.error?.(error as Error);
    }
  }

  private speculate(segment: Segment): void {
    const controller = new AbortController();
    const result = this.recognizer.transcribe(concatInt16(segment.frames), { ...this.recognitionOptions(), signal: controller.signal });
    const speculation = { controller, result, text: undefined as string | undefined };
    result.then(
      (t) => {
        speculation.text = t.text;
        // It heard every word so far and the visitor has not spoken since (a voiced frame would have aborted it).
        if (this.segment === segment && segment.speculation === speculation) this.tell(segment, t.text, t.language);
      },
      () => {},
    );
    segment.speculation = speculation;
  }

  private endTurn(segment: Segment): void {
    const turnEndedAt = this.now();
    this.segment = undefined;
    this.events.turnEnded?.();
    this.inSpeech = false;
    if (this.queuedTurns >= this.options.maxQueuedTurns) {
      segment.stream?.abort();
      segment.speculation?.controller.abort();
      this.dropTentative(segment);
      this.takeBackPause(segment);
      this.events.error?.(new Error('speech recognition is behind: a visitor turn was dropped'));
      return;
    }
    const audio = concatInt16(segment.frames);
    const speechSeconds = segment.voicedMs / 1000;
    const speechEndedAt = segment.lastVoicedEndMs;
    // Words the engine has settled, told during this pause, with no voice since: the turn's words
    // now, while the decoder finishes in the background. A speculation started after the last
    // voiced frame has heard every word of the turn.
    const settled = segment.tentativeText !== undefined && !segment.partialStale ? segment.stream?.settled?.() : undefined;
    const recognition = segment.stream
      ? settled && settled.text.trim() === segment.tentativeText
        ? (segment.stream.finish().catch(() => {}), Promise.resolve(settled))
        : segment.stream.finish()
      : (segment.speculation?.result ?? this.recognizer.transcribe(audio, this.recognitionOptions()));
    recognition.catch(() => {}); // reported in order below
    this.queuedTurns++;
    this.turnChain = this.turnChain.then(async () => {
      try {
        const transcript = await recognition;
        const recognisedAt = this.now();
        const text = transcript.text.trim();
        if (this.closed) return;
        if (!text) {
          this.dropTentative(segment);
          this.takeBackPause(segment);
          return;
        }
        const turn: VisitorTurnHeard = {
          ...transcript,
          turn: segment.turn,
          text,
          engine: this.recognizer.name,
          timings: { speechEndedAt, turnEndedAt, recognisedAt },
          speechSeconds,
        };
        this.events.turn(turn);
      } catch (error) {
        if (!this.closed) {
          this.dropTentative(segment);
          this.takeBackPause(segment);
          this.events.error?.(error as Error);
        }
      } finally {
        this.queuedTurns--;
      }
    });
  }

  private dropSegment(): void {
    const segment = this.segment;
    this.segment = undefined;
    if (!segment) return;
    segment.stream?.abort();
    segment.speculation?.controller.abort();
    this.dropTentative(segment);
    this.takeBackPause(segment);
  }

  /** Tells the turn's words as tentative (once per change of words). */
  private tell(segment: Segment, text: string, language?: string): void {
    const words = text.trim();
    if (!words || !segment.started || words === segment.tentativeText) return;
    segment.tentativeText = words;
    this.events.tentative?.({ turn: segment.turn, text: words, ...(language && { language }), speechEndedAt: segment.lastVoicedEndMs });
  }

  /** The words told as tentative are not the turn's end after all. */
  private dropTentative(segment: Segment): void {
    if (segment.tentativeText === undefined) return;
    segment.tentativeText = undefined;
    this.events.tentativeDropped?.();
  }

  private recognitionOptions() {
    return { language: this.languages[0], languages: this.languages };
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

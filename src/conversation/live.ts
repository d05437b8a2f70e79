/**
 * One live conversation (a conversation-mode session): the loop from what the visitor says or
 * types to the avatar's answer, voiced through the same real-time path as render mode.
 *
 *   microphone ─▶ Listener (VAD, end of turn, recogniser) ─▶ turn ┐
 *   typed text / visitor.message ─────────────────────────────────┴▶ language ▶ AnswerEngine.answer()
 *      ▶ text as it streams ▶ RealtimeSession.speak (speech layer, sentence by sentence)
 *      ▶ utterance queue ▶ playback clock ▶ lips, expressions, captions ▶ player
 *
 * The agent greets first (`welcome_message`, in `languages.main`) once a page is open, or before
 * its first answer when none is. A visitor who speaks over the agent long enough (barge-in), or
 * sends a new turn, interrupts it: voice and lips stop together and the answer being generated is
 * aborted. The agent's voice already pauses at the first frames of the visitor's voice over it, so
 * the visitor is not talked over while the barge-in is decided; when it was none (a back-channel,
 * a cough) the voice goes on where it paused. A thinking sound plays when the answer's first audio is not ready after `fillerAfterMs`.
 *
 * Preemptive generation: when the listener tells the turn's words before the turn has ended (the
 * live decoder closed its phrase at the visitor's pause), the answer is prepared from them at once,
 * brain and first audio, and held out of the real-time path. When the turn ends with the same words
 * it is committed and its first audio leaves at once; when the visitor goes on speaking, or the turn
 * ends with other words, it is thrown away unseen (no record, gap, state, caption or filler) and the
 * turn is answered as usual. At most one answer is prepared per conversation at a time.
 * Every turn is recorded with its latency waterfall; the conversation ends `visitor_left` when the
 * page stays away past a grace period, and `idle` (after a goodbye) when the visitor says nothing
 * for a long time.
 *
 * This file is the loop itself (the conversation's state and the order of things); its parts are
 * beside it, one job each: `generation.ts` (the answering engine run on a turn), `text-pipe.ts`
 * (its text as the speech layer reads it), `voicing.ts` (what the visitor heard of an utterance),
 * `held-speech.ts` (first audio voiced ahead and held), `answer.ts` (an answer in flight, one
 * prepared ahead, the latency waterfall), `preemptive-stats.ts` (the loop's counters of answers
 * prepared ahead) and `agent-words.ts` (goodbyes, visitor values in the welcome).
 */
import crypto from 'node:crypto';
import type { AnswerEngine, ConversationTurn, MissingDetail } from '../brain/engine.js';
import type { RealtimeSession, Speaker } from '../realtime/session.js';
import type { Utterance } from '../realtime/utterance-queue.js';
import type { Recognizer } from '../speech/recognition/types.js';
import type { ConversationSpeech, SpeakingAgent } from '../speech/conversation.js';
import type { TurnInput } from './records.js';
import { createListener, type Listener, type ListenerOptions, type TentativeTurn, type VisitorTurnHeard } from './listening/index.js';
import type { VisitorInput } from '../realtime/visitor-input.js';
import { visitorLanguage } from './language.js';
import { fillVisitorValues, goodbyeIn } from './agent-words.js';
import { type Answer, normalise, type Prepared, sameTurns, waterfall } from './answer.js';
import { type Generation, generate, type LiveConversationFacts, logGenerationFailure } from './generation.js';
import { HeldSpeech } from './held-speech.js';
import type { DiscardReason, PreemptiveStats } from './preemptive-stats.js';
import { once } from './text-pipe.js';
import { PLAYOUT_MARGIN_MS, Voicing } from './voicing.js';

export type { LiveConversationFacts } from './generation.js';

/** How long the loop waits before the conversation's timers act. */
export interface LiveTiming {
  /** No first audio of the answer after this long: a filler plays (when the agent has them). */
  fillerAfterMs: number;
  /** No visitor turn for this long after the agent finished speaking (a page open): goodbye, end `idle`. */
  idleMs: number;
  /** The last page went away and none came back within this: end `visitor_left`. */
  visitorLeftGraceMs: number;
  /**
   * Longest pause of the agent's voice for a barge-in not decided yet. The listener decides within
   * about half a second; this only bounds a pause whose decision never came.
   */
  maxBargeInPauseMs: number;
}

export const LIVE_TIMING_DEFAULTS: LiveTiming = { fillerAfterMs: 700, idleMs: 120_000, visitorLeftGraceMs: 30_000, maxBargeInPauseMs: 2500 };

/** The longest visitor turn kept (typed text beyond it is cut). */
export const MAX_VISITOR_TEXT = 2000;
/** Turns of history handed to the answering engine. */
const HISTORY_TURNS = 30;

/** What the loop needs of the agent (the session's voice may differ from the agent's). */
export interface LiveAgent extends SpeakingAgent {
  id: number;
  account_id: number;
  name: string;
}

export interface LiveConversationDeps {
  sessionId: string;
  session: RealtimeSession;
  answers: AnswerEngine;
  /** Writes a turn to the conversation's record. */
  addTurn(turn: TurnInput): Promise<void>;
  speech: ConversationSpeech;
  /** The session's voice for a language (another voice of the provider when the session's cannot speak it). */
  voiceFor(language: string): { provider: string; voiceId: string };
  speakerFor(voice: { provider: string; voiceId: string; language: string }): Speaker;
  /** The agent, its visitor values and the conversation so far (after a restart). */
  load(): Promise<{ agent: LiveAgent; visitor: Record<string, string>; history: ConversationTurn[] }>;
  recognizer?: Recognizer;
  listenerOptions?: ListenerOptions;
  missingDetails?: (conversation: LiveConversationFacts) => Promise<MissingDetail[]>;
  endSession(reason: 'idle' | 'visitor_left'): Promise<void>;
  timing: LiveTiming;
  /** Prepare answers before the visitor's turn has ended (preemptive generation; default true). */
  preemptive?: boolean;
  /** Where preemptive generation counts what it did (the conversation loop's, shared by its conversations). */
  preemptiveStats: PreemptiveStats;
  /**
   * Whether an answer prepared ahead may also be voiced ahead with this voice (default: yes). The
   * app says no for billed (premium) providers: speech thrown away would be charged and paid for,
   * so with them only the text is prepared ahead and the voice starts when the answer is committed.
   */
  preparesSpeech?: (voice: { provider: string; voiceId: string }) => boolean;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export class LiveConversation implements VisitorInput {
  readonly id: string;
  /** Prepares answers before the visitor's turn has ended (deps.preemptive; the bench switches it per turn). */
  preemptive: boolean;
  private readonly ready: Promise<boolean>;
  private agent!: LiveAgent;
  private visitor: Record<string, string> = {};
  private history: ConversationTurn[] = [];
  private language = 'en';
  private languages: string[] = ['en'];
  private listener?: Listener;
  private muted = false;
  /** A player page is connected (the player channel says when the last one goes). */
  private pageOpen = false;
  private welcomed = false;
  private closed = false;
  private answer?: Answer;
  /** The answer prepared ahead of the end of the visitor's turn, at most one. */
  private prepared?: Prepared;
  private loaded = false;
  private idleTimer?: NodeJS.Timeout;
  private leftTimer?: NodeJS.Timeout;
  private ending = false;
  /** Turn writes, in order (a visitor turn is written before the answer to it). */
  private writes: Promise<void> = Promise.resolve();
  private listenerErrors = 0;
  /** The agent's own utterances being voiced, by utterance id (what of each the visitor heard). */
  private readonly voicings = new Map<string, Voicing>();
  /** Resolves when the last answer is recorded as heard (the next turn's history includes it). */
  private answerRecorded: Promise<void> = Promise.resolve();
  /** An answer is being given and is not recorded yet (its history is not final). */
  private recording = false;
  /** Visitor turns received whose answer has not begun yet. */
  private turnsStarting = 0;
  /** The agent's voice is paused for a barge-in being decided; the timer takes the pause back at its bound. */
  private bargeInPause?: NodeJS.Timeout;

  constructor(private readonly deps: LiveConversationDeps) {
    this.id = deps.sessionId;
    this.preemptive = deps.preemptive !== false;
    const session = deps.session;
    session.startListening();
    session.onAudioOut = (utteranceId, pcm, sampleRate, t) => {
      // When the frame is due, not when this tick sent it: the echo canceller needs the agent's
      // voice placed to the sample, and the page plays by `t`.
      this.listener?.agentAudio(pcm, sampleRate, session.performanceTimeOf(t) ?? performance.now());
      const voicing = this.voicings.get(utteranceId);
      if (voicing) voicing.released += pcm.length;
      if (this.answer && utteranceId === this.answer.utteranceId) this.answer.markFirstAudio();
    };
    session.onStateChange = (state) => {
      this.listener?.setAgentTalking(state === 'talking');
      if (state === 'talking') this.clearIdle();
      else if (!this.answer) this.armIdle();
    };
    this.ready = deps.load().then(
      ({ agent, visitor, history }) => {
        this.agent = agent;
        this.visitor = visitor;
        this.history = history.slice(-HISTORY_TURNS);
        this.welcomed = history.some((t) => t.role === 'agent');
        this.language = agent.languages.main;
        this.languages = [agent.languages.main, ...(agent.languages.also ?? []).filter((l) => l !== agent.languages.main)];
        this.listener?.setLanguages(this.orderedLanguages());
        void deps.speech.prepareFillers(this.speaking(this.language), { sampleRate: session.sampleRate }).catch(() => {});
        this.loaded = true;
        return true;
      },
      (error: Error) => {
        deps.log.error({ err: error, session_id: this.id }, 'live conversation could not load its agent');
        return false;
      },
    );
  }

  // ------------------------------------------------------------------ VisitorInput

  microphone(pcm: Int16Array, receivedAtMs: number, lostBefore = 0): void {
    if (this.closed || this.muted || !this.deps.recognizer) return;
    this.listener ??= this.makeListener(this.deps.recognizer);
    this.listener.push(pcm, receivedAtMs, lostBefore);
  }

  typed(text: string): void {
    const turn = text.trim().slice(0, MAX_VISITOR_TEXT);
    if (turn) void this.visitorTurn(turn, 'typed');
  }

  setMuted(muted: boolean): void {
    if (this.closed || muted === this.muted) return;
    this.muted = muted;
    if (muted) {
      // What the listener holds of an unfinished turn goes; unmuting starts afresh.
      this.discardPrepared('other');
      this.listener?.close();
      this.listener = undefined;
      this.resumeAgent();
      this.deps.session.stopListening();
    } else {
      this.deps.session.startListening();
    }
  }

  pageConnected(): void {
    if (this.closed) return;
    this.pageOpen = true;
    if (this.leftTimer) clearTimeout(this.leftTimer);
    this.leftTimer = undefined;
    void this.ready.then((ok) => ok && this.welcome());
    this.armIdle();
  }

  pageDisconnected(): void {
    if (this.closed) return;
    this.pageOpen = false;
    this.clearIdle();
    if (this.leftTimer) clearTimeout(this.leftTimer);
    this.leftTimer = setTimeout(() => void this.end('visitor_left'), this.deps.timing.visitorLeftGraceMs);
    this.leftTimer.unref?.();
  }

  // ------------------------------------------------------------------ commands

  /** `visitor.message`: a visitor turn, exactly as if typed in the player. */
  message(text: string): void {
    this.typed(text);
  }

  /** `agent.speak_text` sent by the business's server: part of the conversation, recorded. */
  spoken(text: string): void {
    if (this.closed) return;
    // The business speaks into the visitor's pause: an answer prepared without these words goes.
    this.discardPrepared('other');
    this.welcomed = true;
    this.remember({ role: 'agent', text });
    this.write({ role: 'agent', text, details: { source: 'command' } });
  }

  /** The session ended: stop listening, abort the answer, drop timers. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.answer?.controller.abort();
    this.discardPrepared('other');
    this.listener?.close();
    this.listener = undefined;
    this.clearBargeInPause();
    this.clearIdle();
    if (this.leftTimer) clearTimeout(this.leftTimer);
    this.deps.session.onAudioOut = undefined;
    this.deps.session.onStateChange = undefined;
  }

  /** Resolves when every turn so far is written (tests). */
  async settled(): Promise<void> {
    await this.writes;
  }

  // ------------------------------------------------------------------ the loop

  private makeListener(recognizer: Recognizer): Listener {
    const listener = createListener(
      recognizer,
      {
        speechStarted: () => this.clearIdle(),
        partial: (text) => this.deps.session.showVisitorWords(text, false),
        bargeInStarted: () => this.pauseAgent(),
        bargeIn: () => this.interrupt(),
        bargeInDropped: () => this.resumeAgent(),
        tentative: (turn) => {
          try {
            this.prepare(turn);
          } catch (error) {
            // Preparing ahead is an optimisation: the turn is answered as usual when it ends.
            this.discardPrepared('other');
            this.deps.log.warn({ err: (error as Error).message, session_id: this.id }, 'an answer could not be prepared ahead');
          }
        },
        tentativeDropped: () => this.discardPrepared('resumed'),
        turn: (heard) => void this.visitorTurn(heard.text, 'voice', heard),
        error: (error) => {
          // One line per kind of trouble is enough: a broken engine would otherwise log every turn.
          if (this.listenerErrors++ < 3) this.deps.log.warn({ err: error.message, session_id: this.id }, 'listening failed for a visitor turn');
        },
      },
      { ...this.deps.listenerOptions, languages: this.orderedLanguages() },
    );
    listener.setAgentTalking(this.deps.session.state === 'talking');
    return listener;
  }

  private orderedLanguages(): string[] {
    return [this.language, ...this.languages.filter((l) => l !== this.language)];
  }

  private speaking(language: string): SpeakingAgent {
    const voice = this.deps.voiceFor(language);
    return { ...this.agent, voice_id: voice.voiceId, tts_primary: voice.provider };
  }

  private speaker(language: string): Speaker {
    return this.deps.speakerFor({ ...this.deps.voiceFor(language), language });
  }

  private welcome(): void {
    if (this.welcomed || this.closed) return;
    this.welcomed = true;
    const text = fillVisitorValues(this.agent.welcome_message?.trim() ?? '', this.visitor);
    if (!text) return;
    const language = this.agent.languages.main;
    this.remember({ role: 'agent', text });
    this.speakOwn(`welcome_${crypto.randomUUID()}`, text, language, { source: 'welcome' });
  }

  /**
   * Voices words of the agent's own and records them once their utterance is over, as heard: an
   * utterance cut short is recorded with the words that were heard and `interrupted: true`. The
   * turn's place in the record (and its time) is taken now, so later turns stay after it.
   */
  private speakOwn(utteranceId: string, text: string, language: string, details: Record<string, unknown>) {
    const voicing = this.watch(utteranceId);
    const utterance = this.deps.session.speak({ text: once(text), eventId: utteranceId, speaker: voicing.wrap(this.speaker(language)) });
    const heard = this.whenOver(utterance).then(() => this.heardTurn(voicing, text, { role: 'agent', text, language, details }));
    this.writeLater(heard);
    return utterance;
  }

  private watch(utteranceId: string): Voicing {
    const voicing = new Voicing(utteranceId, this.deps.session.sampleRate);
    this.voicings.set(utteranceId, voicing);
    return voicing;
  }

  /** Resolves when the utterance has left the queue (played, cut or dropped) or the conversation closed. */
  private whenOver(utterance: Utterance): Promise<void> {
    const session = this.deps.session;
    return new Promise<void>((resolve) => {
      const check = () => {
        if (this.closed || !session.queue.items.includes(utterance)) {
          clearInterval(timer);
          resolve();
        }
      };
      const timer = setInterval(check, 50);
      timer.unref?.();
      check();
    });
  }

  /** The turn as heard: the whole text, or when it was cut, the words heard and `interrupted: true`. */
  private heardTurn(voicing: Voicing, text: string, turn: TurnInput, aborted = false): TurnInput {
    this.voicings.delete(voicing.utteranceId);
    if (!aborted && voicing.complete) return turn;
    const heard = voicing.heardText(text);
    return { ...turn, text: heard, details: { ...turn.details, interrupted: true, ...(heard !== text.trim() && { generated: text.trim() }) } };
  }

  /**
   * The business's agent.interrupt (the realtime session already cut voice and lips): the answer
   * being generated is cancelled too, so the model stops writing and no thinking sound follows.
   */
  interrupted(): void {
    this.clearBargeInPause();
    this.answer?.controller.abort();
    this.discardPrepared('other');
  }

  /** Barge-in: voice and lips stop together, and the answer being generated is cancelled. */
  private interrupt(): void {
    const session = this.deps.session;
    const speaking = session.queue.items.length > 0;
    this.clearBargeInPause();
    this.answer?.controller.abort();
    this.discardPrepared('other');
    if (speaking) session.interrupt(`evt_${crypto.randomUUID()}`);
  }

  /** The visitor's voice began over the agent: its voice holds (and the mouth closes) until the barge-in is decided. */
  private pauseAgent(): void {
    if (this.closed || this.bargeInPause || !this.deps.session.pause()) return;
    this.bargeInPause = setTimeout(() => this.resumeAgent(), this.deps.timing.maxBargeInPauseMs);
    this.bargeInPause.unref?.();
  }

  /** It was no barge-in: the agent goes on where it paused. */
  private resumeAgent(): void {
    if (!this.bargeInPause) return;
    this.clearBargeInPause();
    if (!this.closed) this.deps.session.resume();
  }

  private clearBargeInPause(): void {
    if (this.bargeInPause) clearTimeout(this.bargeInPause);
    this.bargeInPause = undefined;
  }

  // ------------------------------------------------------------------ preemptive generation

  /**
   * The listener tells the turn's words before the turn has ended: prepare the answer now (brain and
   * first audio, held), unless the agent is busy (talking, answering, or a cut answer not yet
   * recorded): the turn is then answered as usual when it ends. Nothing of it is shown or recorded.
   */
  private prepare(tentative: TentativeTurn): void {
    this.discardPrepared('resumed'); // new words for the turn: the answer to the old ones goes
    if (!this.preemptive || this.closed || this.muted || !this.loaded || this.ending || !this.welcomed) return;
    const session = this.deps.session;
    if (this.answer || session.queue.items.length || this.recording || this.turnsStarting) return;
    const text = tentative.text.trim().slice(0, MAX_VISITOR_TEXT);
    if (!text) return;
    const language = visitorLanguage(text, this.languages, this.language, tentative.language);
    const history = this.history.slice();
    const generation = this.generate(text, language, history, true);
    const voice = this.deps.voiceFor(language);
    const speech = this.deps.preparesSpeech?.(voice) === false ? undefined : new HeldSpeech(this.speaker(language), generation.pipe, session.sampleRate);
    this.prepared = { turn: tentative.turn, text, language, history, sampleRate: session.sampleRate, generation, speech, startedAt: performance.now() };
    this.deps.preemptiveStats.started++;
  }

  /** Throws the prepared answer away: the engine and the speech stop, and nothing of it remains. */
  private discardPrepared(reason: DiscardReason): void {
    const prepared = this.prepared;
    this.prepared = undefined;
    if (prepared) this.discard(prepared, reason);
  }

  private discard(prepared: Prepared, reason: DiscardReason): void {
    const now = performance.now();
    prepared.generation.controller.abort();
    prepared.generation.pipe.close();
    prepared.speech?.abort();
    this.deps.preemptiveStats.discarded[reason]++;
    void prepared.generation.finished.then(() => {
      const engine = Math.min(prepared.generation.finishedAt ?? now, now) - prepared.startedAt;
      const speech = prepared.speech ? Math.min(prepared.speech.readyAt ?? now, now) - prepared.speech.startedAt : 0;
      this.deps.preemptiveStats.discardedWorkMs += engine + speech;
    });
  }

  /**
   * The prepared answer, when it answers this turn as it ended: the same listener turn and the same
   * words (ignoring spacing and case). Any other turn throws it away.
   */
  private takePrepared(text: string, heard: VisitorTurnHeard | undefined): Prepared | undefined {
    const prepared = this.prepared;
    if (!prepared) return undefined;
    if (!heard) {
      this.discardPrepared('other'); // a typed turn came first
      return undefined;
    }
    if (heard.turn !== prepared.turn || normalise(heard.text) !== normalise(prepared.text) || normalise(text) !== normalise(prepared.text)) {
      this.discardPrepared('mismatch');
      return undefined;
    }
    this.prepared = undefined;
    return prepared;
  }

  /** Starts the answering engine on a turn (generation.ts). */
  private generate(text: string, language: string, history: ConversationTurn[], speculative: boolean): Generation {
    return generate(this.deps, { conversationId: this.id, agent: this.agent, visitor: this.visitor, history, text, language, speculative });
  }

  private logFailure(error: Error): void {
    logGenerationFailure(this.deps.log, this.id, error);
  }

  private async visitorTurn(text: string, source: 'voice' | 'typed', heard?: VisitorTurnHeard): Promise<void> {
    const receivedAt = performance.now();
    // The answer prepared ahead for exactly this turn is kept; any other is thrown away.
    let prepared = this.takePrepared(text, heard);
    const drop = (reason: DiscardReason) => {
      if (prepared) this.discard(prepared, reason);
      prepared = undefined;
    };
    this.turnsStarting++;
    try {
      if (this.closed || !(await this.ready) || this.closed) return drop('other');
      this.clearIdle();
      // A new turn supersedes whatever the agent was saying or preparing.
      if (this.answer || this.deps.session.queue.items.length) this.interrupt();
      // The cut answer is remembered as heard before this turn's history is taken (at most ~50 ms).
      await this.answerRecorded;
    } finally {
      this.turnsStarting--;
    }
    if (this.closed) return drop('other');
    this.welcome();

    const language = visitorLanguage(text, this.languages, this.language, heard?.language);
    // Prepared on the same footing, or thrown away: the same language, history and audio rate.
    if (
      prepared &&
      (prepared.language !== language ||
        prepared.sampleRate !== this.deps.session.sampleRate ||
        !sameTurns(prepared.history, this.history) ||
        prepared.generation.controller.signal.aborted)
    )
      drop('mismatch');
    if (language !== this.language) {
      this.language = language;
      this.listener?.setLanguages(this.orderedLanguages());
      void this.deps.speech.prepareFillers(this.speaking(language), { sampleRate: this.deps.session.sampleRate }).catch(() => {});
    }
    this.deps.session.showVisitorWords(text, true);
    const history = this.history.slice();
    this.remember({ role: 'visitor', text });
    this.write({
      role: 'visitor',
      text,
      language,
      details: {
        source,
        ...(heard && {
          engine: heard.engine,
          speech_seconds: round(heard.speechSeconds, 2),
          ...(heard.confidence !== undefined && { confidence: heard.confidence }),
        }),
      },
    });
    if (prepared) this.deps.preemptiveStats.kept++;
    await this.respond(text, language, history, heard, receivedAt, prepared);
  }

  private async respond(
    text: string,
    language: string,
    history: ConversationTurn[],
    heard: VisitorTurnHeard | undefined,
    receivedAt: number,
    prepared?: Prepared,
  ): Promise<void> {
    const session = this.deps.session;
    const generation = prepared?.generation ?? this.generate(text, language, history, false);
    const controller = generation.controller;
    let markFirstAudio!: () => void;
    const answer: Answer = {
      controller,
      generation,
      utteranceId: `answer_${crypto.randomUUID()}`,
      language,
      startedAt: receivedAt,
      ...(prepared && { preparedAt: prepared.startedAt }),
      firstAudio: new Promise<void>((resolve) => (markFirstAudio = resolve)),
      markFirstAudio: () => {
        if (answer.firstAudioAt === undefined) answer.firstAudioAt = performance.now();
        markFirstAudio();
      },
    };
    controller.signal.addEventListener('abort', () => markFirstAudio(), { once: true });
    this.answer = answer;
    session.showThinking();

    const voicing = this.watch(answer.utteranceId);
    // A prepared answer's held audio goes first, so it leaves at the next tick of the clock.
    const speaker = prepared?.speech?.speaker() ?? this.speaker(language);
    const utterance = session.speak({ text: generation.pipe, eventId: answer.utteranceId, speaker: voicing.wrap(speaker) });
    let recorded!: () => void;
    this.recording = true;
    this.answerRecorded = new Promise<void>(
      (resolve) =>
        (recorded = () => {
          if (this.answerRecorded === answerRecorded) this.recording = false;
          resolve();
        }),
    );
    const answerRecorded = this.answerRecorded;
    // The answer's place in the record is taken now; it is written once it has been heard.
    let heardTurn!: (turn: TurnInput | undefined) => void;
    this.writeLater(new Promise<TurnInput | undefined>((resolve) => (heardTurn = resolve)));
    const filler = setTimeout(() => {
      if (answer.firstAudioAt !== undefined || controller.signal.aborted) return;
      const sound = this.deps.speech.filler(this.speaking(language), { sampleRate: session.sampleRate, language });
      if (!sound || sound.sampleRate !== session.sampleRate) return;
      answer.fillerAt = performance.now();
      session.playBeforePending(sound.pcm, `filler_${crypto.randomUUID()}`);
    }, this.deps.timing.fillerAfterMs);

    await generation.finished;
    const done = generation.done;
    if (prepared && generation.failure) this.logFailure(generation.failure);
    const failure = generation.failure?.message;
    // The side effects a prepared answer held back (its knowledge gap) happen now that it is given.
    let gapId = done?.gapId;
    if (done?.commit && !controller.signal.aborted) {
      gapId = await done.commit().catch((error: Error) => {
        this.deps.log.warn({ err: error.message, session_id: this.id }, 'a knowledge gap could not be recorded');
        return undefined;
      });
    }
    // Nothing will be voiced (an empty answer, or speech failed): the first audio never comes.
    const noAudio = new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (!session.queue.items.includes(utterance) || controller.signal.aborted) {
          clearInterval(check);
          resolve();
        }
      }, 50);
      check.unref?.();
    });
    await Promise.race([answer.firstAudio, noAudio]);
    clearTimeout(filler);
    if (this.answer === answer) this.answer = undefined;
    // Back to listening unless the agent talks or a newer turn is being answered.
    if (session.state !== 'talking' && !this.answer && !this.closed) {
      session.stopThinking();
      this.armIdle();
    }

    await this.whenOver(utterance);
    if (!generation.text.trim()) {
      this.voicings.delete(voicing.utteranceId);
      heardTurn(undefined);
      recorded();
      return;
    }
    const turn = this.heardTurn(
      voicing,
      generation.text,
      {
        role: 'agent',
        text: generation.text.trim(),
        language,
        details: {
          source: 'answer',
          engine: done?.engine ?? this.deps.answers.name,
          answered: done?.answered ?? false,
          sources: done?.sources ?? [],
          ...(gapId !== undefined && { gap_id: gapId }),
          ...(failure && { error: failure }),
          ...(answer.fillerAt !== undefined && { filler: true }),
          latency_ms: waterfall(answer, heard),
        },
      },
      controller.signal.aborted,
    );
    // The engine's next turn sees what the visitor heard of this one, not what was generated.
    if (turn.text) this.remember({ role: 'agent', text: turn.text });
    heardTurn(turn);
    recorded();
  }

  private remember(turn: ConversationTurn): void {
    this.history.push(turn);
    if (this.history.length > HISTORY_TURNS) this.history.splice(0, this.history.length - HISTORY_TURNS);
  }

  private write(turn: TurnInput): void {
    this.writeLater(Promise.resolve(turn));
  }

  /** Takes the turn's place (and time) in the record now; writes it once known (undefined: nothing). */
  private writeLater(turn: Promise<TurnInput | undefined>): void {
    const at = new Date();
    this.writes = this.writes
      .then(() => turn)
      .then((known) => known && this.deps.addTurn({ ...known, at }))
      .catch((error) => this.deps.log.error({ err: error, session_id: this.id }, 'a conversation turn could not be recorded'));
  }

  // ------------------------------------------------------------------ endings

  private armIdle(): void {
    this.clearIdle();
    if (this.closed || this.ending || !this.pageOpen || this.answer) return;
    if (this.deps.session.state === 'talking') return;
    this.idleTimer = setTimeout(() => void this.sayGoodbye(), this.deps.timing.idleMs);
    this.idleTimer.unref?.();
  }

  private clearIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private async sayGoodbye(): Promise<void> {
    if (this.closed || this.ending || !(await this.ready)) return;
    this.ending = true;
    const language = this.language;
    const text = goodbyeIn(language);
    const session = this.deps.session;
    this.remember({ role: 'agent', text });
    const utterance = this.speakOwn(`goodbye_${crypto.randomUUID()}`, text, language, { source: 'goodbye' });
    // The goodbye is heard before the session closes (at most 20 s, should speech stall).
    const deadline = performance.now() + 20_000;
    while (!this.closed && session.queue.items.includes(utterance) && performance.now() < deadline) await sleep(50);
    await sleep(PLAYOUT_MARGIN_MS);
    await this.end('idle');
  }

  private async end(reason: 'idle' | 'visitor_left'): Promise<void> {
    if (this.closed) return;
    await this.writes;
    await this.deps.endSession(reason).catch((error) => this.deps.log.error({ err: error, session_id: this.id }, 'the conversation could not end its session'));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

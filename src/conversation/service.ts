/**
 * Conversation mode's live side: one LiveConversation per conversation-mode session on this node,
 * opened with the session and closed when it ends. The player channel hands each one the visitor's
 * microphone, typed turns, mute and presence (`inputs`, a VisitorInputs); the commands route hands
 * it `visitor.message` and the business's own `agent.speak_text`.
 */
import type { AnswerEngine, ConversationTurn, MissingDetail } from '../brain/engine.js';
import type { RealtimeService, SpeakerFactory } from '../realtime/service.js';
import type { SessionRow } from '../sessions/service.js';
import type { Recognizer } from '../speech/recognition/types.js';
import type { ConversationSpeech } from '../speech/conversation.js';
import type { VoiceCatalog } from '../speech/voices/catalog.js';
import type { ConversationRecords } from './records.js';
import type { ListenerOptions } from './listening/index.js';
import { SileroVad } from './listening/vad.js';
import { LiveConversation, LIVE_TIMING_DEFAULTS, type LiveAgent, type LiveConversationFacts, type LiveTiming } from './live.js';
import { PreemptiveStats } from './preemptive-stats.js';
import type { VisitorInput, VisitorInputs } from '../realtime/visitor-input.js';

export interface ConversationLoopDeps {
  records: ConversationRecords;
  answers: AnswerEngine;
  realtime: RealtimeService;
  speech: ConversationSpeech;
  voices: VoiceCatalog;
  speakerFor: SpeakerFactory;
  agentById(agentId: number): Promise<LiveAgent | undefined>;
  /** Ends a session with a reason (sessions.end). */
  endSession(sessionId: string, reason: string): Promise<unknown>;
  /** The process's recogniser; undefined when none is available (visitors can still type). */
  recognizer?: Recognizer;
  listenerOptions?: ListenerOptions;
  timing?: Partial<LiveTiming>;
  /** Prepare answers before the visitor's turn has ended (preemptive generation; default true). */
  preemptive?: boolean;
  /** Whether a prepared answer may be voiced ahead with this voice provider (not billed ones; default yes). */
  preparesSpeech?: (provider: string) => boolean;
  /** Details data-handoff rules still need from the visitor (app.ts passes the handoff capability's). */
  missingDetails?: (conversation: LiveConversationFacts) => Promise<MissingDetail[]>;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export class ConversationLoop {
  private readonly live = new Map<string, LiveConversation>();
  private readonly timing: LiveTiming;
  /** What preemptive generation did in this loop's conversations (/metrics, the bench). */
  readonly preemptiveStats = new PreemptiveStats();
  /**
   * Details data-handoff rules still need from the visitor, asked before each answer (deps.missingDetails;
   * a test may swap it); the answering engine may ask the visitor for one politely.
   */
  missingDetails?: (conversation: LiveConversationFacts) => Promise<MissingDetail[]>;

  constructor(private readonly deps: ConversationLoopDeps) {
    this.timing = { ...LIVE_TIMING_DEFAULTS, ...deps.timing };
    this.missingDetails = deps.missingDetails;
  }

  /**
   * A better recogniser became available after start (a model fetched in the background): new
   * conversations hear with it; those already open keep the one they started with.
   */
  useRecognizer(recognizer: Recognizer): void {
    this.deps.recognizer = recognizer;
  }

  /**
   * Loads the VAD model (onnxruntime, some 40 MB resident) when the first conversation opens rather
   * than at start: a server that only renders never pays for it, and the page, the socket and the
   * microphone permission take longer than the load (about a second), whose frames wait meanwhile.
   */
  private warmVad(): void {
    if (this.vadWarmed || !this.deps.recognizer || this.deps.listenerOptions?.vad) return;
    this.vadWarmed = true;
    SileroVad.create().catch((error: Error) => {
      this.vadWarmed = false;
      this.deps.log.warn({ err: error.message }, 'voice activity detection could not load; it is tried again with the first microphone');
    });
  }

  private vadWarmed = false;

  /** The live conversation of a session, or null (render mode, unknown or ended session). */
  readonly inputs: VisitorInputs = (sessionId: string): VisitorInput | null => this.live.get(sessionId) ?? null;

  get(sessionId: string): LiveConversation | undefined {
    return this.live.get(sessionId);
  }

  get size(): number {
    return this.live.size;
  }

  /** The session started (or its live side is needed again after a restart): conversation mode only. */
  ensure(row: SessionRow): LiveConversation | undefined {
    if (row.mode !== 'conversation' || row.status !== 'active') return undefined;
    const existing = this.live.get(row.id);
    if (existing) return existing;
    this.warmVad();
    const session = this.deps.realtime.ensure(row);
    const voiceFor = (language: string) => this.voiceFor(row.voice_provider, row.voice_id, language);
    const conversation = new LiveConversation({
      sessionId: row.id,
      session,
      answers: this.deps.answers,
      addTurn: (turn) => this.deps.records.addTurn(row.id, turn),
      speech: this.deps.speech,
      voiceFor,
      speakerFor: ({ provider, voiceId, language }) => this.deps.speakerFor({ provider, voiceId, language, sessionId: row.id }),
      load: async () => {
        const agent = await this.deps.agentById(row.agent_id);
        if (!agent) throw new Error(`agent ${row.agent_id} is gone`);
        // The session carries the verified visitor values (public start); the record has them too.
        const [visitor, transcript] = await Promise.all([
          row.visitor && Object.keys(row.visitor).length ? row.visitor : this.deps.records.visitorOf(row.id).then((v) => v?.visitor ?? {}),
          this.deps.records.transcript(row.id),
        ]);
        const history: ConversationTurn[] = transcript.map((t) => ({ role: t.role, text: t.text }));
        return { agent, visitor, history };
      },
      recognizer: this.deps.recognizer,
      listenerOptions: this.deps.listenerOptions,
      missingDetails: (facts) => this.missingDetails?.(facts) ?? Promise.resolve([]),
      endSession: async (reason) => {
        await this.deps.endSession(row.id, reason);
      },
      timing: this.timing,
      preemptive: this.deps.preemptive,
      preemptiveStats: this.preemptiveStats,
      preparesSpeech: ({ provider }) => this.deps.preparesSpeech?.(provider) ?? true,
      log: this.deps.log,
    });
    this.live.set(row.id, conversation);
    return conversation;
  }

  /** The session ended. */
  close(sessionId: string): void {
    const conversation = this.live.get(sessionId);
    this.live.delete(sessionId);
    conversation?.close();
  }

  /** `visitor.message` on a conversation-mode session. */
  message(row: SessionRow, text: string): void {
    this.ensure(row)?.message(text);
  }

  /** Another command on a conversation-mode session: the business's own words join the conversation. */
  commanded(row: SessionRow, command: { type: string; text?: string }): void {
    if (command.type === 'agent.speak_text' && command.text) this.ensure(row)?.spoken(command.text);
    // The realtime session has already stopped voice and lips; the answer being generated stops too.
    if (command.type === 'agent.interrupt') this.live.get(row.id)?.interrupted();
  }

  stop(): void {
    for (const id of [...this.live.keys()]) this.close(id);
  }

  /**
   * The session's voice when it speaks the language; else a voice of the same provider and
   * gender that does (the agent answers a visitor in their language with a voice for it).
   */
  private voiceFor(provider: string, voiceId: string, language: string): { provider: string; voiceId: string } {
    const own = this.deps.voices.find(provider, voiceId);
    if (!own || own.language === language) return { provider, voiceId };
    const others = (this.deps.voices.list(provider) ?? []).filter((v) => v.language === language);
    const pick = others.find((v) => v.gender === own.gender) ?? others[0];
    return pick ? { provider, voiceId: pick.voice_id } : { provider, voiceId };
  }
}

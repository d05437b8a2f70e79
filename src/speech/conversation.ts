/**
 * Speech helpers for a conversation: the agent's welcome message, spoken first, and short
 * thinking sounds ("hmm", "let me see") played while the answer is being prepared. Fillers are
 * synthesised once per voice, language and rate and kept in memory, so playing one costs nothing.
 *
 *   const speech = new ConversationSpeech(service);
 *   for await (const chunk of speech.welcome(agent, { sampleRate: 16000, signal })) ...
 *   await speech.prepareFillers(agent, { sampleRate: 16000 });       // at session start
 *   const filler = speech.filler(agent, { sampleRate: 16000 });      // instant; undefined if not ready/disabled
 */
import type { SpeechPiece } from './piece.js';
import type { SpeechService } from './synthesis.js';

export interface SpeakingAgent {
  voice_id: string;
  tts_primary: string;
  languages: { main: string; also?: string[] };
  welcome_message: string | null;
  fillers_enabled: boolean;
}

export const FILLERS: Record<string, string[]> = {
  en: ['Hmm.', 'Let me see.', 'One moment.', 'Okay, so.', 'Good question.'],
  es: ['Mmm.', 'A ver.', 'Un momento.', 'Bueno.'],
  fr: ['Hmm.', 'Voyons voir.', 'Un instant.', 'Alors.'],
  it: ['Mmm.', 'Vediamo.', 'Un momento.', 'Allora.'],
  pt: ['Hmm.', 'Deixa eu ver.', 'Um momento.', 'Então.'],
  de: ['Hmm.', 'Mal sehen.', 'Einen Moment.', 'Also.'],
  hi: ['हम्म।', 'एक पल।', 'देखते हैं।'],
  ja: ['うーん。', 'ええと。', '少々お待ちください。'],
  zh: ['嗯。', '让我想想。', '稍等一下。'],
};

export class ConversationSpeech {
  private fillers = new Map<string, Promise<SpeechPiece[]>>();
  private ready = new Map<string, SpeechPiece[]>();
  private turn = 0;

  constructor(private readonly speech: SpeechService) {}

  /** The welcome message as speech; yields nothing when the agent has none. */
  async *welcome(agent: SpeakingAgent, options: { sampleRate: number; language?: string; signal?: AbortSignal }): AsyncIterable<SpeechPiece> {
    const text = agent.welcome_message?.trim();
    if (!text) return;
    yield* this.speech.synthesize({
      text,
      provider: agent.tts_primary,
      voiceId: agent.voice_id,
      language: options.language ?? agent.languages.main,
      sampleRate: options.sampleRate,
      signal: options.signal,
    });
  }

  private key(agent: SpeakingAgent, language: string, sampleRate: number) {
    return `${agent.tts_primary}|${agent.voice_id}|${language}|${sampleRate}|${this.speech.engineFor(agent.tts_primary, agent.voice_id)}`;
  }

  /** Synthesises the agent's fillers (once per voice/language/rate); resolves when they are ready. */
  async prepareFillers(agent: SpeakingAgent, options: { sampleRate: number; language?: string }): Promise<number> {
    if (!agent.fillers_enabled) return 0;
    const language = options.language ?? agent.languages.main;
    const key = this.key(agent, language, options.sampleRate);
    let job = this.fillers.get(key);
    if (!job) {
      const phrases = FILLERS[language] ?? FILLERS.en;
      job = (async () => {
        const out: SpeechPiece[] = [];
        for (const text of phrases) {
          const r = await this.speech.synthesizeAll({ text, provider: agent.tts_primary, voiceId: agent.voice_id, language, sampleRate: options.sampleRate });
          if (r.pcm.length) out.push({ pcm: r.pcm, sampleRate: r.sampleRate, words: r.words });
        }
        this.ready.set(key, out);
        return out;
      })();
      job.catch(() => this.fillers.delete(key));
      this.fillers.set(key, job);
    }
    return (await job).length;
  }

  /**
   * A ready filler (rotating through the set), or undefined when fillers are disabled or not yet
   * prepared (it then starts preparing them for next time). Never waits for synthesis.
   */
  filler(agent: SpeakingAgent, options: { sampleRate: number; language?: string }): SpeechPiece | undefined {
    if (!agent.fillers_enabled) return undefined;
    const language = options.language ?? agent.languages.main;
    const set = this.ready.get(this.key(agent, language, options.sampleRate));
    if (!set?.length) {
      void this.prepareFillers(agent, options).catch(() => {});
      return undefined;
    }
    return set[this.turn++ % set.length];
  }
}

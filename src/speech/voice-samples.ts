/**
 * Voice previews: a short sample sentence in the voice, as a WAV file. Synthesised once per
 * (provider, voice, language, engine) and then served from memory, or from DATA_DIR/speech/previews
 * after a restart. The engine is part of the key so that configuring Kokoro or a provider key later
 * does not keep serving the offline engine's sample.
 */
import { LRUCache } from 'lru-cache';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { encodeWav } from './audio.js';
import type { SpeechService } from './synthesis.js';

export const PREVIEW_RATE = 24000;

const SAMPLES: Record<string, (name: string) => string> = {
  en: (n) => `Hi, I'm ${n}. It's lovely to meet you. How can I help you today?`,
  es: (n) => `Hola, soy ${n}. Encantada de conocerte. ¿En qué puedo ayudarte hoy?`,
  fr: (n) => `Bonjour, je suis ${n}. Ravie de vous rencontrer. Comment puis-je vous aider aujourd'hui ?`,
  it: (n) => `Ciao, sono ${n}. Piacere di conoscerti. Come posso aiutarti oggi?`,
  pt: (n) => `Olá, eu sou ${n}. Prazer em conhecer você. Como posso ajudar hoje?`,
  de: (n) => `Hallo, ich bin ${n}. Schön, Sie kennenzulernen. Wie kann ich Ihnen heute helfen?`,
  hi: (n) => `नमस्ते, मैं ${n} हूँ। आपसे मिलकर खुशी हुई। आज मैं आपकी क्या मदद कर सकती हूँ?`,
  ja: (n) => `こんにちは、${n}です。お会いできてうれしいです。今日はどのようにお手伝いできますか？`,
  zh: (n) => `你好，我是${n}。很高兴认识你。今天我能帮你做什么？`,
};

/** The sample sentence; English when the language has no sample (the route says which it spoke). */
export function previewText(name: string, language: string): { text: string; language: string } {
  const make = SAMPLES[language];
  return make ? { text: make(name), language } : { text: SAMPLES.en(name), language: 'en' };
}

export class PreviewCache {
  private readonly memory: LRUCache<string, Buffer>;
  private pending = new Map<string, Promise<Buffer>>();
  private readonly dir: string;
  /** Synthesis runs (for tests and the log): a cache hit does not count. */
  synthesized = 0;

  constructor(
    private readonly speech: SpeechService,
    dataDir: string,
    maxEntries = 500,
  ) {
    this.memory = new LRUCache({ max: maxEntries });
    this.dir = path.join(dataDir, 'speech', 'previews');
  }

  async get(provider: string, voiceId: string, name: string, language: string): Promise<{ wav: Buffer; cached: boolean; engine: string }> {
    const engine = this.speech.engineFor(provider, voiceId);
    const key = crypto
      .createHash('sha256')
      .update(JSON.stringify([provider, voiceId, language, engine, name]))
      .digest('hex')
      .slice(0, 32);
    const hit = this.memory.get(key);
    if (hit) return { wav: hit, cached: true, engine };
    const file = path.join(this.dir, `${key}.wav`);
    const onDisk = await fs.readFile(file).catch(() => undefined);
    if (onDisk) {
      this.remember(key, onDisk);
      return { wav: onDisk, cached: true, engine };
    }
    let job = this.pending.get(key);
    if (!job) {
      job = (async () => {
        this.synthesized++;
        const { text } = previewText(name, language);
        const { pcm } = await this.speech.synthesizeAll({ text, provider, voiceId, language, sampleRate: PREVIEW_RATE });
        const wav = encodeWav(pcm, PREVIEW_RATE);
        await fs.mkdir(this.dir, { recursive: true });
        const tmp = `${file}.${process.pid}.tmp`;
        await fs.writeFile(tmp, wav);
        await fs.rename(tmp, file);
        this.remember(key, wav);
        return wav;
      })().finally(() => this.pending.delete(key));
      this.pending.set(key, job);
    }
    return { wav: await job, cached: false, engine };
  }

  private remember(key: string, wav: Buffer) {
    this.memory.set(key, wav);
  }
}

/**
 * Binds the speech layer to a session's voice for agent.speak_text: text in, PCM pieces at the
 * session's rate out, each with the words it says (times relative to the piece) for the lip-sync.
 */
import type { SpeechService } from '../speech/synthesis.js';
import type { SpeakerFactory } from './service.js';
import { CaptionAligner } from './captions.js';

export function speakerFactory(speech: SpeechService): SpeakerFactory {
  return ({ provider, voiceId, language }) =>
    async function* ({ text, sampleRate, signal }) {
      let produced = 0;
      const captions = new CaptionAligner(typeof text === 'string' ? text : '');
      // Streamed text is read by synthesis ahead of its audio, so the aligner has a piece's words by then.
      const source = typeof text === 'string' ? text : tee(text, (part) => captions.append(part));
      for await (const chunk of speech.synthesize({ text: source, provider, voiceId, language, sampleRate, signal })) {
        const start = produced / sampleRate;
        produced += chunk.pcm.length;
        const words = chunk.words?.map((w) => ({ word: w.word, start: w.start - start, end: w.end - start }));
        yield { pcm: chunk.pcm, words, text: words && captions.next(words.map((w) => w.word)) };
      }
    };
}

async function* tee(parts: AsyncIterable<string>, seen: (part: string) => void): AsyncIterable<string> {
  for await (const part of parts) {
    seen(part);
    yield part;
  }
}

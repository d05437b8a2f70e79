/**
 * Binds the speech layer to a session's voice for agent.speak_text: text in, PCM pieces at the
 * session's rate out, each with the words it says (times relative to the piece) for the lip-sync.
 */
import type { SpeechService } from '../speech/synthesis.js';
import type { SpeakerFactory } from './service.js';

export function speakerFactory(speech: SpeechService): SpeakerFactory {
  return ({ provider, voiceId, language }) =>
    async function* ({ text, sampleRate, signal }) {
      let produced = 0;
      for await (const chunk of speech.synthesize({ text, provider, voiceId, language, sampleRate, signal })) {
        const start = produced / sampleRate;
        produced += chunk.pcm.length;
        const words = chunk.words?.map((w) => ({ word: w.word, start: w.start - start, end: w.end - start }));
        yield { pcm: chunk.pcm, words, text: words?.map((w) => w.word).join(' ') };
      }
    };
}

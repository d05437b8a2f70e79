/** Counts the speech a premium provider voices for a session, for the premium-voice charge. */
import type { SpeakerFactory } from '../realtime/service.js';
import { isPremiumProvider } from './meter.js';

/** Wraps a speaker factory so each premium session's voiced audio (ms) is reported to `voiced`. */
export function meteredSpeakers(factory: SpeakerFactory, voiced: (sessionId: string, ms: number) => void): SpeakerFactory {
  return (voice) => {
    const speaker = factory(voice);
    const sessionId = voice.sessionId;
    if (!sessionId || !isPremiumProvider(voice.provider)) return speaker;
    return async function* (request) {
      for await (const piece of speaker(request)) {
        voiced(sessionId, (piece.pcm.length / request.sampleRate) * 1000);
        yield piece;
      }
    };
  };
}

/** A stand-in for Silero in tests that script the audio: loud frames are voice, quiet ones silence. */
import type { VoiceActivityDetector } from '../../src/conversation/listening/vad.js';

export const loudnessVad: VoiceActivityDetector = {
  probability: async (frame) => (frame.some((x) => Math.abs(x) > 0.1) ? 0.95 : 0.02),
  reset: () => {},
};

/**
 * What the premium providers' clients share (elevenlabs.ts, cartesia.ts, inworld.ts: one file per
 * provider, each with its HTTP client and, where the provider has one, its WebSocket client). Each
 * HTTP request is one sentence; audio is yielded as the bytes arrive. Failures become SpeechError
 * (never a hung stream): HTTP errors by status, unreachable hosts as provider_unavailable, no answer
 * or a stalled body after timeoutMs as timeout.
 */

export const PREMIUM_RATE = 24000;

export interface PremiumOptions {
  apiKey: string;
  baseUrl?: string;
  timeoutMs?: number;
}

/**
 * Shipped premium voice lists, used until (or unless) a provider key lets us fetch the live list.
 * Ids are the providers' own public voice ids.
 */
import type { CatalogVoice } from './kokoro.js';

const v = (provider: string, voice_id: string, name: string, gender: 'f' | 'm', locale: string): CatalogVoice => ({
  voice_id,
  name,
  gender,
  language: locale.slice(0, 2),
  locale,
  premium: true,
  provider,
});

const elevenlabs = (provider: string) => [
  v(provider, '21m00Tcm4TlvDq8ikWAM', 'Rachel', 'f', 'en-US'),
  v(provider, 'EXAVITQu4vr4xnSDxMaL', 'Sarah', 'f', 'en-US'),
  v(provider, 'XrExE9yKIg1WjnnlVkGX', 'Matilda', 'f', 'en-US'),
  v(provider, 'pNInz6obpgDQGcFmaJgB', 'Adam', 'm', 'en-US'),
  v(provider, 'ErXwobaYiN019PkySvjV', 'Antoni', 'm', 'en-US'),
  v(provider, 'onwK4e9ZLuTAKqWW03F9', 'Daniel', 'm', 'en-GB'),
];

const inworld = (provider: string) => [
  v(provider, 'Ashley', 'Ashley', 'f', 'en-US'),
  v(provider, 'Olivia', 'Olivia', 'f', 'en-US'),
  v(provider, 'Deborah', 'Deborah', 'f', 'en-US'),
  v(provider, 'Dennis', 'Dennis', 'm', 'en-US'),
  v(provider, 'Mark', 'Mark', 'm', 'en-US'),
  v(provider, 'Timothy', 'Timothy', 'm', 'en-US'),
];

export const PREMIUM_FALLBACK_VOICES: Record<string, CatalogVoice[]> = {
  elevenlabs: elevenlabs('elevenlabs'),
  'elevenlabs-flash': elevenlabs('elevenlabs-flash'),
  inworld: inworld('inworld'),
  'inworld-flash': inworld('inworld-flash'),
  cartesia: [
    v('cartesia', 'a0e99841-438c-4a64-b679-ae501e7d6091', 'Barbershop Man', 'm', 'en-US'),
    v('cartesia', '694f9389-aac1-45b6-b726-9d9369183238', 'Sarah', 'f', 'en-US'),
    v('cartesia', '79a125e8-cd45-4c13-8a67-188112f4dd22', 'British Lady', 'f', 'en-GB'),
    v('cartesia', '820a3788-2b37-4d21-847a-b65d8a68c99a', 'Salesman', 'm', 'en-US'),
  ],
};

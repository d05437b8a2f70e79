/**
 * Live premium voice catalogs from the providers' own voice-list APIs, normalised to CatalogVoice
 * and cached (default one hour). Without a key, or when the provider fails, the shipped list
 * stays in place, so the routes always answer.
 */
import type { CatalogVoice } from './kokoro.js';
import { CARTESIA_VERSION } from '../engines/cartesia.js';
import { providerFetch } from '../engines/http.js';

export type { ProviderKeys } from '../../core/config.js';
import type { ProviderKeys } from '../../core/config.js';

const GENDER: Record<string, 'f' | 'm'> = { female: 'f', feminine: 'f', woman: 'f', f: 'f', male: 'm', masculine: 'm', man: 'm', m: 'm' };

function gender(...hints: Array<string | undefined | null>): 'f' | 'm' | undefined {
  for (const h of hints) {
    const g = h ? GENDER[h.toLowerCase()] : undefined;
    if (g) return g;
  }
  return undefined;
}

function baseLanguage(code: string | undefined | null): string | undefined {
  const m = /^([a-z]{2})(?:[-_]|$)/i.exec(code ?? '');
  return m ? m[1].toLowerCase() : undefined;
}

const ACCENT_LOCALE: Record<string, string> = { american: 'en-US', british: 'en-GB', australian: 'en-AU', irish: 'en-IE', indian: 'en-IN' };

export function normaliseElevenLabs(provider: string, body: any): CatalogVoice[] {
  const out: CatalogVoice[] = [];
  for (const v of body?.voices ?? []) {
    if (!v?.voice_id || !v?.name) continue;
    const labels = v.labels ?? {};
    const g = gender(labels.gender);
    if (!g) continue; // voices without a gender label cannot be matched to a face
    const verified = Array.isArray(v.verified_languages) ? v.verified_languages : [];
    const language = baseLanguage(labels.language) ?? baseLanguage(verified[0]?.language) ?? 'en';
    const locale = verified[0]?.locale ?? ACCENT_LOCALE[String(labels.accent ?? '').toLowerCase()] ?? language;
    out.push({ voice_id: String(v.voice_id), name: String(v.name), gender: g, language, locale, premium: true, provider });
  }
  return out;
}

export function normaliseCartesia(body: any): CatalogVoice[] {
  const list = Array.isArray(body) ? body : (body?.data ?? []);
  const out: CatalogVoice[] = [];
  for (const v of list) {
    if (!v?.id || !v?.name) continue;
    const g = gender(v.gender, /\b(female|woman)\b/i.exec(v.description ?? '')?.[1], /\b(male|man)\b/i.exec(v.description ?? '')?.[1]);
    if (!g) continue;
    const language = baseLanguage(v.language) ?? 'en';
    out.push({
      voice_id: String(v.id),
      name: String(v.name),
      gender: g,
      language,
      locale: String(v.language ?? language),
      premium: true,
      provider: 'cartesia',
    });
  }
  return out;
}

export function normaliseInworld(provider: string, body: any): CatalogVoice[] {
  const out: CatalogVoice[] = [];
  for (const v of body?.voices ?? []) {
    const id = v?.voiceId ?? v?.name;
    if (!id) continue;
    const tags: string[] = Array.isArray(v.tags) ? v.tags : [];
    const g = gender(v.gender, ...tags);
    if (!g) continue;
    const langs: string[] = Array.isArray(v.languages) ? v.languages : [];
    const language = baseLanguage(langs[0] ?? v.langCode) ?? 'en';
    out.push({ voice_id: String(id), name: String(v.displayName ?? id), gender: g, language, locale: String(langs[0] ?? language), premium: true, provider });
  }
  return out;
}

/** Fetches one provider family's list; throws SpeechError on failure. */
export async function fetchVoiceList(family: 'elevenlabs' | 'cartesia' | 'inworld', keys: ProviderKeys, timeoutMs: number): Promise<unknown> {
  const signal = new AbortController().signal;
  if (family === 'elevenlabs' && keys.elevenlabs) {
    const base = (keys.elevenlabs.baseUrl ?? 'https://api.elevenlabs.io').replace(/\/+$/, '');
    const r = await providerFetch('elevenlabs', `${base}/v1/voices`, { headers: { 'xi-api-key': keys.elevenlabs.apiKey } }, signal, timeoutMs);
    return r.json();
  }
  if (family === 'cartesia' && keys.cartesia) {
    const base = (keys.cartesia.baseUrl ?? 'https://api.cartesia.ai').replace(/\/+$/, '');
    const r = await providerFetch(
      'cartesia',
      `${base}/voices?limit=100`,
      { headers: { 'X-API-Key': keys.cartesia.apiKey, 'Cartesia-Version': CARTESIA_VERSION } },
      signal,
      timeoutMs,
    );
    return r.json();
  }
  if (family === 'inworld' && keys.inworld) {
    const base = (keys.inworld.baseUrl ?? 'https://api.inworld.ai').replace(/\/+$/, '');
    const r = await providerFetch('inworld', `${base}/tts/v1/voices`, { headers: { authorization: `Basic ${keys.inworld.apiKey}` } }, signal, timeoutMs);
    return r.json();
  }
  throw new Error(`no key for ${family}`);
}

/**
 * Voice catalogs of every provider. Kokoro's is fixed data; premium catalogs start from a shipped
 * list (so the rules work without provider keys) and the speech layer may refresh them from the
 * providers' own voice-list APIs.
 */
import { KOKORO_VOICES, type CatalogVoice } from './kokoro.js';
import { PREMIUM_FALLBACK_VOICES } from './premium-fallback.js';

export type { CatalogVoice };

export const PROVIDERS = ['kokoro', 'inworld', 'inworld-flash', 'elevenlabs', 'elevenlabs-flash', 'cartesia'] as const;
export type Provider = (typeof PROVIDERS)[number];
export const PREMIUM_PROVIDERS: ReadonlySet<string> = new Set(PROVIDERS.filter((p) => p !== 'kokoro'));

export class VoiceCatalog {
  private byProvider = new Map<string, CatalogVoice[]>();

  constructor() {
    this.byProvider.set('kokoro', KOKORO_VOICES);
    for (const provider of PREMIUM_PROVIDERS) this.byProvider.set(provider, PREMIUM_FALLBACK_VOICES[provider] ?? []);
  }

  /** Replace a premium provider's list (e.g. after fetching it from the provider). */
  replace(provider: Provider, voices: CatalogVoice[]): void {
    this.byProvider.set(provider, voices);
  }

  list(provider: string): CatalogVoice[] | undefined {
    return this.byProvider.get(provider);
  }

  find(provider: string, voiceId: string): CatalogVoice | undefined {
    return this.byProvider.get(provider)?.find((v) => v.voice_id === voiceId);
  }

  /** The voice in `preferred`'s catalog, else in any catalog (a session may pick another provider's voice). */
  resolve(voiceId: string, preferred: string): CatalogVoice | undefined {
    const own = this.find(preferred, voiceId);
    if (own) return own;
    for (const provider of PROVIDERS) {
      const found = this.find(provider, voiceId);
      if (found) return found;
    }
    return undefined;
  }
}

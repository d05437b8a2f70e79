/**
 * The premium providers' voice lists, fetched from the providers that have keys and kept for
 * `voiceListTtlMs` in the voice catalog (one fetch at a time per provider; a failed fetch keeps the
 * current list and is tried again after a minute).
 */
import type { SpeechConfig } from '../../core/config.js';
import type { SpeechError } from '../errors.js';
import type { VoiceCatalog } from './catalog.js';
import { fetchVoiceList, normaliseCartesia, normaliseElevenLabs, normaliseInworld } from './remote.js';

type Family = 'elevenlabs' | 'cartesia' | 'inworld';

/** The provider family each premium provider name belongs to (one key, one voice list). */
export const FAMILY: Record<string, Family> = {
  elevenlabs: 'elevenlabs',
  'elevenlabs-flash': 'elevenlabs',
  cartesia: 'cartesia',
  inworld: 'inworld',
  'inworld-flash': 'inworld',
};

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export class VoiceLists {
  private readonly fetchedAt = new Map<Family, number>();
  private readonly pending = new Map<Family, Promise<void>>();

  constructor(
    private readonly config: Pick<SpeechConfig, 'providers' | 'timeoutMs' | 'voiceListTtlMs'>,
    private readonly voices: VoiceCatalog,
    private readonly log: Log,
  ) {}

  /** Refreshes every list whose provider has a key (kept for voiceListTtlMs unless forced). */
  async refreshAll(force = false): Promise<void> {
    await Promise.all((['elevenlabs', 'cartesia', 'inworld'] as const).map((f) => this.refresh(f, force)));
  }

  /** Makes sure the provider's list is fresh, waiting at most waitMs for the provider. */
  async fresh(provider: string, waitMs: number): Promise<void> {
    const family = FAMILY[provider];
    if (!family || !this.config.providers[family]) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.refresh(family, false),
      new Promise<void>((r) => {
        timer = setTimeout(r, waitMs);
      }),
    ]);
    clearTimeout(timer);
  }

  private refresh(family: Family, force: boolean): Promise<void> {
    if (!this.config.providers[family]) return Promise.resolve();
    const at = this.fetchedAt.get(family);
    if (!force && at && Date.now() - at < this.config.voiceListTtlMs) return Promise.resolve();
    const pending = this.pending.get(family);
    if (pending) return pending;
    const run = (async () => {
      try {
        // A voice list is not on the speaking path: allow it more time than a synthesis request.
        const body = await fetchVoiceList(family, this.config.providers, Math.max(this.config.timeoutMs, 5000));
        const providers = Object.keys(FAMILY).filter((p) => FAMILY[p] === family);
        let count = 0;
        for (const provider of providers) {
          const list =
            family === 'elevenlabs' ? normaliseElevenLabs(provider, body) : family === 'cartesia' ? normaliseCartesia(body) : normaliseInworld(provider, body);
          count = list.length;
          if (list.length) this.voices.replace(provider as never, list);
        }
        this.fetchedAt.set(family, Date.now());
        this.log.info({ provider: family, voices: count }, `speech: fetched ${count} ${family} voices`);
      } catch (error) {
        // Retry after a minute rather than on every request.
        this.fetchedAt.set(family, Date.now() - this.config.voiceListTtlMs + 60_000);
        this.log.warn(
          { provider: family, code: (error as SpeechError).code },
          `speech: could not fetch the ${family} voice list (${(error as Error).message}); keeping the current list`,
        );
      } finally {
        this.pending.delete(family);
      }
    })();
    this.pending.set(family, run);
    return run;
  }
}

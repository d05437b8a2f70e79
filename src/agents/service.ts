/**
 * Agents: the rules (plan limits, catalogs, the voice/face gender rule) and their storage.
 * Other capabilities hook in through `onDelete` / `onDuplicate` instead of reaching into this table.
 */
import type { Db } from '../core/db/database.js';
import { ReadCache } from '../core/read-cache.js';
import type { Config } from '../core/config.js';
import type { AccountStore, Account } from '../accounts/accounts.js';
import type { StudioCatalog } from '../catalog/catalog.js';
import { PREMIUM_PROVIDERS, type VoiceCatalog, type CatalogVoice } from '../speech/voices/catalog.js';
import type { Languages, Studio } from '../core/db/schema.js';
import type { z } from 'zod';
import { CAMERAS, type AgentCreateRequest, type AgentUpdateRequest, type EmbedConfigUpdate, type VisitorValuesUpdate } from './schemas.js';
import { defaultEmbed, embedSnippets, newEmbedKey, SHARED_EMBED_FIELDS, type EmbedSettings } from './embed.js';
import { checkVisitorValues, CANONICAL_FORM, canonicalText, defaultVisitorValues, newVisitorSecret, type VisitorValuesConfig } from './visitor-values.js';
import { DEFAULT_FACE_ID } from '../faces/builtin.js';
import { agentsErrors } from './errors.js';

export interface Agent {
  id: number;
  account_id: number;
  name: string;
  avatar_id: string;
  voice_id: string;
  tts_primary: string;
  languages: Languages;
  studio: Studio;
  website_url: string | null;
  system_prompt: string | null;
  concurrency_limit: number;
  welcome_message: string | null;
  fillers_enabled: boolean;
  status: 'active' | 'inactive';
  embed: EmbedSettings;
  visitor_values: VisitorValuesConfig;
  visitor_secret: string;
  visitor_secret_rotated_at: Date;
  created_at: Date;
  updated_at: Date;
  liveavatar_avatar_id: string | null;
}

export const DEFAULT_STUDIO: Studio = { backdrop: 'studio_grey', cameras: ['far', 'mid', 'close'], face_light: 1.0 };
export const DEFAULT_LANGUAGES: Languages = { main: 'en', also: [] };

type AgentHook = (agent: Agent, target?: Agent) => Promise<void>;

export class AgentService {
  /** Called before an agent is deleted (e.g. sessions end its live sessions). */
  readonly onDelete: AgentHook[] = [];
  /** Called after duplicate(source, copy) so knowledge can copy what it owns. */
  readonly onDuplicate: AgentHook[] = [];

  /** Agents by id, on the embedded database only (see core/read-cache.ts); every write below drops its entry. */
  private readonly cache: ReadCache<number, Agent>;

  constructor(
    private readonly db: Db,
    private readonly accounts: AccountStore,
    private readonly studioCatalog: StudioCatalog,
    private readonly voices: VoiceCatalog,
    private readonly config: Config,
    cached = false,
  ) {
    this.cache = new ReadCache(cached);
  }

  // ---------- reading ----------

  account(accountId: number): Promise<Account> {
    return this.accounts.require(accountId);
  }

  /** The agent if it belongs to the account; another account's agent is answered as missing. */
  async get(accountId: number, id: number): Promise<Agent> {
    const agent = this.cache.get(id) ?? (await this.load(id));
    if (!agent || agent.account_id !== accountId) throw agentsErrors.agent_not_found(`No agent with id ${id} in this account`);
    return agent;
  }

  /**
   * The row a write returned is the newest state: it replaces the cache entry, which also
   * overwrites a stale read that was in flight when the write began.
   */
  private fresh(row: unknown): Agent {
    const agent = row as Agent;
    this.cache.delete(agent.id);
    return this.cache.set(agent.id, agent);
  }

  private async load(id: number): Promise<Agent | undefined> {
    const row = await this.db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? this.cache.set(id, row as unknown as Agent) : undefined;
  }

  /** Any account's agent, for credentials that name it themselves (signed preview links). */
  async byId(id: number): Promise<Agent | undefined> {
    return this.cache.get(id) ?? (await this.load(id));
  }

  /** The account's agent whose liveavatar_avatar_id this is, if any. */
  async byLiveAvatarId(accountId: number, liveAvatarId: string): Promise<Agent | undefined> {
    const row = await this.db
      .selectFrom('agents')
      .select('id')
      .where('account_id', '=', accountId)
      .where('liveavatar_avatar_id', '=', liveAvatarId)
      .executeTakeFirst();
    return row ? this.get(accountId, row.id) : undefined;
  }

  async list(accountId: number): Promise<Agent[]> {
    return (await this.db.selectFrom('agents').selectAll().where('account_id', '=', accountId).orderBy('id').execute()) as unknown as Agent[];
  }

  async count(accountId: number): Promise<number> {
    const row = await this.db
      .selectFrom('agents')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async findByEmbedKey(embedKey: string): Promise<Agent | undefined> {
    const row = await this.db
      .selectFrom('agents')
      .selectAll()
      .where((eb) => eb(eb.ref('embed', '->>').key('embed_key' as never), '=', embedKey))
      .executeTakeFirst();
    return row as unknown as Agent | undefined;
  }

  // ---------- the rules ----------

  /** The voice, checked against the plan, the catalog and the face (the interface's gender rule). */
  checkVoiceAndFace(account: Pick<Account, 'id' | 'plan'>, provider: string, voiceId: string, avatarId: string, voiceAnyProvider = false): CatalogVoice {
    // Built-in and operator faces, and the account's own (another account's face is unknown here).
    const face = this.studioCatalog.face(avatarId, account.id);
    if (!face) throw agentsErrors.unknown_avatar(`No face "${avatarId}"; GET /v1/avatars lists them`);
    if (PREMIUM_PROVIDERS.has(provider) && account.plan === 'free') {
      throw agentsErrors.paid_feature(`The ${provider} voices are premium; the free plan speaks with kokoro voices`);
    }
    const voice = voiceAnyProvider ? this.voices.resolve(voiceId, provider) : this.voices.find(provider, voiceId);
    if (!voice) {
      // A premium voice is a paid feature whichever provider the request named (interface Errors 4).
      if (account.plan === 'free' && this.voices.resolve(voiceId, provider)?.premium) {
        throw agentsErrors.paid_feature(`Voice "${voiceId}" is premium; the free plan speaks with kokoro voices`);
      }
      throw agentsErrors.unknown_voice(`No ${provider} voice "${voiceId}"; GET /v1/voices/${provider} lists them`);
    }
    if (voice.premium && account.plan === 'free') {
      throw agentsErrors.paid_feature(`Voice "${voiceId}" is premium; the free plan speaks with kokoro voices`);
    }
    if (voice.gender !== face.gender) {
      const want = face.gender === 'f' ? "a woman's" : "a man's";
      throw agentsErrors.voice_face_mismatch(
        `Voice "${voiceId}" does not suit face "${avatarId}"; pass a voice_id with ${want} voice (e.g. ${face.default_voice_id})`,
      );
    }
    return voice;
  }

  /** Without a voice_id: the face's own voice on kokoro, else the provider's first voice of the face's gender. */
  private defaultVoice(provider: string, face: { gender: string; default_voice_id: string } | undefined): string {
    if (provider === 'kokoro') return face?.default_voice_id ?? 'af_bella';
    return this.voices.list(provider)?.find((v) => !face || v.gender === face.gender)?.voice_id ?? 'af_bella';
  }

  /** A studio or session look: the backdrop must exist (or be null) and cameras be far/mid/close. */
  checkLook(look: { backdrop?: string | null; cameras?: string[]; camera?: string }): void {
    if (look.backdrop && !this.studioCatalog.hasBackdrop(look.backdrop)) {
      throw agentsErrors.invalid_look(`No backdrop "${look.backdrop}"; GET /v1/backdrops lists them, or use null for plain`);
    }
    for (const camera of look.cameras ?? []) {
      if (!(CAMERAS as readonly string[]).includes(camera)) throw agentsErrors.invalid_look(`No camera "${camera}"; cameras are far, mid and close`);
    }
    if (look.cameras && new Set(look.cameras).size !== look.cameras.length) throw agentsErrors.invalid_look('cameras must not repeat');
    if (look.camera !== undefined && look.camera !== 'auto' && !(CAMERAS as readonly string[]).includes(look.camera)) {
      throw agentsErrors.invalid_look(`No camera "${look.camera}"; start on far, mid, close or auto`);
    }
    if (look.camera && look.camera !== 'auto' && look.cameras && !look.cameras.includes(look.camera)) {
      throw agentsErrors.invalid_look(`Camera "${look.camera}" is not among this look's cameras (${look.cameras.join(', ')})`);
    }
  }

  // ---------- writing ----------

  /** Brings a face another node may have just added into the catalog's index (before checkVoiceAndFace). */
  syncFace(avatarId: string): Promise<void> {
    return this.studioCatalog.sync(avatarId);
  }

  async create(accountId: number, input: z.output<typeof AgentCreateRequest>): Promise<Agent> {
    await this.syncFace(input.avatar_id ?? DEFAULT_FACE_ID);
    const created = await this.db.transaction().execute(async (trx) => {
      // Lock the account row so two concurrent creates cannot both pass the free-plan limit.
      const accountRow = await trx
        .selectFrom('accounts')
        .select(['plan', 'default_agent_id'])
        .where('id', '=', accountId)
        .forUpdate()
        .executeTakeFirstOrThrow();
      const account = { id: accountId, plan: accountRow.plan, default_agent_id: accountRow.default_agent_id };
      const existing = await trx
        .selectFrom('agents')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow();
      if (account.plan === 'free' && Number(existing.n) >= 1) {
        throw agentsErrors.agent_limit();
      }
      const avatarId = input.avatar_id ?? DEFAULT_FACE_ID;
      const provider = input.tts_primary ?? 'kokoro';
      const face = this.studioCatalog.face(avatarId, accountId);
      // Without a voice, a chosen kokoro face speaks with its own default voice.
      const voiceId = input.voice_id ?? this.defaultVoice(provider, face);
      this.checkVoiceAndFace(account, provider, voiceId, avatarId);
      const studio = { ...DEFAULT_STUDIO, ...input.studio };
      this.checkLook(studio);

      const row = await trx
        .insertInto('agents')
        .values({
          account_id: accountId,
          name: input.name,
          avatar_id: avatarId,
          voice_id: voiceId,
          tts_primary: provider,
          languages: JSON.stringify(input.languages ?? DEFAULT_LANGUAGES),
          studio: JSON.stringify(studio),
          website_url: input.website_url ?? null,
          system_prompt: input.system_prompt ?? null,
          concurrency_limit: input.concurrency_limit ?? 1,
          welcome_message: null,
          fillers_enabled: false,
          status: 'active',
          embed: JSON.stringify(defaultEmbed()),
          visitor_values: JSON.stringify(defaultVisitorValues()),
          visitor_secret: newVisitorSecret(),
          updated_at: new Date(),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      if (account.default_agent_id === null) {
        await trx.updateTable('accounts').set({ default_agent_id: row.id }).where('id', '=', accountId).execute();
      }
      return row as unknown as Agent;
    });
    this.accounts.forget(accountId); // its default_agent_id may have just been set
    return created;
  }

  async update(accountId: number, id: number, input: z.output<typeof AgentUpdateRequest>): Promise<Agent> {
    const agent = await this.get(accountId, id);
    const account = await this.accounts.require(accountId);
    const avatarId = input.avatar_id ?? agent.avatar_id;
    await this.syncFace(avatarId);
    const provider = input.tts_primary ?? agent.tts_primary;
    const voiceId = input.voice_id ?? agent.voice_id;
    if (input.avatar_id !== undefined || input.tts_primary !== undefined || input.voice_id !== undefined) {
      this.checkVoiceAndFace(account, provider, voiceId, avatarId);
    }
    // A studio change merges with the saved studio.
    const studio = input.studio ? { ...agent.studio, ...input.studio } : agent.studio;
    if (input.studio) this.checkLook(studio);

    const changes: Record<string, unknown> = { updated_at: new Date() };
    for (const key of [
      'name',
      'website_url',
      'system_prompt',
      'concurrency_limit',
      'welcome_message',
      'fillers_enabled',
      'status',
      'liveavatar_avatar_id',
    ] as const) {
      if (input[key] !== undefined) changes[key] = input[key];
    }
    if (input.liveavatar_avatar_id) {
      const taken = await this.db
        .selectFrom('agents')
        .select('id')
        .where('account_id', '=', accountId)
        .where('liveavatar_avatar_id', '=', input.liveavatar_avatar_id)
        .where('id', '!=', id)
        .executeTakeFirst();
      if (taken)
        throw agentsErrors.liveavatar_avatar_id_taken(`Agent ${taken.id} already has this liveavatar_avatar_id; each agent of an account needs its own`);
    }
    if (input.avatar_id !== undefined) changes.avatar_id = avatarId;
    if (input.voice_id !== undefined) changes.voice_id = voiceId;
    if (input.tts_primary !== undefined) changes.tts_primary = provider;
    if (input.languages !== undefined) changes.languages = JSON.stringify(input.languages);
    if (input.studio !== undefined) changes.studio = JSON.stringify(studio);
    const row = await this.db
      .updateTable('agents')
      .set(changes)
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.fresh(row);
  }

  async delete(accountId: number, id: number): Promise<void> {
    const agent = await this.get(accountId, id);
    for (const hook of this.onDelete) await hook(agent);
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('agents').where('id', '=', id).execute();
      const account = await trx.selectFrom('accounts').select('default_agent_id').where('id', '=', accountId).executeTakeFirstOrThrow();
      if (account.default_agent_id === null) {
        // The default went with it: the oldest remaining agent becomes the default.
        const next = await trx.selectFrom('agents').select('id').where('account_id', '=', accountId).orderBy('id').limit(1).executeTakeFirst();
        await trx
          .updateTable('accounts')
          .set({ default_agent_id: next?.id ?? null })
          .where('id', '=', accountId)
          .execute();
      }
    });
    this.cache.delete(id);
    this.accounts.forget(accountId);
  }

  async duplicate(accountId: number, id: number): Promise<Agent> {
    const source = await this.get(accountId, id);
    const copy = await this.create(accountId, {
      name: `${source.name} (copy)`.slice(0, 100),
      avatar_id: source.avatar_id,
      voice_id: source.voice_id,
      tts_primary: source.tts_primary as any,
      languages: source.languages as any,
      studio: source.studio,
      website_url: source.website_url,
      system_prompt: source.system_prompt,
      concurrency_limit: source.concurrency_limit,
    });
    const { embed_key: _ownKey, ...sharedEmbed } = source.embed;
    const row = await this.db
      .updateTable('agents')
      .set({
        welcome_message: source.welcome_message,
        fillers_enabled: source.fillers_enabled,
        status: source.status,
        embed: JSON.stringify({ ...sharedEmbed, embed_key: copy.embed.embed_key }),
        visitor_values: JSON.stringify(source.visitor_values),
      })
      .where('id', '=', copy.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const result = this.fresh(row);
    for (const hook of this.onDuplicate) await hook(source, result);
    return result;
  }

  async setDefault(accountId: number, id: number): Promise<Agent> {
    const agent = await this.get(accountId, id);
    await this.accounts.setDefaultAgent(accountId, id);
    return agent;
  }

  // ---------- embed ----------

  embedResponse(agent: Agent) {
    return { agent_id: agent.id, ...agent.embed, ...embedSnippets(this.config.publicUrl, agent.embed) };
  }

  private async saveEmbed(agent: Agent, embed: EmbedSettings): Promise<Agent> {
    const row = await this.db
      .updateTable('agents')
      .set({ embed: JSON.stringify(embed) })
      .where('id', '=', agent.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.fresh(row);
  }

  async updateEmbed(accountId: number, id: number, input: z.output<typeof EmbedConfigUpdate>): Promise<Agent> {
    const agent = await this.get(accountId, id);
    const origins = input.allowed_origins?.map((o) => o.replace(/\/$/, ''));
    return this.saveEmbed(agent, { ...agent.embed, ...input, ...(origins ? { allowed_origins: origins } : {}), updated_at: new Date().toISOString() });
  }

  async regenerateEmbedKey(accountId: number, id: number): Promise<Agent> {
    const agent = await this.get(accountId, id);
    return this.saveEmbed(agent, { ...agent.embed, embed_key: newEmbedKey(), updated_at: new Date().toISOString() });
  }

  /** Copies this agent's widget settings (not its key) to every agent of the account. */
  async applyEmbedToAll(accountId: number, id: number): Promise<{ source_agent_id: number; updated_agent_ids: number[]; fields: string[] }> {
    const source = await this.get(accountId, id);
    const shared = Object.fromEntries(SHARED_EMBED_FIELDS.map((f) => [f, source.embed[f]]));
    const updated: number[] = [];
    for (const agent of await this.list(accountId)) {
      if (agent.id === id) continue;
      await this.saveEmbed(agent, { ...agent.embed, ...shared, updated_at: new Date().toISOString() });
      updated.push(agent.id);
    }
    return { source_agent_id: id, updated_agent_ids: updated, fields: [...SHARED_EMBED_FIELDS] };
  }

  // ---------- visitor values ----------

  visitorValuesResponse(agent: Agent) {
    const exampleValues = Object.fromEntries(agent.visitor_values.fields.slice(0, 2).map((f) => [f.name, 'value']));
    return {
      agent_id: agent.id,
      ...agent.visitor_values,
      secret_hint: agent.visitor_secret.slice(0, 9) + '…',
      signing: {
        algorithm: 'HMAC-SHA256' as const,
        canonical_form: CANONICAL_FORM,
        example: `hex(HMAC-SHA256(secret, "${canonicalText(1700000000, Object.keys(exampleValues).length ? exampleValues : { plan: 'gold' })}"))`,
      },
    };
  }

  async updateVisitorValues(accountId: number, id: number, input: z.output<typeof VisitorValuesUpdate>): Promise<Agent> {
    const agent = await this.get(accountId, id);
    const next = { ...agent.visitor_values, ...input, updated_at: new Date().toISOString() };
    const row = await this.db
      .updateTable('agents')
      .set({ visitor_values: JSON.stringify(next) })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.fresh(row);
  }

  async rotateVisitorSecret(accountId: number, id: number): Promise<Agent> {
    await this.get(accountId, id);
    const row = await this.db
      .updateTable('agents')
      .set({ visitor_secret: newVisitorSecret(), visitor_secret_rotated_at: new Date() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.fresh(row);
  }

  previewVisitorValues(agent: Agent, input: { values: Record<string, string>; timestamp?: number; signature?: string }) {
    return checkVisitorValues(agent.visitor_values, agent.visitor_secret, input);
  }
}

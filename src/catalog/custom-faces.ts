/**
 * Bring your own face: a GLB or VRM whose meshes carry the viseme_* and key ARKit morph targets.
 * The file is validated, stored in the database (`custom_faces.glb`, bytea: the same on PGlite and
 * PostgreSQL, and visible to every node), and its metadata is kept in the catalog's in-memory
 * index so face lookups stay synchronous. Faces added through the API belong to that account;
 * faces added by the operator CLI (account null) are seen by every account. An avatar_id is unique
 * within its owner only, and the file is served at an unguessable address (`file_token`), so no
 * account can learn of, or fetch, another's face.
 */
import crypto from 'node:crypto';
import type { CustomFacesTable } from '../core/db/schema.js';
import type { Db } from '../core/db/database.js';
import { validateFaceGlb } from '../faces/validate.js';
import { renderCustomStill } from '../faces/stills.js';
import { KOKORO_VOICES } from '../speech/voices/kokoro.js';
import type { CustomFace, StudioCatalog } from './catalog.js';
import type { Gender } from '../faces/builtin.js';
import { catalogErrors } from './errors.js';

export const DEFAULT_FACE_MAX_BYTES = 8 * 1024 * 1024;
export const AVATAR_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{2,40}$/;
/** A custom face file's address: `cf` and 128 random bits in hex (`/assets/faces/<token>.glb`). */
export const FILE_TOKEN_PATTERN = /^cf[0-9a-f]{32}$/;
const newFileToken = () => `cf${crypto.randomBytes(16).toString('hex')}`;

export interface NewFace {
  glb: Uint8Array;
  name: string;
  gender: Gender;
  avatarId?: string;
  description?: string;
  defaultVoiceId?: string;
  /** The owning account; null for an operator (global) face. */
  accountId: number | null;
}

const METADATA = ['avatar_id', 'file_token', 'account_id', 'name', 'gender', 'description', 'default_voice_id', 'morphs', 'size_bytes'] as const;

type MetadataRow = Pick<CustomFacesTable, (typeof METADATA)[number]>;

function toFace(row: MetadataRow): CustomFace {
  return {
    avatar_id: row.avatar_id,
    name: row.name,
    gender: row.gender,
    description: row.description,
    default_voice_id: row.default_voice_id,
    model_url: `/assets/faces/${row.file_token}.glb`,
    look: {},
    source: 'custom',
    morphs: [...row.morphs],
    size_bytes: Number(row.size_bytes),
  };
}

const invalid = (problems: string[]) => catalogErrors.invalid_face(`The face file cannot be used: ${problems.join('; ')}`);

/** The kokoro voice a new face speaks with by default. */
function defaultVoiceFor(gender: Gender, wanted: string | undefined): string {
  if (wanted === undefined) return KOKORO_VOICES.find((v) => v.gender === gender)!.voice_id;
  const voice = KOKORO_VOICES.find((v) => v.voice_id === wanted);
  if (!voice) throw catalogErrors.unknown_voice(`No kokoro voice "${wanted}"; a face's default_voice_id is a kokoro voice (GET /v1/voices/kokoro)`);
  if (voice.gender !== gender) {
    const want = gender === 'f' ? "a woman's" : "a man's";
    throw catalogErrors.voice_face_mismatch(`Voice "${wanted}" does not suit a face of gender "${gender}"; pass ${want} kokoro voice`);
  }
  return voice.voice_id;
}

const live = new Set<CustomFaces>();

export class CustomFaces {
  readonly maxBytes: number;
  private loadedAt = 0;
  private refreshing?: Promise<void>;
  private timer?: NodeJS.Timeout;

  /** Whether other processes write the same database (PostgreSQL): the index then refreshes itself. */
  private readonly shared: boolean;

  constructor(
    private readonly db: Db,
    private readonly catalog: StudioCatalog,
    options: { maxBytes?: number; shared?: boolean } = {},
  ) {
    this.maxBytes = options.maxBytes ?? DEFAULT_FACE_MAX_BYTES;
    this.shared = options.shared ?? false;
    catalog.setFaceLoader((id) => this.loadOne(id));
  }

  /** Loads every custom face's metadata into the catalog (at start); on a shared database, keeps it fresh. */
  async start(refreshMs = 30_000): Promise<void> {
    await this.load();
    live.add(this);
    if (this.shared && !this.timer) {
      this.timer = setInterval(() => void this.load().catch(() => {}), refreshMs);
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    live.delete(this);
  }

  /** Replaces the index with what the database holds. */
  async load(): Promise<void> {
    const rows = (await this.db
      .selectFrom('custom_faces')
      .select([...METADATA])
      .orderBy('created_at')
      .orderBy('avatar_id')
      .execute()) as MetadataRow[];
    this.catalog.replaceCustomFaces(rows.map((r) => ({ face: toFace(r), accountId: r.account_id })));
    this.loadedAt = Date.now();
  }

  /** On a shared database, reloads the index when it is older than `maxAgeMs` (before listing). */
  async fresh(maxAgeMs = 1000): Promise<void> {
    if (!this.shared || Date.now() - this.loadedAt < maxAgeMs) return;
    this.refreshing ??= this.load().finally(() => (this.refreshing = undefined));
    await this.refreshing;
  }

  /** Adds one face another node stored, if it exists. */
  private async loadOne(id: string): Promise<void> {
    if (!this.shared) return;
    // Every owner's face under this id (ids are per account); lookups then pick the caller's.
    const rows = (await this.db
      .selectFrom('custom_faces')
      .select([...METADATA])
      .where('avatar_id', '=', id)
      .execute()) as MetadataRow[];
    for (const row of rows) this.catalog.setCustomFace(toFace(row), row.account_id);
  }

  /** Validates and stores a face; answers its record. 422 invalid_face, 409 avatar_exists. */
  async add(input: NewFace): Promise<CustomFace> {
    const avatarId = input.avatarId ?? `custom_${crypto.randomBytes(6).toString('hex')}`;
    if (!AVATAR_ID_PATTERN.test(avatarId)) {
      throw catalogErrors.invalid_avatar_id(`avatar_id "${avatarId}" must match ${AVATAR_ID_PATTERN.source}`);
    }
    const check = validateFaceGlb(input.glb, this.maxBytes);
    if (!check.ok) throw invalid(check.problems);
    const voice = defaultVoiceFor(input.gender, input.defaultVoiceId);
    if (this.catalog.isBuiltinFace(avatarId)) throw catalogErrors.avatar_exists(`"${avatarId}" is a built-in face; choose another avatar_id`);
    if (input.accountId !== null) {
      const account = await this.db.selectFrom('accounts').select('id').where('id', '=', input.accountId).executeTakeFirst();
      if (!account) throw catalogErrors.account_not_found(`No account with id ${input.accountId}`);
      // Operator faces are shown to every account, so refusing their ids reveals nothing; other
      // accounts' ids are never consulted (the unique index is per owner).
      const operatorFace = await this.db
        .selectFrom('custom_faces')
        .select('avatar_id')
        .where('account_id', 'is', null)
        .where('avatar_id', '=', avatarId)
        .executeTakeFirst();
      if (operatorFace) throw catalogErrors.avatar_exists(`"${avatarId}" is an operator face every account sees; choose another avatar_id`);
    }
    const glb = Buffer.from(input.glb.buffer, input.glb.byteOffset, input.glb.byteLength);
    const row = await this.db
      .insertInto('custom_faces')
      .values({
        avatar_id: avatarId,
        account_id: input.accountId,
        name: input.name,
        gender: input.gender,
        description: input.description ?? '',
        default_voice_id: voice,
        morphs: check.morphs,
        size_bytes: check.sizeBytes,
        sha256: crypto.createHash('sha256').update(glb).digest('hex'),
        file_token: newFileToken(),
        glb,
      })
      // The only unique keys are (owner, avatar_id) and the random file token.
      .onConflict((oc) => oc.doNothing())
      .returning([...METADATA])
      .executeTakeFirst();
    if (!row) throw catalogErrors.avatar_exists(`A face with avatar_id "${avatarId}" already exists; choose another`);
    const face = toFace(row as MetadataRow);
    this.catalog.setCustomFace(face, input.accountId);
    // The player shows this still from a page's first frame (src/faces/stills.ts). Rendered now, in
    // a worker thread; a face whose still fails still works (the page then waits for the live head).
    await renderCustomStill(row.file_token, glb).catch(() => {});
    return face;
  }

  /**
   * Deletes an account's own face. 404 for built-in, operator and other accounts' faces;
   * 409 avatar_in_use while an agent of the account uses it.
   */
  async delete(accountId: number, avatarId: string): Promise<void> {
    const notFound = () =>
      catalogErrors.avatar_not_found(`No face "${avatarId}" of this account; built-in and operator faces cannot be deleted through the API`);
    await this.catalog.sync(avatarId, accountId);
    if (!this.catalog.customFace(avatarId, accountId)) throw notFound();
    const users = await this.db.selectFrom('agents').select('id').where('account_id', '=', accountId).where('avatar_id', '=', avatarId).orderBy('id').execute();
    if (users.length) {
      throw catalogErrors.avatar_in_use(`Face "${avatarId}" is used by agent(s) ${users.map((u) => u.id).join(', ')}; give them another face first`);
    }
    const onStage = await this.db
      .selectFrom('sessions')
      .select('id')
      .where('account_id', '=', accountId)
      .where('avatar_id', '=', avatarId)
      .where('status', '=', 'active')
      .limit(1)
      .executeTakeFirst();
    if (onStage) throw catalogErrors.avatar_in_use(`Face "${avatarId}" is on stage in session ${onStage.id}; stop it first`);
    const deleted = await this.db
      .deleteFrom('custom_faces')
      .where('avatar_id', '=', avatarId)
      .where('account_id', '=', accountId)
      .returning('avatar_id')
      .executeTakeFirst();
    this.catalog.removeCustomFace(avatarId, accountId);
    if (!deleted) throw notFound();
  }

  /** The GLB bytes stored at a file token and their SHA-256 (for an ETag), or undefined. */
  async asset(fileToken: string): Promise<{ bytes: Buffer; sha256: string } | undefined> {
    if (!FILE_TOKEN_PATTERN.test(fileToken)) return undefined;
    const row = await this.db.selectFrom('custom_faces').select(['glb', 'sha256']).where('file_token', '=', fileToken).executeTakeFirst();
    if (!row) return undefined;
    const raw = row.glb as Uint8Array;
    return { bytes: Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), sha256: row.sha256 };
  }

  async glb(fileToken: string): Promise<Buffer | undefined> {
    return (await this.asset(fileToken))?.bytes;
  }

  /** Whether this index knows a face at this file token. */
  knows(fileToken: string): boolean {
    return this.catalog.hasFileToken(fileToken);
  }
}

/**
 * For the player's `/assets/faces/:token.glb` route: a custom face's GLB bytes from the database, or
 * undefined when no running app has a custom face at that file token. (The visitor's browser loads
 * it without an API key; the token, shown only to the owning account and its sessions' pages, is
 * what keeps it private.)
 */
export async function customFaceGlb(fileToken: string): Promise<Buffer | undefined> {
  return (await customFaceAsset(fileToken))?.bytes;
}

/** As customFaceGlb, with the bytes' SHA-256 for an ETag. */
export async function customFaceAsset(fileToken: string): Promise<{ bytes: Buffer; sha256: string } | undefined> {
  const stores = [...live];
  // The app whose index knows the face first; else (a face another node just added) ask each.
  stores.sort((a, b) => Number(b.knows(fileToken)) - Number(a.knows(fileToken)));
  for (const store of stores) {
    const found = await store.asset(fileToken);
    if (found) return found;
  }
  return undefined;
}

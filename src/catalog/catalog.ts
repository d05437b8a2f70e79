/** Faces (built-in and custom) and backdrops, looked up by id. */
import { BUILTIN_FACES, type Face } from '../faces/builtin.js';
import { BACKDROPS, BACKDROP_IDS, type Backdrop } from './backdrops.js';

/** A face added from a GLB/VRM file (src/catalog/custom-faces.ts), as the API shows it. */
export interface CustomFace extends Omit<Face, 'look' | 'source'> {
  /** Custom faces carry no generator parameters. */
  look: Record<string, never>;
  source: 'custom';
  /** Morph target names found in the file. */
  morphs: string[];
  size_bytes: number;
}

export type CatalogFace = Face | CustomFace;

interface CustomEntry {
  face: CustomFace;
  /** null: added by an operator, every account sees it. */
  accountId: number | null;
}

/** Custom faces are keyed by owner and id: ids are per account (operator faces share one space). */
const customKey = (id: string, accountId: number | null) => `${accountId ?? 'operator'}:${id}`;

export class StudioCatalog {
  private faces = new Map<string, Face>(BUILTIN_FACES.map((f) => [f.avatar_id, f]));
  /** In-memory index of custom faces' metadata (the GLB bytes stay in the database). */
  private custom = new Map<string, CustomEntry>();
  /** Looks one face up in storage when it is not in the index (set by CustomFaces). */
  private loader?: (id: string) => Promise<void>;

  addFace(face: Face): void {
    this.faces.set(face.avatar_id, face);
  }

  /**
   * A face by id, as an account sees it: built-in, then its own, then operator-added. Without an
   * account id, only built-in and operator faces (custom face ids mean something only within an account).
   */
  face(id: string, accountId?: number | null): CatalogFace | undefined {
    const builtin = this.faces.get(id);
    if (builtin) return builtin;
    const own = accountId != null ? this.custom.get(customKey(id, accountId)) : undefined;
    return (own ?? this.custom.get(customKey(id, null)))?.face;
  }

  /** Faces an account sees (built-in first, then operator-added, then its own); all without an account. */
  listFaces(accountId?: number): CatalogFace[] {
    const custom = [...this.custom.values()].filter((e) => accountId === undefined || e.accountId === null || e.accountId === accountId);
    custom.sort((a, b) => Number(a.accountId !== null) - Number(b.accountId !== null));
    return [...this.faces.values(), ...custom.map((e) => e.face)];
  }

  // ---------- the custom-face index (kept by CustomFaces) ----------

  isBuiltinFace(id: string): boolean {
    return this.faces.has(id);
  }

  /** The custom face an owner (an account, or null for the operator) has under this id. */
  customFace(id: string, accountId: number | null): CustomFace | undefined {
    return this.custom.get(customKey(id, accountId))?.face;
  }

  /** Whether any custom face (of any owner) is served at this file token. */
  hasFileToken(token: string): boolean {
    for (const entry of this.custom.values()) if (entry.face.model_url === `/assets/faces/${token}.glb`) return true;
    return false;
  }

  setCustomFace(face: CustomFace, accountId: number | null): void {
    this.custom.set(customKey(face.avatar_id, accountId), { face, accountId });
  }

  removeCustomFace(id: string, accountId: number | null): void {
    this.custom.delete(customKey(id, accountId));
  }

  replaceCustomFaces(entries: Array<{ face: CustomFace; accountId: number | null }>): void {
    this.custom = new Map(entries.map((e) => [customKey(e.face.avatar_id, e.accountId), e]));
  }

  setFaceLoader(loader: (id: string) => Promise<void>): void {
    this.loader = loader;
  }

  /**
   * Makes sure a face another node may have added is in the index before a synchronous lookup.
   * Costs nothing for faces already known to this account; call it outside any transaction.
   */
  async sync(id: string, accountId?: number | null): Promise<void> {
    if (this.loader && !this.face(id, accountId)) await this.loader(id);
  }

  // ---------- backdrops ----------

  backdrop(id: string): Backdrop | undefined {
    return BACKDROPS.find((b) => b.backdrop_id === id);
  }

  hasBackdrop(id: string): boolean {
    return BACKDROP_IDS.has(id);
  }

  listBackdrops(): Backdrop[] {
    return BACKDROPS;
  }
}

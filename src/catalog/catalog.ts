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
   * A face by id. With an account id, only faces that account may use: built-in, operator-added,
   * and its own. Without one (e.g. a session already checked), any face.
   */
  face(id: string, accountId?: number): CatalogFace | undefined {
    const builtin = this.faces.get(id);
    if (builtin) return builtin;
    const entry = this.custom.get(id);
    if (!entry) return undefined;
    if (accountId !== undefined && entry.accountId !== null && entry.accountId !== accountId) return undefined;
    return entry.face;
  }

  /** Faces an account sees (built-in first, then operator-added, then its own); all without an account. */
  listFaces(accountId?: number): CatalogFace[] {
    const custom = [...this.custom.values()].filter((e) => accountId === undefined || e.accountId === null || e.accountId === accountId);
    custom.sort((a, b) => Number(a.accountId !== null) - Number(b.accountId !== null));
    return [...this.faces.values(), ...custom.map((e) => e.face)];
  }

  // ---------- the custom-face index (kept by CustomFaces) ----------

  /** Whether any face (built-in or custom of any account) has this id. */
  hasFaceId(id: string): boolean {
    return this.faces.has(id) || this.custom.has(id);
  }

  isBuiltinFace(id: string): boolean {
    return this.faces.has(id);
  }

  /** The owner of a custom face: an account id, null for an operator face, undefined if none. */
  customOwner(id: string): number | null | undefined {
    return this.custom.get(id)?.accountId;
  }

  setCustomFace(face: CustomFace, accountId: number | null): void {
    this.custom.set(face.avatar_id, { face, accountId });
  }

  removeCustomFace(id: string): void {
    this.custom.delete(id);
  }

  replaceCustomFaces(entries: Array<{ face: CustomFace; accountId: number | null }>): void {
    this.custom = new Map(entries.map((e) => [e.face.avatar_id, e]));
  }

  setFaceLoader(loader: (id: string) => Promise<void>): void {
    this.loader = loader;
  }

  /**
   * Makes sure a face another node may have added is in the index before a synchronous lookup.
   * Costs nothing for faces already known; call it outside any transaction.
   */
  async sync(id: string): Promise<void> {
    if (this.loader && !this.hasFaceId(id)) await this.loader(id);
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

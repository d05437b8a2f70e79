/** Faces (built-in and operator-added) and backdrops, looked up by id. */
import { BUILTIN_FACES, type Face } from './faces.js';
import { BACKDROPS, BACKDROP_IDS, type Backdrop } from './backdrops.js';

export class StudioCatalog {
  private faces = new Map<string, Face>(BUILTIN_FACES.map((f) => [f.avatar_id, f]));

  addFace(face: Face): void {
    this.faces.set(face.avatar_id, face);
  }

  face(id: string): Face | undefined {
    return this.faces.get(id);
  }

  listFaces(): Face[] {
    return [...this.faces.values()];
  }

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

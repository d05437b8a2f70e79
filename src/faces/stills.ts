/**
 * The faces' still pictures on the server side: which still a page shows for its face URL, where
 * its file is, and rendering one for an uploaded face (at upload, in a worker thread, so the
 * server's event loop never waits on the rasteriser). Built-in faces' stills are made with the
 * faces (faces/index.ts, `build/faces/<id>.still.png`); uploaded faces' go to `build/stills`
 * (a cache: a node that lacks one renders it from the stored GLB when a page first asks).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { StillRecord } from './index.js';

/** Stills of uploaded faces, beside the built-in faces' build output. */
export const CUSTOM_STILLS_DIR = path.join(import.meta.dirname, '..', '..', 'build', 'stills');

/** What the page needs to show a still: its URL and where it sits (faces/still.ts, StillPlacement). */
export interface PageStill extends StillRecord {
  url: string;
}

/**
 * An uploaded face's file name: its random file token (catalog/custom-faces.ts, FILE_TOKEN_PATTERN).
 * Stills of uploaded faces are served only under such names, never under a guessable avatar_id.
 */
export const CUSTOM_FACE_FILE = /^cf[0-9a-f]{32}$/;

/** Face GLB URLs the player serves: `/assets/faces/<id>.glb`. */
const FACE_URL = /^\/assets\/faces\/([\w-]{1,64})\.glb$/;

/** The still's URL for a face URL (same place, `.still.png`), or null for faces served elsewhere. */
export function stillUrlFor(faceUrl: string | null | undefined): { id: string; url: string } | null {
  const m = faceUrl ? FACE_URL.exec(faceUrl) : null;
  return m ? { id: m[1], url: `/assets/faces/${m[1]}.still.png` } : null;
}

interface Cached {
  mtimeMs: number;
  record: StillRecord & { sha256?: string };
}

export class Stills {
  private readonly records = new Map<string, Cached | null>();
  private readonly rendering = new Map<string, Promise<void>>();

  constructor(
    private readonly facesDir: string,
    private readonly customDir: string = CUSTOM_STILLS_DIR,
  ) {}

  /** The picture and record files of a face's still (built-in beside the GLB, uploaded in customDir). */
  files(id: string, builtin: boolean): { png: string; json: string } {
    const dir = builtin ? this.facesDir : this.customDir;
    return { png: path.join(dir, `${id}.still.png`), json: path.join(dir, `${id}.still.json`) };
  }

  /** The still a page shows for its face, or null when there is none (yet). Reads a small JSON, cached by mtime. */
  forFace(faceUrl: string | null | undefined, builtin: (id: string) => boolean): PageStill | null {
    const at = stillUrlFor(faceUrl);
    if (!at) return null;
    const { png, json } = this.files(at.id, builtin(at.id));
    const stat = fs.statSync(json, { throwIfNoEntry: false });
    if (!stat || !fs.existsSync(png)) return null;
    let cached = this.records.get(json);
    if (!cached || cached.mtimeMs !== stat.mtimeMs) {
      try {
        cached = { mtimeMs: stat.mtimeMs, record: JSON.parse(fs.readFileSync(json, 'utf8')) };
      } catch {
        return null;
      }
      this.records.set(json, cached);
    }
    // A version in the URL: a re-rendered still is a new address (it is cached for minutes).
    const v = Math.floor(stat.mtimeMs).toString(36);
    return { url: `${at.url}?v=${v}`, width: cached.record.width, height: cached.record.height, placement: cached.record.placement };
  }

  /**
   * Renders an uploaded face's still in the background, once at a time per face; `sha256` names the
   * GLB it was made from, so a different face stored under the same id is rendered again.
   */
  ensureCustom(id: string, load: () => Promise<{ bytes: Uint8Array; sha256: string } | undefined>): Promise<void> {
    let run = this.rendering.get(id);
    if (!run) {
      run = (async () => {
        const asset = await load();
        if (!asset) return;
        const { json } = this.files(id, false);
        try {
          if (JSON.parse(fs.readFileSync(json, 'utf8')).sha256 === asset.sha256) return;
        } catch {
          /* none yet */
        }
        await renderCustomStill(id, asset.bytes, this.customDir, asset.sha256);
      })().finally(() => this.rendering.delete(id));
      this.rendering.set(id, run);
    }
    return run;
  }
}

/**
 * Renders an uploaded face's still into `dir` (`<id>.still.png` and `.still.json`), in a worker
 * thread. What the custom-faces upload calls; resolves when the files are written.
 */
export async function renderCustomStill(id: string, glb: Uint8Array, dir = CUSTOM_STILLS_DIR, sha256?: string): Promise<void> {
  const digest = sha256 ?? crypto.createHash('sha256').update(glb).digest('hex');
  const still = await new Promise<{ png: Uint8Array } & StillRecord>((resolve, reject) => {
    const worker = new Worker(new URL('./still-worker.mjs', import.meta.url), { workerData: { glb } });
    worker.once('message', (m: { error?: string; still?: { png: Uint8Array } & StillRecord }) =>
      m.still ? resolve(m.still) : reject(new Error(m.error ?? 'no still')),
    );
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`still renderer stopped (exit ${code})`)));
  });
  fs.mkdirSync(dir, { recursive: true });
  const write = (file: string, data: Uint8Array | string) => {
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(3).toString('hex')}.tmp`;
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, file);
  };
  write(path.join(dir, `${id}.still.png`), still.png);
  write(path.join(dir, `${id}.still.json`), JSON.stringify({ width: still.width, height: still.height, placement: still.placement, sha256: digest }));
}

/**
 * Public entry of the face generator: build all catalogue faces, or only those missing/outdated
 * (what the server calls at start-up), and validate uploaded faces.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { BUILTIN_FACES, type Face } from './builtin.js';
import { buildFace } from './build.js';
import { renderStill, type Still } from './still.js';
import { faceHash, readStamps, stillFiles, stillHash, STAMP_FILE } from './freshness.js';

export { validateFaceGlb, MAX_FACE_BYTES, type FaceValidation } from './validate.js';
export { buildFace } from './build.js';
export { MORPH_NAMES, VISEMES, ARKIT } from './names.js';

export { stillFiles } from './freshness.js';
/** What the page needs besides the picture (written as `<id>.still.json`). */
export type StillRecord = Pick<Still, 'width' | 'height' | 'placement'>;

export interface BuildResult {
  id: string;
  bytes: number;
  ms: number;
  built: boolean;
}

interface Job {
  face: Face;
  hash: string;
  stillHash: string;
  build: boolean;
  file: string;
}
interface Done {
  glb?: Uint8Array;
  ms: number;
  still: Still;
}

async function generate(outDir: string, faces: Face[], force: boolean, maxWorkers = faceWorkers()): Promise<BuildResult[]> {
  await fs.mkdir(outDir, { recursive: true });
  const stamps = await readStamps(outDir);
  const results = new Map<string, BuildResult>();
  const todo: Job[] = [];
  for (const face of faces) {
    const file = path.join(outDir, `${face.avatar_id}.glb`);
    const hash = await faceHash(face);
    const sHash = await stillHash(hash);
    const stat = await fs.stat(file).catch(() => null);
    const current = !force && !!stat && stamps[face.avatar_id] === hash;
    const stillCurrent =
      current && stamps[`${face.avatar_id}.still`] === sHash && (await fs.stat(stillFiles(outDir, face.avatar_id).png).catch(() => null)) !== null;
    if (current) results.set(face.avatar_id, { id: face.avatar_id, bytes: stat.size, ms: 0, built: false });
    if (!stillCurrent) todo.push({ face, hash, stillHash: sHash, build: !current, file });
  }
  // Files and stamps are written here, one face after another, whichever worker built it.
  let writing = Promise.resolve();
  const done = (job: Job, out: Done) => {
    writing = writing.then(async () => {
      const id = job.face.avatar_id;
      // write-then-rename so a server reading concurrently never sees a half-written file
      if (out.glb) {
        await writeAtomically(job.file, out.glb);
        stamps[id] = job.hash;
        results.set(id, { id, bytes: out.glb.byteLength, ms: out.ms, built: true });
      }
      const still = stillFiles(outDir, id);
      await writeAtomically(still.png, out.still.png);
      const record: StillRecord = { width: out.still.width, height: out.still.height, placement: out.still.placement };
      await writeAtomically(still.json, JSON.stringify(record));
      stamps[`${id}.still`] = job.stillHash;
      // Stamped face by face, and atomically: a process killed mid-way keeps what it built, and never
      // leaves an empty stamp that would make every later start rebuild every face.
      await writeAtomically(path.join(outDir, STAMP_FILE), JSON.stringify(stamps, null, 2));
    });
    return writing;
  };
  // Building a face is seconds of CPU; rendering a still alone is well under one, not worth a thread.
  const workers = Math.min(todo.filter((j) => j.build).length, maxWorkers);
  if (workers <= 1) {
    for (const job of todo) {
      const t0 = performance.now();
      const glb = job.build ? (await buildFace(job.face)).glb : undefined;
      const ms = performance.now() - t0;
      const still = await renderStill(glb ?? new Uint8Array(await fs.readFile(job.file)), { skin: job.face.look?.skin });
      await done(job, { glb, ms, still });
    }
  } else {
    await buildInParallel(todo, workers, done);
  }
  await writing;
  return faces.map((f) => results.get(f.avatar_id)!);
}

/**
 * How many faces to build at once: one per core (a face is seconds of single-threaded CPU, and
 * building the twelve one after another was most of `npm install`). PRESENCE_FACE_WORKERS
 * overrides it (1 = in this thread, as before).
 */
function faceWorkers(): number {
  const wanted = Number(process.env.PRESENCE_FACE_WORKERS);
  return Number.isInteger(wanted) && wanted > 0 ? wanted : Math.max(1, os.availableParallelism());
}

/** Builds the faces in `workers` worker threads, each taking the next face when it is done. */
function buildInParallel(todo: Job[], workers: number, done: (job: Job, out: Done) => Promise<void>): Promise<void> {
  const queue = [...todo];
  const pending = new Map(todo.map((t) => [t.face.avatar_id, t]));
  return new Promise<void>((resolve, reject) => {
    const pool: Worker[] = [];
    let failed = false;
    let live = workers;
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      for (const w of pool) void w.terminate();
      reject(error);
    };
    const next = (worker: Worker) => {
      const job = queue.shift();
      if (job) worker.postMessage({ face: job.face, build: job.build, file: job.file });
      else void worker.terminate();
    };
    for (let i = 0; i < workers; i++) {
      const worker = new Worker(new URL('./build-worker.mjs', import.meta.url));
      pool.push(worker);
      worker.on('message', (m: { ready?: true; id?: string; glb?: Uint8Array; ms?: number; still?: Still; error?: string }) => {
        if (m.ready) return next(worker);
        const job = pending.get(m.id!);
        if (!job) return;
        if (m.error !== undefined || !m.still || (job.build && !m.glb)) return fail(new Error(`building face ${m.id} failed: ${m.error}`));
        pending.delete(m.id!);
        done(job, { glb: m.glb, ms: m.ms ?? 0, still: m.still }).then(() => next(worker), fail);
      });
      worker.on('error', fail);
      worker.on('exit', () => {
        live--;
        if (live === 0 && !failed) {
          if (pending.size) fail(new Error(`face generation stopped before ${[...pending.keys()].join(', ')}`));
          else resolve();
        }
      });
    }
  });
}

/** Write-then-rename, so a reader (another server, a crash) never sees a half-written file. */
async function writeAtomically(file: string, data: Uint8Array | string): Promise<void> {
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(3).toString('hex')}.tmp`;
  try {
    await fs.writeFile(tmp, data);
    await fs.rename(tmp, file);
  } finally {
    await fs.rm(tmp, { force: true });
  }
}

/** Generates only the built-in faces whose GLB is missing or outdated. */
export async function ensureFaces(outDir: string, only?: string[], options: { workers?: number } = {}): Promise<void> {
  await generate(outDir, only ? BUILTIN_FACES.filter((f) => only.includes(f.avatar_id)) : BUILTIN_FACES, false, options.workers);
}

/** Regenerates every built-in face (or the given ones). */
export async function buildAllFaces(outDir: string, faces: Face[] = BUILTIN_FACES): Promise<BuildResult[]> {
  return generate(outDir, faces, true);
}

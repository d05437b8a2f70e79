/**
 * Bundles the player page's JavaScript (src/player/client) with esbuild into build/player/:
 * `main.js` (the page), `audio-worklet.js` (the AudioWorklet, loaded separately by the page) and
 * `licenses.txt` (the licences of the third-party packages bundled into them).
 * `ensurePlayerBuild()` rebuilds only when the sources changed (a hash kept in manifest.json), and
 * writes atomically, so concurrent starts are safe.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundledLicences, buildOnce, readManifest, writeAtomic } from '../core/bundle-files.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(here, '..', '..');
export const CLIENT_DIR = path.join(here, 'client');
export const PLAYER_BUILD_DIR = path.join(REPO_ROOT, 'build', 'player');
/** Files outside client/ that the page bundles: a change to them is a change to the page. */
const SHARED_SOURCES = ['src/realtime/frame-codec.ts', 'src/realtime/lipsync/visemes.ts'];

export interface PlayerBuild {
  dir: string;
  /** Short content hash, used as the cache-busting version in asset URLs. */
  version: string;
  files: Record<string, { bytes: number }>;
}

interface Manifest {
  source: string;
  version: string;
  files: Record<string, { bytes: number }>;
}

function sourceHash(): string {
  const h = crypto.createHash('sha256');
  for (const name of fs.readdirSync(CLIENT_DIR).sort()) {
    if (!name.endsWith('.ts')) continue;
    h.update(name);
    h.update(fs.readFileSync(path.join(CLIENT_DIR, name)));
  }
  // So do the server modules the page shares (the frame codec), this file's build options, and
  // the bundled three.js version.
  for (const shared of SHARED_SOURCES) {
    h.update(shared);
    h.update(fs.readFileSync(path.join(REPO_ROOT, shared)));
  }
  h.update(fs.readFileSync(fileURLToPath(import.meta.url)));
  try {
    h.update(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'node_modules', 'three', 'package.json'), 'utf8')).version);
  } catch {
    /* not installed: esbuild will say so */
  }
  return h.digest('hex').slice(0, 16);
}

/** Served beside the bundle: the licences of the third-party packages bundled into it. */
export const LICENSES_FILE = 'licenses.txt';

/** Builds the player bundle if it is missing or stale (or `force`). */
export const ensurePlayerBuild = buildOnce(PLAYER_BUILD_DIR, (dir, force) => buildPlayer(dir, force));

async function buildPlayer(dir: string, force: boolean): Promise<PlayerBuild> {
  // esbuild is loaded only when a bundle is (re)built, never by a server whose bundle is current.
  const { build } = await import('esbuild');
  const source = sourceHash();
  const existing = readManifest<Manifest>(dir);
  if (!force && existing && existing.source === source && Object.keys(existing.files).every((f) => fs.existsSync(path.join(dir, f)))) {
    return { dir, version: existing.version, files: existing.files };
  }
  fs.mkdirSync(dir, { recursive: true });
  const common = {
    bundle: true,
    minify: true,
    write: false,
    metafile: true,
    target: ['chrome100', 'firefox100', 'safari15'],
    // Per-file legal comments are dropped; one banner points at licenses.txt, which carries the
    // full licence text of every package the bundle includes.
    legalComments: 'none' as const,
    banner: { js: `/*! Presence player. Third-party code in this file and its licences: ${LICENSES_FILE} */` },
    logLevel: 'silent' as const,
    define: { 'process.env.NODE_ENV': '"production"' },
  };
  const [page, worklet] = await Promise.all([
    build({ ...common, entryPoints: [path.join(CLIENT_DIR, 'main.ts')], format: 'iife', outfile: path.join(dir, 'main.js') }),
    build({ ...common, entryPoints: [path.join(CLIENT_DIR, 'audio-worklet.ts')], format: 'iife', outfile: path.join(dir, 'audio-worklet.js') }),
  ]);
  const outputs = [...(page.outputFiles ?? []), ...(worklet.outputFiles ?? [])];
  const h = crypto.createHash('sha256');
  for (const o of outputs) h.update(o.contents);
  const version = h.digest('hex').slice(0, 12);
  const files: Record<string, { bytes: number }> = {};
  for (const o of outputs) {
    writeAtomic(o.path, o.contents);
    files[path.basename(o.path)] = { bytes: o.contents.byteLength };
  }
  const licenses = bundledLicences(
    REPO_ROOT,
    [page.metafile, worklet.metafile].flatMap((m) => Object.keys(m?.inputs ?? {})),
    'player page',
  );
  writeAtomic(path.join(dir, LICENSES_FILE), licenses);
  files[LICENSES_FILE] = { bytes: Buffer.byteLength(licenses) };
  writeAtomic(path.join(dir, 'manifest.json'), JSON.stringify({ source, version, files } satisfies Manifest, null, 2));
  return { dir, version, files };
}

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
import { build } from 'esbuild';

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

interface Manifest { source: string; version: string; files: Record<string, { bytes: number }> }

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

function readManifest(dir: string): Manifest | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
  } catch {
    return null;
  }
}

function writeAtomic(file: string, data: Uint8Array | string): void {
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, data);
  fs.renameSync(tmp, file);
}

/** Served beside the bundle: the licences of the third-party packages bundled into it. */
export const LICENSES_FILE = 'licenses.txt';

/** The packages (under node_modules) a build included, with their licence files' text. */
function licenseText(metafiles: ({ inputs: Record<string, unknown> } | undefined)[]): string {
  const packages = new Set<string>();
  for (const meta of metafiles) {
    for (const input of Object.keys(meta?.inputs ?? {})) {
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
      if (m) packages.add(m[1]);
    }
  }
  const sections = [...packages].sort().map((name) => {
    const root = path.join(REPO_ROOT, 'node_modules', name);
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version?: string; license?: string };
    const file = fs.readdirSync(root).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    const text = file ? fs.readFileSync(path.join(root, file), 'utf8').trim() : `Licence: ${pkg.license ?? 'see the package'}`;
    return `${name} ${pkg.version ?? ''} (${pkg.license ?? 'licence in the text below'})\n\n${text}`;
  });
  return `The Presence player page bundles the following packages.\n\n${sections.join('\n\n' + '-'.repeat(72) + '\n\n')}\n`;
}

let pending: Promise<PlayerBuild> | null = null;

/** Builds the player bundle if it is missing or stale (or `force`). */
export function ensurePlayerBuild(options: { force?: boolean; outDir?: string } = {}): Promise<PlayerBuild> {
  if (!options.force && !options.outDir && pending) return pending;
  const run = buildPlayer(options.outDir ?? PLAYER_BUILD_DIR, !!options.force);
  if (!options.outDir) pending = run.catch((e) => {
    pending = null;
    throw e;
  });
  return run;
}

async function buildPlayer(dir: string, force: boolean): Promise<PlayerBuild> {
  const source = sourceHash();
  const existing = readManifest(dir);
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
  const licenses = licenseText([page.metafile, worklet.metafile]);
  writeAtomic(path.join(dir, LICENSES_FILE), licenses);
  files[LICENSES_FILE] = { bytes: Buffer.byteLength(licenses) };
  writeAtomic(path.join(dir, 'manifest.json'), JSON.stringify({ source, version, files } satisfies Manifest, null, 2));
  return { dir, version, files };
}

/**
 * Bundles the console (src/console/client, Preact) with esbuild into build/console/: content-hashed
 * ES modules (the Reports page's plotting library in its own chunk, loaded with that page), one
 * stylesheet, `licenses.txt`, and the HTML shell that names them. Like the player's bundle it is
 * rebuilt only when the sources changed (a hash in manifest.json) and written atomically.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(here, '..', '..');
export const CONSOLE_CLIENT_DIR = path.join(here, 'client');
export const CONSOLE_BUILD_DIR = path.join(REPO_ROOT, 'build', 'console');
const BUNDLED_PACKAGES = ['preact', '@preact/signals', 'uplot'];

export interface ConsoleBuild {
  dir: string;
  /** The HTML shell served for every console path. */
  html: string;
  /** The entry module's file name (what a page loads first). */
  entry: string;
  files: Record<string, { bytes: number }>;
}

interface Manifest { source: string; entry: string; css: string; files: Record<string, { bytes: number }> }

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

function sourceHash(): string {
  const h = crypto.createHash('sha256');
  for (const file of walk(CONSOLE_CLIENT_DIR).sort()) {
    h.update(path.relative(CONSOLE_CLIENT_DIR, file));
    h.update(fs.readFileSync(file));
  }
  h.update(fs.readFileSync(fileURLToPath(import.meta.url)));
  for (const name of BUNDLED_PACKAGES) {
    try {
      h.update(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8')).version);
    } catch {
      /* not installed: esbuild will say so */
    }
  }
  return h.digest('hex').slice(0, 16);
}

function writeAtomic(file: string, data: Uint8Array | string): void {
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, data);
  fs.renameSync(tmp, file);
}

export function shellHtml(entry: string, css: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Presence console</title>
<link rel="stylesheet" href="/console/assets/${css}">
<script type="module" src="/console/assets/${entry}"></script>
</head>
<body>
<div id="app"><main id="main"><h1>Presence console</h1><p>Loading…</p><noscript><p>The console needs JavaScript.</p></noscript></main></div>
</body>
</html>
`;
}

function licenseText(inputs: string[]): string {
  const packages = new Set<string>();
  for (const input of inputs) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m) packages.add(m[1]);
  }
  const sections = [...packages].sort().map((name) => {
    const root = path.join(REPO_ROOT, 'node_modules', name);
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version?: string; license?: string };
    const file = fs.readdirSync(root).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    const text = file ? fs.readFileSync(path.join(root, file), 'utf8').trim() : `Licence: ${pkg.license ?? 'see the package'}`;
    return `${name} ${pkg.version ?? ''} (${pkg.license ?? 'licence in the text below'})\n\n${text}`;
  });
  return `The Presence console bundles the following packages.\n\n${sections.join('\n\n' + '-'.repeat(72) + '\n\n')}\n`;
}

let pending: Promise<ConsoleBuild> | null = null;

/** Builds the console if it is missing or stale (or `force`). */
export function ensureConsoleBuild(options: { force?: boolean; outDir?: string } = {}): Promise<ConsoleBuild> {
  if (!options.force && !options.outDir && pending) return pending;
  const run = buildConsole(options.outDir ?? CONSOLE_BUILD_DIR, !!options.force);
  if (!options.outDir) pending = run.catch((e) => {
    pending = null;
    throw e;
  });
  return run;
}

function readManifest(dir: string): Manifest | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
  } catch {
    return null;
  }
}

async function buildConsole(dir: string, force: boolean): Promise<ConsoleBuild> {
  const source = sourceHash();
  const existing = readManifest(dir);
  if (!force && existing && existing.source === source && Object.keys(existing.files).every((f) => fs.existsSync(path.join(dir, f)))) {
    return { dir, html: shellHtml(existing.entry, existing.css), entry: existing.entry, files: existing.files };
  }
  fs.mkdirSync(dir, { recursive: true });
  const result = await build({
    entryPoints: [path.join(CONSOLE_CLIENT_DIR, 'main.tsx')],
    bundle: true,
    splitting: true,
    format: 'esm',
    minify: true,
    write: false,
    metafile: true,
    outdir: dir,
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    target: ['chrome100', 'firefox100', 'safari15'],
    legalComments: 'none',
    banner: { js: '/*! Presence console. Third-party code in this file and its licences: licenses.txt */' },
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const files: Record<string, { bytes: number }> = {};
  let entry = '';
  let css = '';
  for (const output of result.outputFiles) {
    const name = path.basename(output.path);
    writeAtomic(output.path, output.contents);
    files[name] = { bytes: output.contents.byteLength };
    if (/^main-.*\.js$/.test(name)) entry = name;
    if (/^main-.*\.css$/.test(name)) css = name;
  }
  const licenses = licenseText(Object.keys(result.metafile.inputs));
  writeAtomic(path.join(dir, 'licenses.txt'), licenses);
  files['licenses.txt'] = { bytes: Buffer.byteLength(licenses) };
  writeAtomic(path.join(dir, 'manifest.json'), JSON.stringify({ source, entry, css, files } satisfies Manifest, null, 2));
  return { dir, html: shellHtml(entry, css), entry, files };
}

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
import { bundledLicences, buildOnce, readManifest, writeAtomic } from '../core/bundle-files.js';

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

interface Manifest {
  source: string;
  entry: string;
  css: string;
  files: Record<string, { bytes: number }>;
}

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

/** Builds the console if it is missing or stale (or `force`). */
export const ensureConsoleBuild = buildOnce(CONSOLE_BUILD_DIR, (dir, force) => buildConsole(dir, force));

async function buildConsole(dir: string, force: boolean): Promise<ConsoleBuild> {
  // esbuild is loaded only when a bundle is (re)built, never by a server whose bundle is current.
  const { build } = await import('esbuild');
  const source = sourceHash();
  const existing = readManifest<Manifest>(dir);
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
  const licenses = bundledLicences(REPO_ROOT, Object.keys(result.metafile.inputs), 'console');
  writeAtomic(path.join(dir, 'licenses.txt'), licenses);
  files['licenses.txt'] = { bytes: Buffer.byteLength(licenses) };
  writeAtomic(path.join(dir, 'manifest.json'), JSON.stringify({ source, entry, css, files } satisfies Manifest, null, 2));
  return { dir, html: shellHtml(entry, css), entry, files };
}

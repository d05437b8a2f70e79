/**
 * What the browser bundles' builds (the player page's and the console's) share: atomic writes of
 * their files, the manifest that says which sources they were built from, the licence text of the
 * third-party packages they include, and building once per process while later callers wait.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Writes then renames, so a reader (or a build killed half-way) never sees half a file. */
export function writeAtomic(file: string, data: Uint8Array | string): void {
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, data);
  fs.renameSync(tmp, file);
}

/** A build folder's `manifest.json`, or null when it is missing or unreadable (then: build). */
export function readManifest<T>(dir: string): T | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as T;
  } catch {
    return null;
  }
}

/** The packages under node_modules that a bundle's inputs came from, with their licence files' text. */
export function bundledLicences(repoRoot: string, inputs: Iterable<string>, bundle: string): string {
  const packages = new Set<string>();
  for (const input of inputs) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m) packages.add(m[1]);
  }
  const sections = [...packages].sort().map((name) => {
    const root = path.join(repoRoot, 'node_modules', name);
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version?: string; license?: string };
    const file = fs.readdirSync(root).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    const text = file ? fs.readFileSync(path.join(root, file), 'utf8').trim() : `Licence: ${pkg.license ?? 'see the package'}`;
    return `${name} ${pkg.version ?? ''} (${pkg.license ?? 'licence in the text below'})\n\n${text}`;
  });
  return `The Presence ${bundle} bundles the following packages.\n\n${sections.join('\n\n' + '-'.repeat(72) + '\n\n')}\n`;
}

/**
 * `ensure(options)`: builds into the default folder once per process (callers share the run; a
 * failed run is forgotten, so the next call tries again), or into `outDir` each time it is asked.
 */
export function buildOnce<T>(defaultDir: string, build: (dir: string, force: boolean) => Promise<T>) {
  let pending: Promise<T> | null = null;
  return (options: { force?: boolean; outDir?: string } = {}): Promise<T> => {
    if (!options.force && !options.outDir && pending) return pending;
    const run = build(options.outDir ?? defaultDir, !!options.force);
    if (!options.outDir)
      pending = run.catch((e) => {
        pending = null;
        throw e;
      });
    return run;
  };
}

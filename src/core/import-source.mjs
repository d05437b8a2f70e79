// How a worker or child process started from a .mjs file in src/ imports the server's TypeScript
// modules: the compiled JavaScript that bin/presence.js named in PRESENCE_COMPILED (the process runs
// with no loader, as its parent does), or the sources through tsx's loader (tests, scripts, and
// PRESENCE_TSX=1).
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SOURCE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let registered = false;

/** Imports `specifier` (a .ts path) relative to the module at `from` (its import.meta.url). */
export async function importSource(from, specifier) {
  const source = fileURLToPath(new URL(specifier, from));
  const compiled = process.env.PRESENCE_COMPILED;
  if (compiled) return import(pathToFileURL(path.join(compiled, path.relative(SOURCE_DIR, source)).replace(/\.ts$/, '.js')).href);
  if (!registered) {
    const { register } = await import('tsx/esm/api');
    register();
    registered = true;
  }
  return import(pathToFileURL(source).href);
}

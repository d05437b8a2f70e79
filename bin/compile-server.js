// Compiles the server's TypeScript (src/, not the browser code in src/*/client) to plain JavaScript
// in build/server/, one file per module in the same layout, so `presence` runs without a loader in
// the process: tsx's hooks thread is a second V8 isolate and keeps the transformed sources, some
// 60–80 MB of an idle server (docs/decisions.md, "Memory on a small VM").
//
// Only modules whose source is newer than their output are compiled again, so a developer who
// edits src/ and runs `npm start` gets their change. `import.meta.url` and `import.meta.dirname`
// are replaced by the source's own, so every path a module finds next to itself (workers, the
// player's client, data files, hashes of its own source, the .mjs workers) is the one in src/, as
// under tsx; workers that import TypeScript find the compiled modules through PRESENCE_COMPILED.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SOURCE_DIR = path.join(ROOT, 'src');
export const COMPILED_DIR = path.join(ROOT, 'build', 'server');
/** Browser code, bundled by esbuild on its own (src/player/build.ts, src/console/build.ts). */
const BROWSER_DIRS = new Set(['client']);
const SELF = fileURLToPath(import.meta.url);

function walk(dir, files = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!BROWSER_DIRS.has(entry.name)) walk(path.join(dir, entry.name), files);
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(path.join(dir, entry.name));
  }
  return files;
}

function mtime(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return -1;
  }
}

/** Written under a temporary name and renamed: two processes starting at once never read half a file. */
function writeAtomically(file, contents) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, contents);
  fs.renameSync(temporary, file);
}

/**
 * Brings build/server/ up to date with src/; returns how many files were written. A change to this
 * compiler (its options) makes every output stale.
 */
export async function compileServer(sourceDir = SOURCE_DIR, compiledDir = COMPILED_DIR) {
  const outputOf = (source) => path.join(compiledDir, `${path.relative(sourceDir, source).slice(0, -3)}.js`);
  const sources = walk(sourceDir);
  // Outputs name their source's absolute path: a checkout moved elsewhere compiles everything again.
  const stamp = path.join(compiledDir, '.source');
  const moved = !fs.existsSync(stamp) || fs.readFileSync(stamp, 'utf8') !== sourceDir;
  const compilerTime = mtime(SELF);
  const stale = sources.filter((source) => {
    const output = mtime(outputOf(source));
    return moved || output < mtime(source) || output < compilerTime;
  });
  if (stale.length) {
    // esbuild only when something changed: its service is a child process of its own.
    const { transform } = await import('esbuild');
    const { compilerOptions } = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8'));
    await Promise.all(
      stale.map(async (source) => {
        const text = fs.readFileSync(source, 'utf8');
        const url = pathToFileURL(source).href;
        const { code } = await transform(text, {
          loader: 'ts',
          format: 'esm',
          target: 'node20',
          sourcefile: source,
          tsconfigRaw: { compilerOptions },
          define: { 'import.meta.url': JSON.stringify(url), 'import.meta.dirname': JSON.stringify(path.dirname(source)) },
        });
        writeAtomically(outputOf(source), code);
      }),
    );
  }
  if (moved) writeAtomically(stamp, sourceDir);
  removeOrphans(compiledDir, new Set([...sources.map(outputOf), stamp]));
  return stale.length;
}

/** Outputs whose source was deleted or renamed, so nothing can import a module src/ no longer has. */
function removeOrphans(compiledDir, expected) {
  if (!fs.existsSync(compiledDir)) return;
  for (const file of fs.readdirSync(compiledDir, { recursive: true })) {
    const full = path.join(compiledDir, file);
    if (!expected.has(full) && !full.endsWith('.tmp') && fs.statSync(full).isFile()) fs.rmSync(full, { force: true });
  }
}

/**
 * Issue 27, item 3: `presence` runs the server compiled to plain JavaScript (bin/compile-server.js),
 * no TypeScript loader in the process. What a developer relies on: an edited source is compiled
 * again at the next start, nothing else is, a deleted module's output goes, and a module's
 * import.meta.url still names its source (paths next to it resolve in src/, as under tsx).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
// @ts-expect-error plain JavaScript without declarations (bin/ runs before any loader)
import { compileServer } from '../../bin/compile-server.js';

const compile = compileServer as (sourceDir: string, compiledDir: string) => Promise<number>;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-compile-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const src = path.join(root, 'src');
const out = path.join(root, 'out');

function write(file: string, text: string, edited = false): void {
  fs.mkdirSync(path.dirname(path.join(src, file)), { recursive: true });
  fs.writeFileSync(path.join(src, file), text);
  // A new file as a checkout leaves it (older than any output); an edit is saved after the last compile.
  if (!edited) fs.utimesSync(path.join(src, file), new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
}

/** The compiled module's exports, imported by plain node (no loader: as bin/presence.js runs it). */
function load(file: string): Record<string, unknown> {
  const url = pathToFileURL(path.join(out, file)).href;
  const script = `const m = await import(${JSON.stringify(url)}); console.log(JSON.stringify({ ...m }));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } }));
}

test('compiles each module once, again when edited, and keeps import.meta naming the source', async () => {
  write('lib/value.ts', 'export const value: number = 1;\n');
  write(
    'main.ts',
    "import { value } from './lib/value.js';\nexport const answer = value as number;\nexport const url: string = import.meta.url;\nexport const dir: string = import.meta.dirname;\n",
  );
  write('client/browser.ts', 'document.title = "not server code";\n');
  assert.equal(await compile(src, out), 2, 'the server modules, not the browser client');
  assert.ok(!fs.existsSync(path.join(out, 'client')));
  const first = load('main.js');
  assert.equal(first.answer, 1);
  assert.equal(first.url, pathToFileURL(path.join(src, 'main.ts')).href);
  assert.equal(first.dir, src);

  assert.equal(await compile(src, out), 0, 'nothing changed');

  await new Promise((resolve) => setTimeout(resolve, 20));
  write('lib/value.ts', 'export const value: number = 2;\n', true);
  assert.equal(await compile(src, out), 1, 'only the edited module');
  assert.equal(load('lib/value.js').value, 2);
});

test('a deleted module loses its output; a moved source folder compiles everything again', async () => {
  write('gone.ts', 'export const x = 1;\n');
  await compile(src, out);
  assert.ok(fs.existsSync(path.join(out, 'gone.js')));
  fs.rmSync(path.join(src, 'gone.ts'));
  assert.equal(await compile(src, out), 0);
  assert.ok(!fs.existsSync(path.join(out, 'gone.js')));

  const moved = path.join(root, 'moved');
  fs.cpSync(src, moved, { recursive: true });
  assert.equal(await compile(moved, out), 2, 'outputs name their source: all of them again');
  assert.equal(load('main.js').url, pathToFileURL(path.join(moved, 'main.ts')).href);
});

#!/usr/bin/env node
// Runs the server as plain JavaScript compiled from src/ into build/server/ (bin/compile-server.js:
// only what changed since the last start), so no TypeScript loader sits in the process.
// PRESENCE_TSX=1 runs the sources through tsx's loader instead (stack traces with TypeScript lines).
import path from 'node:path';
import { pathToFileURL } from 'node:url';

let main;
if (process.env.PRESENCE_TSX === '1') {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
} else {
  const { compileServer, COMPILED_DIR } = await import('./compile-server.js');
  const started = performance.now();
  const compiled = await compileServer();
  // Said only when something was compiled (a first start without `npm install`'s step, or edited sources).
  if (compiled)
    console.error(`presence: compiled ${compiled} changed server module(s) into build/server/ in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  // Workers and shard processes that start from src/*.mjs import the compiled modules from here.
  process.env.PRESENCE_COMPILED = COMPILED_DIR;
  ({ main } = await import(pathToFileURL(path.join(COMPILED_DIR, 'cli', 'main.js')).href));
}
const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);

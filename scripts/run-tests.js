#!/usr/bin/env node
// Runs every test file under test/ with Node's own test runner through tsx.
// Usage: npm test [-- <file or folder filter>...]
//
// Two passes: most files run two at a time; the files that measure real time (the playback
// clock's and the player page's timing) then run one at a time, so another suite's CPU load
// cannot skew what they measure. A closing line sums both passes.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const TIMED = ['test/realtime/', 'test/player/'];

function find(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'support' ? [] : find(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const filters = process.argv.slice(2);
const files = find('test')
  .map((f) => f.split(path.sep).join('/'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
if (!process.env.TEST_DATABASE_URL) {
  console.log('TEST_DATABASE_URL is not set: PostgreSQL suites are skipped; the embedded database (PGlite) suites run.');
}

const timed = files.filter((f) => TIMED.some((prefix) => f.startsWith(prefix)));
const parallel = files.filter((f) => !timed.includes(f));
const totals = { pass: 0, fail: 0, skipped: 0, cancelled: 0, todo: 0 };
let status = 0;

for (const [group, concurrency] of [[parallel, 2], [timed, 1]]) {
  if (group.length === 0) continue;
  const tap = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'presence-tests-')), 'results.tap');
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', '--test-reporter-destination=stdout', '--test-reporter=tap', `--test-reporter-destination=${tap}`, ...group],
    { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
  );
  if (result.status !== 0) status = result.status ?? 1;
  const summary = fs.existsSync(tap) ? fs.readFileSync(tap, 'utf8') : '';
  for (const key of Object.keys(totals)) {
    const match = summary.match(new RegExp(`^# ${key} (\\d+)$`, 'm'));
    if (match) totals[key] += Number(match[1]);
  }
  fs.rmSync(path.dirname(tap), { recursive: true, force: true });
}

if (totals.cancelled) totals.fail += totals.cancelled;
console.log(`\ntests: ${totals.pass} passed, ${totals.fail} failed, ${totals.skipped} skipped`);
process.exit(status);

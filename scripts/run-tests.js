#!/usr/bin/env node
// Runs every test file under test/ with Node's own test runner through tsx.
// Usage: npm test [-- <file or folder filter>...]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

function find(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'support' ? [] : find(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const filters = process.argv.slice(2);
const files = find('test').filter((f) => filters.length === 0 || filters.some((x) => f.includes(x))).sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
if (!process.env.TEST_DATABASE_URL) {
  console.log('TEST_DATABASE_URL is not set: PostgreSQL suites are skipped; the embedded database (PGlite) suites run.');
}
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', ...files], {
  stdio: 'inherit',
  env: { ...process.env, NODE_ENV: 'test' },
});
process.exit(result.status ?? 1);

/**
 * Issue 15, item 7: the project says Node.js 20 (`engines.node` in package.json). Every installed
 * package's own `engines.node` must accept that range, so `npm install` on Node 20 warns about none
 * (content-disposition 3 and cookie 2 wanted Node 22; overrides pin their Node 20 lines).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const semver = require('semver') as { subset(sub: string, sup: string): boolean; satisfies(version: string, range: string): boolean };
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test("every package in the lock file supports the project's Node range, and this Node is in it", () => {
  const project = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const supported: string = project.engines.node;
  assert.match(supported, /^>=20\./, 'the README says Node.js 20');
  assert.ok(semver.satisfies(process.versions.node, supported), `this Node ${process.versions.node} is in ${supported}`);
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
  const refusing: string[] = [];
  for (const [where, entry] of Object.entries<any>(lock.packages)) {
    const wanted = entry.engines?.node;
    if (!where || typeof wanted !== 'string') continue;
    // Only the Node 20 part matters: the package must accept every Node 20 release we support.
    if (!semver.subset(`${supported} <21`, wanted)) refusing.push(`${where.replace(/^.*node_modules\//, '')}@${entry.version} wants node ${wanted}`);
  }
  assert.deepEqual(refusing, []);
});

#!/usr/bin/env node
// Runs every test file under test/ with Node's own test runner through tsx.
// Usage: npm test [-- <file or folder filter>...]
//
// Each file runs in its own process and exits when its tests are done (--test-force-exit), so a
// handle left open cannot hold the suite; a file still running after TEST_FILE_TIMEOUT seconds
// (default 600) has its process group killed and counts as failed, with the output so far.
// Files run side by side within a CPU budget of TEST_CONCURRENCY cores (default 2), at most
// TEST_MAX_FILES at once (default 3): many files mostly wait (retry schedules, timers, a browser
// idling), so two at a time left the cores half idle. Each file's share of a core is what
// test/durations.json recorded (its CPU seconds, its children's included, over its wall seconds;
// unknown files count as a whole core). The files that measure real time (marked with a
// `// @timed` first line) then run one at a time, so another file's CPU load cannot skew what
// they measure. Each file's output is printed whole when it ends; a closing table lists the
// slowest files and any failures.
//
// The parallel files start longest first, by the seconds test/durations.json records for each
// (files it does not know count as long): a two-minute file started last would otherwise run
// alone at the end while the other core idles. `npm test -- --record-durations` rewrites it.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const FILE_TIMEOUT_MS = Number(process.env.TEST_FILE_TIMEOUT ?? 600) * 1000;
const CPU_BUDGET = Math.max(1, Number(process.env.TEST_CONCURRENCY ?? 2));
const MAX_FILES = Math.max(1, Number(process.env.TEST_MAX_FILES ?? 3));

function find(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'support' ? [] : find(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const args = process.argv.slice(2);
const recordDurations = args.includes('--record-durations');
const filters = args.filter((a) => a !== '--record-durations');
const DURATIONS_FILE = 'test/durations.json';
const knownSeconds = fs.existsSync(DURATIONS_FILE) ? JSON.parse(fs.readFileSync(DURATIONS_FILE, 'utf8')) : {};
const UNKNOWN_FILE_SECONDS = 120;
// Entries are { seconds, cpu } (an older file holds plain seconds).
const recorded = (file) => (typeof knownSeconds[file] === 'number' ? { seconds: knownSeconds[file] } : knownSeconds[file]);
const expectedSeconds = (file) => recorded(file)?.seconds ?? UNKNOWN_FILE_SECONDS;
/** The share of one core a file keeps busy, from its last recorded run; a quarter at the least (its busy moments). */
const MIN_CPU_SHARE = 0.25;
function cpuShare(file) {
  const known = recorded(file);
  if (!known?.cpu || !known.seconds) return 1;
  return Math.min(1, Math.max(MIN_CPU_SHARE, known.cpu / known.seconds));
}
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

// Every built-in face first (npm install builds only the default one; a test server that found
// one missing would build it in the middle of a test). Quick when they are current.
const assets = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build-assets.ts', '--all'], { stdio: 'inherit' });
if (assets.status !== 0) {
  console.error('building the faces and bundles failed');
  process.exit(1);
}

const isTimed = (file) => /^\/\/ @timed\b/m.test(fs.readFileSync(file, 'utf8'));
const timed = files.filter(isTimed);
const parallel = files.filter((f) => !timed.includes(f)).sort((a, b) => expectedSeconds(b) - expectedSeconds(a));
const totals = { pass: 0, fail: 0, skipped: 0, cancelled: 0, todo: 0 };
const results = [];

function runFile(file) {
  const started = Date.now();
  return new Promise((resolve) => {
    // The file runs directly (not under --test): one process per file. --test-force-exit ends it
    // when its tests are done even if a handle was left open, so a leak cannot hang the suite.
    // Through sh, whose `times` then says the CPU time of the file and everything it started (POSIX:
    // children that were waited for, grandchildren included): what the scheduler packs by.
    const script = '"$@"; rc=$?; echo "$0" >&2; times >&2; exit $rc';
    const command = [process.execPath, '--import', 'tsx', '--test-force-exit', '--test-reporter=spec', file];
    const child = spawn('/bin/sh', ['-c', script, CPU_MARK, ...command], {
      // No test reaches a model host: fetching is off unless a test turns it on with its own server.
      env: { MODELS_DOWNLOAD: '0', ...process.env, NODE_ENV: 'test' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, FILE_TIMEOUT_MS);
    // 'close' waits for every holder of the output pipes: a process the file spawned and left
    // behind would hold it open for ever. So the file ends at 'exit'; its output gets a moment to
    // drain, and anything it left running in its process group is killed.
    let finished = false;
    child.on('exit', (exitCode) => {
      setTimeout(() => {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* the group is already gone */
        }
        finish(exitCode);
      }, 2000).unref();
    });
    child.on('close', (code) => finish(code));
    const finish = (code) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      const seconds = (Date.now() - started) / 1000;
      const { text, cpu } = splitCpuTimes(Buffer.concat(output).toString('utf8'));
      const counts = {};
      for (const key of Object.keys(totals)) {
        // The spec reporter's closing lines: "ℹ pass 12".
        const match = text.match(new RegExp(`^\u2139 ${key} (\\d+)$`, 'm'));
        counts[key] = match ? Number(match[1]) : 0;
        totals[key] += counts[key];
      }
      const failed = code !== 0 || timedOut || counts.fail > 0 || counts.cancelled > 0;
      if (failed && counts.fail === 0 && counts.cancelled === 0) totals.fail += 1;
      process.stdout.write(text);
      const why = timedOut ? `timed out after ${FILE_TIMEOUT_MS / 1000} s, killed` : failed ? `failed (exit ${code})` : 'ok';
      console.log(`::: ${file}: ${why}, ${counts.pass} passed, ${counts.fail} failed, ${seconds.toFixed(1)} s\n`);
      results.push({ file, seconds, cpu, failed, why, detail: failed ? failureDetail(text) : '' });
      resolve();
    };
  });
}

const CPU_MARK = '::: cpu times';
/** The file's output without sh's closing `times`, and the CPU seconds of its children from them. */
function splitCpuTimes(all) {
  const at = all.lastIndexOf(`${CPU_MARK}\n`);
  if (at < 0) return { text: all, cpu: undefined };
  // `times`: the shell's user and system time, then its children's ("0m4.28s 0m0.53s").
  const children = all.slice(at + CPU_MARK.length + 1).split('\n')[1] ?? '';
  const parts = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  return { text: all.slice(0, at), cpu: parts.length === 2 ? parts[0] + parts[1] : undefined };
}

/**
 * What a failed file said about its failures, repeated at the end of the run: a CI log is often
 * read from its tail, and the file's own output may be far above. The spec reporter's
 * "failing tests" section when there is one (it names hook failures too), else the output's tail.
 */
function failureDetail(text) {
  const at = text.lastIndexOf('\u2716 failing tests:');
  const lines = (at >= 0 ? text.slice(at) : text).split('\n');
  const kept = at >= 0 ? lines.slice(0, DETAIL_LINES) : lines.slice(-DETAIL_LINES);
  return kept.join('\n');
}
const DETAIL_LINES = 60;

/**
 * Runs the files in order, each as soon as it fits: at most `maxFiles` at once, and the running
 * files' CPU shares within `budget` cores (a file that fits nowhere runs when nothing else does).
 * A lighter file further down the list may start before a heavier one that does not fit yet.
 */
function runGroup(group, budget, maxFiles) {
  const waiting = [...group];
  const running = new Set();
  return new Promise((resolve) => {
    const fill = () => {
      if (waiting.length === 0 && running.size === 0) return resolve();
      while (waiting.length && running.size < maxFiles) {
        const used = [...running].reduce((sum, f) => sum + cpuShare(f), 0);
        const at = running.size === 0 ? 0 : waiting.findIndex((f) => used + cpuShare(f) <= budget + 1e-9);
        if (at < 0) break;
        const [file] = waiting.splice(at, 1);
        running.add(file);
        runFile(file).then(() => {
          running.delete(file);
          fill();
        });
      }
    };
    fill();
  });
}

const started = Date.now();
await runGroup(parallel, CPU_BUDGET, MAX_FILES);
await runGroup(timed, 1, 1);

const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 12);
console.log('slowest files:');
for (const r of slowest) console.log(`  ${r.seconds.toFixed(1).padStart(7)} s  ${r.file}`);
const failures = results.filter((r) => r.failed);
if (failures.length) {
  console.log('failed files:');
  for (const r of failures) console.log(`  ${r.file}: ${r.why}`);
  console.log('\nwhat the failed files said:');
  for (const r of failures) console.log(`\n--- ${r.file}\n${r.detail}`);
}
if (recordDurations) {
  const next = { ...knownSeconds };
  for (const r of results) next[r.file] = { seconds: Math.round(r.seconds), ...(r.cpu !== undefined && { cpu: Math.round(r.cpu) }) };
  const sorted = Object.fromEntries(
    Object.entries(next)
      .filter(([f]) => fs.existsSync(f))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  // One file a line, so a diff shows which files changed.
  const entry = (v) => (typeof v === 'number' ? `${v}` : `{ "seconds": ${v.seconds}${v.cpu === undefined ? '' : `, "cpu": ${v.cpu}`} }`);
  const lines = Object.entries(sorted).map(([f, v]) => `  ${JSON.stringify(f)}: ${entry(v)}`);
  fs.writeFileSync(DURATIONS_FILE, `{\n${lines.join(',\n')}\n}\n`);
  console.log(`durations written to ${DURATIONS_FILE}`);
}
if (totals.cancelled) totals.fail += totals.cancelled;
console.log(
  `\ntests: ${totals.pass} passed, ${totals.fail} failed, ${totals.skipped} skipped; ${results.length} files in ${((Date.now() - started) / 60000).toFixed(1)} min`,
);
process.exit(failures.length ? 1 : 0);

/**
 * @presence/sdk as a package: its generated types are what the app serves now (so a route added
 * without regenerating fails here), it builds to sdk/dist with declarations, its README's API
 * reference matches its exports, and the Node examples run against a real server through the
 * built package (resolved by its name, as a user's code would).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startTestApp, type TestApp } from '../support/app.js';
import { PlayerClient, concat } from '../support/render-client.js';
import { until } from '../support/until.js';
import { generatedFiles, normaliseDocuments, staleFiles } from '../../scripts/sdk-generate.js';
import { compileSdk } from '../../scripts/sdk-build.js';
import { readmeWithReference, README } from '../../scripts/sdk-readme.js';

const ROOT = path.join(import.meta.dirname, '../..');
let t: TestApp;
let agentId: number;

/** Runs an example with node; resolves with its exit code and output. `onLine` sees stdout as it comes. */
function runExample(
  file: string,
  args: string[],
  env: Record<string, string>,
  onLine: (line: string) => void = () => {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'sdk', 'examples', file), ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      const text = chunk.toString();
      stdout += text;
      for (const line of text.split('\n')) if (line) onLine(line);
    });
    child.stderr.on('data', (chunk) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('@presence/sdk package', () => {
  before(async () => {
    t = await startTestApp('pglite');
    agentId = (await t.request('POST', '/v1/agent/create', { body: { name: 'Examples', concurrency_limit: 10 } })).body.id;
  });
  after(async () => {
    await t.close();
  });

  it('has generated types equal to what the app serves now', async () => {
    const openapi = await t.request('GET', '/openapi.json');
    const asyncapi = await t.request('GET', '/asyncapi.json');
    assert.equal(openapi.status, 200);
    const files = await generatedFiles(normaliseDocuments({ openapi: openapi.body, asyncapi: asyncapi.body }, t.url));
    assert.deepEqual(staleFiles(files), [], 'sdk/src/generated is stale: run `node --import tsx scripts/sdk-generate.ts` and commit the result');
  });

  it('builds to sdk/dist with declarations, exporting what its source exports', async () => {
    compileSdk();
    for (const file of ['index.js', 'index.d.ts', 'render-session.js', 'generated/openapi.d.ts'])
      assert.ok(fs.existsSync(path.join(ROOT, 'sdk', 'dist', file)), file);
    const built = await import(pathToFileURL(path.join(ROOT, 'sdk', 'dist', 'index.js')).href);
    const source = await import('../../sdk/src/index.js');
    assert.deepEqual(Object.keys(built).sort(), Object.keys(source).sort());
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'sdk', 'package.json'), 'utf8'));
    assert.equal(pkg.name, '@presence/sdk');
    assert.deepEqual(Object.keys(pkg.dependencies), ['openapi-fetch']);
    // The browser build must not reach for Node's modules.
    for (const file of fs.readdirSync(path.join(ROOT, 'sdk', 'dist')).filter((f) => f.endsWith('.js'))) {
      assert.doesNotMatch(fs.readFileSync(path.join(ROOT, 'sdk', 'dist', file), 'utf8'), /from ['"]node:|require\(/, file);
    }
  });

  it('has a README whose API reference matches the exports', () => {
    assert.equal(fs.readFileSync(README, 'utf8'), readmeWithReference(), 'sdk/README.md is stale: run `node --import tsx scripts/sdk-readme.ts`');
  });

  it('runs examples/speak-file.mjs: speaks a text file through a render session', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-example-'));
    const file = path.join(dir, 'story.txt');
    fs.writeFileSync(file, 'Hello there.\n\nThis is the second paragraph.\n');
    try {
      const run = await runExample('speak-file.mjs', [file], { PRESENCE_URL: t.url, PRESENCE_API_KEY: t.key, PRESENCE_AGENT_ID: String(agentId) });
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.match(run.stdout, /watch: http/);
      assert.equal(run.stdout.match(/: ended$/gm)?.length, 2, run.stdout);
      assert.match(run.stdout, /^done$/m);
      const sessionId = run.stdout.match(/session (\S+);/)![1];
      const row = await t.request('GET', `/v1/sessions/${sessionId}`);
      assert.equal(row.body.status, 'ended', 'the example stopped its session');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs examples/tts-bridge.mjs: a streaming OpenAI-compatible TTS reaches the page byte-exact', async () => {
    // A stand-in for /v1/audio/speech with response_format pcm: 24 kHz s16le, streamed in chunks.
    let seed = 7;
    const speech = Int16Array.from({ length: 24000 }, () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) - 32768);
    const bytes = Buffer.from(speech.buffer);
    let requestBody: any;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const tts = http.createServer(async (request, response) => {
      let text = '';
      for await (const chunk of request) text += chunk;
      requestBody = JSON.parse(text);
      await released;
      response.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      for (const [from, to] of [
        [0, 10_001],
        [10_001, 30_000],
        [30_000, bytes.length],
      ]) {
        response.write(bytes.subarray(from, to));
        await new Promise((r) => setTimeout(r, 50));
      }
      response.end();
    });
    await new Promise<void>((resolve) => tts.listen(0, '127.0.0.1', resolve));
    let player: PlayerClient | undefined;
    try {
      const opened: Promise<void>[] = [];
      const run = runExample(
        'tts-bridge.mjs',
        ['Hello from the bridge.'],
        {
          PRESENCE_URL: t.url,
          PRESENCE_API_KEY: t.key,
          PRESENCE_AGENT_ID: String(agentId),
          TTS_URL: `http://127.0.0.1:${(tts.address() as { port: number }).port}`,
        },
        (line) => {
          const watch = line.match(/watch: (\S+)/);
          // The page opens before the TTS answers, so it sees every frame.
          if (watch)
            opened.push(
              PlayerClient.open(watch[1])
                .then((p) => void (player = p))
                .finally(release),
            );
        },
      );
      const result = await run;
      await Promise.all(opened);
      assert.equal(result.code, 0, result.stderr + result.stdout);
      assert.match(result.stdout, /tts-1: ended/);
      assert.equal(requestBody.response_format, 'pcm');
      assert.equal(requestBody.input, 'Hello from the bridge.');
      await until(() => player!.frames.reduce((n, f) => n + f.pcm.length, 0) >= speech.length, 5000, 'the speech reached the page');
      assert.deepEqual(Array.from(concat(...player!.frames.map((f) => f.pcm))), Array.from(speech));
    } finally {
      player?.close();
      tts.close();
    }
  });
});

/**
 * `presence faces add`: prints the face record as one JSON object (no file bytes), errors to stderr
 * with a non-zero exit; works while the server runs (embedded: through the admin endpoint, whose
 * body limit fits a base64 face) and with no server. Operator faces are global; `--account` makes
 * one that account's own.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  bannerKeys,
  cleanup,
  freePort,
  freshPostgres,
  runCli,
  singleJson,
  startServer,
  migratedDataDir,
  tempDataDir,
  type ServerProcess,
} from './support/process.js';
import { faceGlb, REQUIRED_MORPHS } from '../catalog/support/face-glb.js';

after(cleanup);

type Env = Record<string, string>;

const engines = [
  { name: 'embedded database', skip: false as string | false, env: async () => ({}) as Env },
  {
    name: 'PostgreSQL (DATABASE_URL)',
    skip: process.env.TEST_DATABASE_URL ? (false as const) : 'TEST_DATABASE_URL is not set',
    env: async () => ({ DATABASE_URL: await freshPostgres() }) as Env,
  },
];

/** Writes the test face files into a temporary folder. */
async function faceFiles(): Promise<{ good: string; partial: string; notGlb: string; big: string; large: string }> {
  const dir = tempDataDir('face-files');
  const good = path.join(dir, 'face.glb');
  fs.writeFileSync(good, await faceGlb());
  const partial = path.join(dir, 'partial.vrm');
  fs.writeFileSync(partial, await faceGlb(REQUIRED_MORPHS.filter((m) => m !== 'viseme_sil' && m !== 'eyeBlinkLeft')));
  const notGlb = path.join(dir, 'face.gltf');
  fs.writeFileSync(notGlb, JSON.stringify({ asset: { version: '2.0' } }));
  const big = path.join(dir, 'big.glb');
  fs.writeFileSync(big, await faceGlb(REQUIRED_MORPHS, 40_000));
  const large = path.join(dir, 'large.glb');
  fs.writeFileSync(large, await faceGlb(REQUIRED_MORPHS, 3 * 1024 * 1024));
  return { good, partial, notGlb, big, large };
}

async function expectFailure(args: string[], env: Env, stderrPattern: RegExp): Promise<void> {
  const result = await runCli(args, env);
  assert.notEqual(result.code, 0, `presence ${args.join(' ')} must fail`);
  assert.equal(result.stdout, '', `nothing on stdout for presence ${args.join(' ')}`);
  assert.match(result.stderr, stderrPattern, `stderr of presence ${args.join(' ')}`);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
}

/** Adds a global face and an account face; checks the printed records. */
async function addFaces(env: Env, files: Awaited<ReturnType<typeof faceFiles>>) {
  const run = await runCli(
    ['faces', 'add', '--file', files.good, '--name', 'Operator Olga', '--gender', 'f', '--id', 'olga', '--description', 'Added by the operator'],
    env,
  );
  const global = singleJson(run);
  assert.equal(global.avatar_id, 'olga');
  assert.equal(global.name, 'Operator Olga');
  assert.equal(global.gender, 'f');
  assert.equal(global.description, 'Added by the operator');
  assert.equal(global.source, 'custom');
  assert.match(global.model_url, /^\/assets\/faces\/cf[0-9a-f]{32}\.glb$/, 'an unguessable file address');
  assert.equal(global.default_voice_id, 'af_alloy');
  assert.equal(global.account_id, null);
  assert.equal(global.size_bytes, fs.statSync(files.good).size);
  assert.ok(global.morphs.includes('viseme_aa') && global.morphs.includes('jawOpen'));
  assert.ok(run.stdout.length < 4000, 'the file bytes are not printed');
  assert.ok(!('file_base64' in global) && !('glb' in global));

  const own = singleJson(await runCli(['faces', 'add', '--file', files.good, '--name', 'Mo', '--gender', 'm', '--account', '1', '--voice', 'bm_daniel'], env));
  assert.match(own.avatar_id, /^custom_[a-z0-9]+$/);
  assert.equal(own.account_id, 1);
  assert.equal(own.default_voice_id, 'bm_daniel');
  return { global, own };
}

/** The refusals; `full` adds those whose path does not depend on where the command runs (each CLI run costs seconds). */
async function faceErrors(env: Env, files: Awaited<ReturnType<typeof faceFiles>>, full: boolean): Promise<void> {
  await expectFailure(['faces', 'add', '--file', files.partial, '--name', 'X', '--gender', 'f'], env, /missing viseme morphs: viseme_sil.*eyeBlinkLeft/s);
  await expectFailure(['faces', 'add', '--file', files.good, '--name', 'X', '--gender', 'f', '--id', 'olga'], env, /already exists/);
  await expectFailure(['faces', 'add', '--file', files.good, '--name', 'X', '--gender', 'f', '--account', '999999'], env, /999999|not found/);
  if (!full) return;
  await expectFailure(['faces', 'add', '--file', files.notGlb, '--name', 'X', '--gender', 'f'], env, /not a GLB/);
  await expectFailure(['faces', 'add', '--file', files.big, '--name', 'X', '--gender', 'f'], { ...env, FACE_MAX_BYTES: '20000' }, /over the 20000-byte limit/);
  await expectFailure(
    ['faces', 'add', '--file', path.join(path.dirname(files.good), 'nope.glb'), '--name', 'X', '--gender', 'f'],
    env,
    /cannot read .*nope\.glb/,
  );
  await expectFailure(['faces', 'add', '--file', files.good, '--name', 'X', '--gender', 'f', '--id', 'face01'], env, /built-in/);
  await expectFailure(['faces', 'add', '--file', files.good, '--name', 'X', '--gender', 'f', '--id', 'Bad Id'], env, /id/);
  await expectFailure(['faces', 'add', '--file', files.good, '--name', 'X', '--gender', 'f', '--voice', 'am_adam'], env, /does not suit/);
  await expectFailure(['faces', 'add', '--file', files.good, '--name', 'X'], env, /--gender/);
  await expectFailure(['faces', 'add', '--file', files.good, '--gender', 'f'], env, /--name/);
  await expectFailure(['faces', 'add', '--name', 'X', '--gender', 'f'], env, /--file/);
}

/** What the running server makes of the faces: global for all, the account face for account 1 only. */
async function checkServerSees(server: ServerProcess, adminKey: string, env: Env, faces: { global: any; own: any }): Promise<void> {
  const list = await server.request('GET', '/v1/avatars', { key: adminKey });
  assert.equal(list.status, 200);
  const ids = list.body.map((f: any) => f.avatar_id);
  assert.ok(ids.includes('olga'), ids.join(', '));
  assert.ok(ids.includes(faces.own.avatar_id), 'account 1 sees its own face');
  const olga = list.body.find((f: any) => f.avatar_id === 'olga');
  assert.equal(olga.gender, 'f');
  assert.ok(!('account_id' in olga));

  const agent = await server.request('POST', '/v1/agent/create', { key: adminKey, body: { name: 'Mo agent', avatar_id: faces.own.avatar_id } });
  assert.equal(agent.status, 200, JSON.stringify(agent.body));
  assert.equal(agent.body.voice_id, 'bm_daniel');

  // Another account sees the operator face, not account 1's.
  const other = singleJson(await runCli(['accounts', 'create', '--name', 'Other', '--plan', 'paid', '--balance', '10'], env));
  const key = singleJson(await runCli(['keys', 'create', '--account', String(other.id), '--permissions', 'read,setup'], env)).key;
  const theirs = (await server.request('GET', '/v1/avatars', { key })).body.map((f: any) => f.avatar_id);
  assert.ok(theirs.includes('olga'));
  assert.ok(!theirs.includes(faces.own.avatar_id));
  const theirAgent = await server.request('POST', '/v1/agent/create', { key, body: { name: 'Olga agent', avatar_id: 'olga', voice_id: 'af_sky' } });
  assert.equal(theirAgent.status, 200, JSON.stringify(theirAgent.body));
  const refused = await server.request('POST', '/v1/agent/create', { key, body: { name: 'Not mine', avatar_id: faces.own.avatar_id } });
  assert.equal(refused.status, 422);
  assert.equal(refused.body.detail.code, 'unknown_avatar');
}

for (const engine of engines) {
  describe(`presence faces add [${engine.name}]`, { skip: engine.skip }, () => {
    test('while the server runs: the server lists and uses the face at once', async () => {
      const files = await faceFiles();
      const env: Env = { ...(await engine.env()), DATA_DIR: await migratedDataDir('faces-live'), PORT: String(await freePort()) };
      const server = await startServer(env);
      try {
        const [adminKey] = bannerKeys(server);
        assert.ok(adminKey, 'first-start key printed');
        const faces = await addFaces(env, files);
        await checkServerSees(server, adminKey, env, faces);
        // Bigger than the server's default 2 MB body limit once base64-encoded: the admin route takes it.
        const large = singleJson(await runCli(['faces', 'add', '--file', files.large, '--name', 'Large', '--gender', 'm', '--id', 'large-face'], env));
        assert.equal(large.size_bytes, fs.statSync(files.large).size);
        await faceErrors(env, files, true);
        if (!env.DATABASE_URL) {
          const adminCalls = server.logs().filter((l) => l.req?.url === '/internal/admin');
          assert.ok(adminCalls.length >= 3, `admin endpoint used (${adminCalls.length} calls logged)`);
        }
        assert.equal((await server.request('GET', '/healthz')).status, 200, 'the server is unharmed');
      } finally {
        assert.equal((await server.stop()).code, 0);
      }
    });

    test('with no server: the CLI stores the face itself; a server started later has it', async () => {
      const files = await faceFiles();
      const env: Env = { ...(await engine.env()), DATA_DIR: await migratedDataDir('faces-offline'), PORT: String(await freePort()) };
      // The first start makes account 1 and its key; stop it so the CLI works alone.
      const first = await startServer(env);
      const [adminKey] = bannerKeys(first);
      assert.equal((await first.stop()).code, 0);

      const faces = await addFaces(env, files);
      await faceErrors(env, files, false);
      assert.ok(!fs.existsSync(path.join(env.DATA_DIR, 'presence.lock')), 'the CLI released DATA_DIR');

      const server = await startServer(env);
      try {
        await checkServerSees(server, adminKey, env, faces);
      } finally {
        assert.equal((await server.stop()).code, 0);
      }
    });
  });
}

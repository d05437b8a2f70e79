/**
 * `presence faces generate`: a new face from a seed and dials, built and stored like an uploaded one
 * (the server lists it and an agent can use it); bad dials are refused with a clear message. Its own
 * file, apart from `faces add`: building a face costs CPU-seconds, and the runner gives each file its
 * own time limit.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { bannerKeys, cleanup, freePort, runCli, singleJson, startServer, migratedDataDir, tempDataDir } from './support/process.js';

after(cleanup);

type Env = Record<string, string>;

async function expectFailure(args: string[], env: Env, stderrPattern: RegExp): Promise<void> {
  const result = await runCli(args, env);
  assert.notEqual(result.code, 0, `presence ${args.join(' ')} must fail`);
  assert.equal(result.stdout, '', `nothing on stdout for presence ${args.join(' ')}`);
  assert.match(result.stderr, stderrPattern, `stderr of presence ${args.join(' ')}`);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
}

describe('presence faces generate', () => {
  test('makes a new face from a seed and dials and stores it like an uploaded one; bad dials are refused', async () => {
    const env: Env = { DATA_DIR: await migratedDataDir('faces-generate'), PORT: String(await freePort()) };
    const server = await startServer(env);
    try {
      const [adminKey] = bannerKeys(server);
      const out = path.join(tempDataDir('faces-generate-out'), 'ada.glb');
      const ada = singleJson(
        await runCli(
          [
            'faces',
            'generate',
            '--name',
            'Ada',
            '--gender',
            'f',
            '--seed',
            '7',
            '--age',
            '45',
            '--build',
            '0.2',
            '--skin',
            '0.6',
            '--id',
            'gen-ada',
            '--out',
            out,
          ],
          env,
        ),
      );
      assert.equal(ada.avatar_id, 'gen-ada');
      assert.equal(ada.gender, 'f');
      assert.equal(ada.source, 'custom');
      assert.match(ada.description, /woman in her forties.*seed 7/);
      assert.equal(ada.size_bytes, fs.statSync(out).size);
      assert.ok(ada.size_bytes < 3 * 1024 * 1024, `${ada.size_bytes} bytes`);
      assert.ok(ada.morphs.includes('viseme_PP') && ada.morphs.includes('eyeBlinkLeft'));
      const list = await server.request('GET', '/v1/avatars', { key: adminKey });
      assert.ok(list.body.some((f: any) => f.avatar_id === 'gen-ada'));
      const agent = await server.request('POST', '/v1/agent/create', { key: adminKey, body: { name: 'Ada agent', avatar_id: 'gen-ada' } });
      assert.equal(agent.status, 200, JSON.stringify(agent.body));
      await expectFailure(['faces', 'generate', '--name', 'X', '--gender', 'f', '--age', '200'], env, /--age must be a number from 20 to 75/);
      await expectFailure(['faces', 'generate', '--name', 'X', '--gender', 'f', '--skin', 'dark'], env, /--skin must be a number from 0 to 1/);
      await expectFailure(['faces', 'generate', '--name', 'X', '--gender', 'f', '--build', '3'], env, /--build must be a number from -1 to 1/);
      await expectFailure(['faces', 'generate', '--name', 'X'], env, /--gender/);
      await expectFailure(['faces', 'generate', '--gender', 'm'], env, /--name/);
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });
});

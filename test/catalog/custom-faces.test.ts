/**
 * Bring your own face: POST /v1/avatars with a GLB, listed with its gender, used by agents and
 * sessions under the voice/face gender rule, scoped to its account, deleted by its owner only;
 * invalid files refused with 422 invalid_face. On both database engines.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { assertCoded, itemAt } from '../agents/helpers.js';
import { makeAgent, openPlayer, started, startSession, stopSession } from '../sessions/helpers.js';
import { faceGlb, REQUIRED_MORPHS } from './support/face-glb.js';
import { StudioCatalog } from '../../src/catalog/catalog.js';
import { CustomFaces, customFaceGlb, DEFAULT_FACE_MAX_BYTES } from '../../src/catalog/custom-faces.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/core/config.js';
import { openDatabase } from '../../src/core/db/database.js';
import { sleep } from '../sessions/helpers.js';

/** POST /v1/avatars with a raw body. */
async function upload(t: TestApp, body: Uint8Array | string | undefined, query: Record<string, string>, options: { key?: string; type?: string } = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${options.key ?? t.key}` };
  if (options.type !== '') headers['content-type'] = options.type ?? 'model/gltf-binary';
  const response = await fetch(`${t.url}/v1/avatars?${new URLSearchParams(query)}`, { method: 'POST', headers, body: body as BodyInit | undefined });
  const text = await response.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: response.status, body: parsed };
}

/** The file token in a face's model_url. */
const tokenOf = (face: { model_url: string }) => /\/assets\/faces\/(cf[0-9a-f]{32})\.glb$/.exec(face.model_url)![1];

const listed = async (t: TestApp, key?: string): Promise<any[]> => {
  const res = await t.request('GET', '/v1/avatars', { key });
  assert.equal(res.status, 200);
  return res.body;
};

forEachEngine('custom faces', (engine) => {
  let t: TestApp;
  let glb: Uint8Array;
  before(async () => {
    t = await startTestApp(engine);
    glb = await faceGlb();
  });
  after(() => t.close());

  describe('adding a face', () => {
    it('answers 201 with the face record; it is listed with its gender and its GLB is served from the database', async () => {
      const res = await upload(t, glb, { name: 'Ada', gender: 'f', avatar_id: 'ada-face', description: 'My own face' });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const face = res.body;
      assert.equal(face.avatar_id, 'ada-face');
      assert.equal(face.name, 'Ada');
      assert.equal(face.gender, 'f');
      assert.equal(face.description, 'My own face');
      assert.equal(face.source, 'custom');
      assert.match(face.model_url, /^\/assets\/faces\/cf[0-9a-f]{32}\.glb$/, 'served at an unguessable address, not at its id');
      assert.equal(face.default_voice_id, 'af_alloy', "the first kokoro woman's voice");
      assert.equal(face.size_bytes, glb.byteLength);
      assert.deepEqual([...face.morphs].sort(), [...REQUIRED_MORPHS].sort());
      assert.deepEqual(face.look, {});
      assert.ok(!('glb' in face) && !('account_id' in face));

      const all = await listed(t);
      const entry = all.find((f) => f.avatar_id === 'ada-face');
      assert.deepEqual(entry, face);
      assert.ok(all.findIndex((f) => f.avatar_id === 'face01') < all.indexOf(entry), 'built-in faces first');

      const bytes = await customFaceGlb(tokenOf(face));
      assert.ok(bytes && Buffer.compare(bytes, Buffer.from(glb)) === 0, 'the stored GLB is the uploaded one, byte for byte');
      assert.equal(await customFaceGlb('no-such-face'), undefined);
      assert.equal(await customFaceGlb('ada-face'), undefined, 'not addressed by its avatar_id');
      assert.equal(await customFaceGlb('face01'), undefined, 'built-in faces are files, not database rows');
      // The player's asset route serves it at model_url, without a key.
      const served = await fetch(t.url + face.model_url);
      assert.equal(served.status, 200);
      assert.equal(served.headers.get('content-type'), 'model/gltf-binary');
      assert.equal(Buffer.compare(Buffer.from(await served.arrayBuffer()), Buffer.from(glb)), 0);
    });

    it('generates an id like custom_<random>, takes a default voice of the gender, and accepts application/octet-stream', async () => {
      const res = await upload(t, glb, { name: 'Bo', gender: 'm', default_voice_id: 'bm_george' }, { type: 'application/octet-stream' });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.match(res.body.avatar_id, /^custom_[a-z0-9]+$/);
      assert.match(res.body.avatar_id, /^[a-z0-9][a-z0-9_-]{2,40}$/);
      assert.equal(res.body.default_voice_id, 'bm_george');
      const plain = await upload(t, glb, { name: 'Cy', gender: 'm' });
      assert.equal(plain.body.default_voice_id, 'am_adam', "the first kokoro man's voice");
      assert.notEqual(plain.body.avatar_id, res.body.avatar_id);
    });

    it('a default voice of the other gender or not a kokoro voice is refused', async () => {
      assertCoded(await upload(t, glb, { name: 'X', gender: 'm', default_voice_id: 'af_bella' }), 422, 'voice_face_mismatch');
      assertCoded(await upload(t, glb, { name: 'X', gender: 'm', default_voice_id: 'nobody' }), 422, 'unknown_voice');
    });

    it('409 avatar_exists for an id the account already has, built-in ids included', async () => {
      assertCoded(await upload(t, glb, { name: 'Again', gender: 'f', avatar_id: 'ada-face' }), 409, 'avatar_exists');
      assertCoded(await upload(t, glb, { name: 'Again', gender: 'f', avatar_id: 'face01' }), 409, 'avatar_exists');
    });

    it("ids are per account: another account's id is free here (no probing), and each account uses its own face", async () => {
      const other = await t.account('paid');
      const theirs = await upload(t, glb, { name: 'Other Ada', gender: 'f', avatar_id: 'ada-face' }, { key: other.key });
      assert.equal(theirs.status, 201, JSON.stringify(theirs.body));
      const mine = (await listed(t)).find((f) => f.avatar_id === 'ada-face');
      assert.equal(mine.name, 'Ada', "the owner's face is unchanged");
      assert.notEqual(theirs.body.model_url, mine.model_url, 'two faces, two files');
      assert.equal((await listed(t, other.key)).find((f) => f.avatar_id === 'ada-face')?.name, 'Other Ada');
      const agent = await t.request('POST', '/v1/agent/create', { key: other.key, body: { name: 'Theirs', avatar_id: 'ada-face' } });
      assert.equal(agent.status, 200, JSON.stringify(agent.body));
      const s = await started(t, { agent_id: agent.body.id }, other.key);
      const player = await openPlayer(s.player_url);
      try {
        assert.equal(player.messages.find((m) => m.type === 'hello')?.face?.model_url, theirs.body.model_url, "the session plays its own account's face");
      } finally {
        player.close();
      }
      await stopSession(t, s.session_id, other.key);
      // Deleting theirs leaves mine.
      assert.equal((await t.request('DELETE', `/v1/agent/${agent.body.id}?confirm=true`, { key: other.key })).status, 204);
      assert.equal((await t.request('DELETE', '/v1/avatars/ada-face?confirm=true', { key: other.key })).status, 204);
      assert.equal((await listed(t)).find((f) => f.avatar_id === 'ada-face')?.model_url, mine.model_url);
      assert.equal((await fetch(t.url + mine.model_url)).status, 200);
      assert.equal((await fetch(t.url + theirs.body.model_url)).status, 404, 'a deleted face is no longer served');
    });

    it('a face file is not served at a guessable address: its id, or another token', async () => {
      for (const guess of ['ada-face.glb', 'ada-face.still.png', `cf${'0'.repeat(32)}.glb`, `cf${'0'.repeat(32)}.still.png`]) {
        assert.equal((await fetch(`${t.url}/assets/faces/${guess}`)).status, 404, guess);
      }
    });

    it('query validation: name and gender required, avatar_id pattern', async () => {
      itemAt(await upload(t, glb, { gender: 'f' }), ['query', 'name']);
      itemAt(await upload(t, glb, { name: 'X' }), ['query', 'gender']);
      itemAt(await upload(t, glb, { name: 'X', gender: 'x' }), ['query', 'gender']);
      itemAt(await upload(t, glb, { name: 'X', gender: 'f', avatar_id: 'A!' }), ['query', 'avatar_id']);
      itemAt(await upload(t, glb, { name: 'X', gender: 'f', avatar_id: '-no' }), ['query', 'avatar_id']);
    });

    it('needs the setup permission', async () => {
      const readOnly = await t.keyFor(t.accountId, ['read']);
      assertCoded(await upload(t, glb, { name: 'X', gender: 'f' }, { key: readOnly }), 403, 'missing_permission');
    });
  });

  describe('invalid files', () => {
    it('a file missing morphs: 422 invalid_face naming the missing ones', async () => {
      const partial = await faceGlb(REQUIRED_MORPHS.filter((m) => m !== 'viseme_PP' && m !== 'jawOpen'));
      const res = await upload(t, partial, { name: 'X', gender: 'f' });
      assertCoded(res, 422, 'invalid_face');
      assert.match(res.body.detail.message, /viseme_PP/);
      assert.match(res.body.detail.message, /jawOpen/);
      assert.doesNotMatch(res.body.detail.message, /viseme_aa/);
      const none = await upload(t, await faceGlb([]), { name: 'X', gender: 'f' });
      assertCoded(none, 422, 'invalid_face');
      assert.match(none.body.detail.message, /missing viseme morphs: viseme_sil/);
    });

    it('not a GLB, or no body: 422 invalid_face', async () => {
      const text = await upload(t, new TextEncoder().encode('{"asset":{"version":"2.0"}} this is glTF JSON, not a GLB'), { name: 'X', gender: 'f' });
      assertCoded(text, 422, 'invalid_face');
      assert.match(text.body.detail.message, /not a GLB/);
      const empty = await upload(t, new Uint8Array(0), { name: 'X', gender: 'f' });
      assertCoded(empty, 422, 'invalid_face');
      const truncated = await upload(t, glb.subarray(0, 200), { name: 'X', gender: 'f' });
      assertCoded(truncated, 422, 'invalid_face');
    });

    it('over the 8 MB limit: 422 invalid_face saying so', async () => {
      const big = await faceGlb(REQUIRED_MORPHS, DEFAULT_FACE_MAX_BYTES);
      const res = await upload(t, big, { name: 'X', gender: 'f' });
      assertCoded(res, 422, 'invalid_face');
      assert.match(res.body.detail.message, new RegExp(`over the ${DEFAULT_FACE_MAX_BYTES}-byte limit`));
      assert.equal((await t.request('GET', '/healthz')).status, 200);
    });

    it('another content type: 415', async () => {
      assertCoded(await upload(t, '{"name":"x"}', { name: 'X', gender: 'f' }, { type: 'application/json' }), 415, 'unsupported_media_type');
      assertCoded(await upload(t, 'abc', { name: 'X', gender: 'f' }, { type: 'image/png' }), 415, 'unsupported_media_type');
    });

    it('nothing invalid was stored', async () => {
      const names = (await listed(t)).filter((f) => f.source === 'custom').map((f) => f.name);
      assert.ok(!names.includes('X'), names.join(', '));
    });
  });

  describe('using it', () => {
    const faceId = 'gus-face';
    before(async () => {
      const res = await upload(t, glb, { name: 'Gus', gender: 'm', avatar_id: faceId });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    });

    it("an agent takes it with a man's voice, or its default voice; a woman's voice is 422 voice_face_mismatch", async () => {
      const agent = await t.request('POST', '/v1/agent/create', { body: { name: 'Gus agent', avatar_id: faceId, voice_id: 'am_michael' } });
      assert.equal(agent.status, 200, JSON.stringify(agent.body));
      assert.equal(agent.body.avatar_id, faceId);
      const byDefault = await t.request('POST', '/v1/agent/create', { body: { name: 'Gus default', avatar_id: faceId } });
      assert.equal(byDefault.status, 200, JSON.stringify(byDefault.body));
      assert.equal(byDefault.body.voice_id, 'am_adam');
      assertCoded(
        await t.request('POST', '/v1/agent/create', { body: { name: 'Mismatch', avatar_id: faceId, voice_id: 'af_bella' } }),
        422,
        'voice_face_mismatch',
      );
      const other = await makeAgent(t, {});
      assertCoded(await t.request('PATCH', `/v1/agent/${other}`, { body: { avatar_id: faceId } }), 422, 'voice_face_mismatch');
      const patched = await t.request('PATCH', `/v1/agent/${other}`, { body: { avatar_id: faceId, voice_id: 'bm_lewis' } });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
    });

    it('a session starts with it, and the player is told its model_url', async () => {
      const agentId = await makeAgent(t, { avatar_id: faceId, voice_id: 'am_eric' });
      const s = await started(t, { agent_id: agentId });
      // The player page shows the face's still picture, rendered at upload, from its first frame.
      const html = await (await fetch(s.player_url)).text();
      const stillUrl = /<img id="still" src="([^"]+)"/.exec(html)?.[1];
      const modelUrl = (await listed(t)).find((f) => f.avatar_id === faceId).model_url as string;
      assert.ok(stillUrl?.startsWith(modelUrl.replace(/\.glb$/, '.still.png')), 'the page carries the still rendered at upload, beside the face file');
      const still = await fetch(t.url + stillUrl);
      assert.equal(still.status, 200);
      assert.equal(still.headers.get('content-type'), 'image/png');
      assert.equal(Buffer.from(await still.arrayBuffer()).toString('latin1', 1, 4), 'PNG');
      const player = await openPlayer(s.player_url);
      try {
        const hello = player.messages.find((m) => m.type === 'hello');
        assert.equal(hello.face?.avatar_id, faceId);
        assert.equal(hello.face?.model_url, modelUrl);
        assert.equal(hello.face?.gender, 'm');
      } finally {
        player.close();
      }
      await stopSession(t, s.session_id);
      // As a session-only face too; the gender rule holds there as well.
      const plain = await makeAgent(t, {});
      assertCoded(await startSession(t, { agent_id: plain, avatar_id: faceId }), 422, 'voice_face_mismatch');
      const override = await started(t, { agent_id: plain, avatar_id: faceId, voice_id: 'am_liam' });
      await stopSession(t, override.session_id);
    });

    it('another account neither sees nor uses it (422 unknown_avatar) nor deletes it (404)', async () => {
      const other = await t.account('paid');
      const theirs = await listed(t, other.key);
      assert.ok(!theirs.some((f) => f.avatar_id === faceId), 'not listed for another account');
      assert.ok(theirs.some((f) => f.avatar_id === 'face01'));
      assertCoded(
        await t.request('POST', '/v1/agent/create', { key: other.key, body: { name: 'Thief', avatar_id: faceId, voice_id: 'am_adam' } }),
        422,
        'unknown_avatar',
      );
      const agentId = await makeAgent(t, {}, other.key);
      assertCoded(
        await t.request('PATCH', `/v1/agent/${agentId}`, { key: other.key, body: { avatar_id: faceId, voice_id: 'am_adam' } }),
        422,
        'unknown_avatar',
      );
      assertCoded(await startSession(t, { agent_id: agentId, avatar_id: faceId, voice_id: 'am_adam' }, other.key), 422, 'unknown_avatar');
      assertCoded(await t.request('DELETE', `/v1/avatars/${faceId}?confirm=true`, { key: other.key }), 404, 'avatar_not_found');
      assert.ok(
        (await listed(t)).some((f) => f.avatar_id === faceId),
        'still there for its owner',
      );
    });

    it('the free plan may use its own face with a kokoro voice', async () => {
      const free = await t.account('free');
      const res = await upload(t, glb, { name: 'Free', gender: 'f' }, { key: free.key });
      assert.equal(res.status, 201);
      const agent = await t.request('POST', '/v1/agent/create', { key: free.key, body: { name: 'Free agent', avatar_id: res.body.avatar_id } });
      assert.equal(agent.status, 200, JSON.stringify(agent.body));
      assert.equal(agent.body.voice_id, 'af_alloy');
    });
  });

  describe('deleting', () => {
    it('built-in faces: 404; confirm=true required; in use by an agent: 409 avatar_in_use; then 204 and gone', async () => {
      assertCoded(await t.request('DELETE', '/v1/avatars/face01?confirm=true'), 404, 'avatar_not_found');
      assertCoded(await t.request('DELETE', '/v1/avatars/nothing-here?confirm=true'), 404, 'avatar_not_found');
      const res = await upload(t, glb, { name: 'Short-lived', gender: 'f', avatar_id: 'short-lived' });
      assert.equal(res.status, 201);
      assert.ok(await customFaceGlb(tokenOf(res.body)));
      assertCoded(await t.request('DELETE', '/v1/avatars/short-lived'), 400, 'confirmation_required');
      const noDelete = await t.keyFor(t.accountId, ['read', 'setup']);
      assertCoded(await t.request('DELETE', '/v1/avatars/short-lived?confirm=true', { key: noDelete }), 403, 'missing_permission');

      const agentId = await makeAgent(t, { avatar_id: 'short-lived' });
      const busy = await t.request('DELETE', '/v1/avatars/short-lived?confirm=true');
      assertCoded(busy, 409, 'avatar_in_use');
      assert.match(busy.body.detail.message, new RegExp(String(agentId)));
      assert.equal((await t.request('PATCH', `/v1/agent/${agentId}`, { body: { avatar_id: 'face01', voice_id: 'af_bella' } })).status, 200);

      const gone = await t.request('DELETE', '/v1/avatars/short-lived?confirm=true');
      assert.equal(gone.status, 204, JSON.stringify(gone.body));
      assert.ok(!(await listed(t)).some((f) => f.avatar_id === 'short-lived'));
      assert.equal(await customFaceGlb(tokenOf(res.body)), undefined);
      assertCoded(await t.request('POST', '/v1/agent/create', { body: { name: 'Late', avatar_id: 'short-lived' } }), 422, 'unknown_avatar');
      assertCoded(await t.request('DELETE', '/v1/avatars/short-lived?confirm=true'), 404, 'avatar_not_found');
      // The id is free again.
      assert.equal((await upload(t, glb, { name: 'Again', gender: 'f', avatar_id: 'short-lived' })).status, 201);
    });
  });

  describe('the in-memory index', () => {
    it('is loaded from the database at start (what a restarted server sees)', async () => {
      const catalog = new StudioCatalog();
      const faces = new CustomFaces(t.database.db, catalog);
      assert.equal(catalog.face('ada-face'), undefined);
      await faces.load();
      const face = catalog.face('ada-face', t.accountId);
      assert.equal(face?.name, 'Ada');
      assert.equal(face?.gender, 'f');
      assert.equal(catalog.face('ada-face', t.accountId + 1000), undefined, 'scoped to its account');
      assert.deepEqual(
        catalog.listFaces(t.accountId).map((f) => f.avatar_id),
        (await listed(t)).map((f) => f.avatar_id),
      );
    });

    it('an operator face (no account) is seen and usable by every account', async () => {
      const face = await t.context.customFaces.add({ glb, name: 'House face', gender: 'm', avatarId: 'house-face', accountId: null });
      assert.equal(face.source, 'custom');
      const other = await t.account('paid');
      assert.ok((await listed(t, other.key)).some((f) => f.avatar_id === 'house-face'));
      assert.ok((await listed(t)).some((f) => f.avatar_id === 'house-face'));
      const agent = await t.request('POST', '/v1/agent/create', { key: other.key, body: { name: 'House', avatar_id: 'house-face' } });
      assert.equal(agent.status, 200, JSON.stringify(agent.body));
      assertCoded(await t.request('DELETE', '/v1/avatars/house-face?confirm=true', { key: other.key }), 404, 'avatar_not_found');
      // Every account sees an operator face, so its id is refused to an upload (this reveals nothing).
      assertCoded(await upload(t, glb, { name: 'Mine', gender: 'f', avatar_id: 'house-face' }, { key: other.key }), 409, 'avatar_exists');
    });
  });

  if (engine === 'postgres') {
    describe('two nodes on one PostgreSQL', () => {
      it('a face added on one node is usable on the other at once and listed there; a delete shows there too', async () => {
        const database = await openDatabase({ databaseUrl: t.database.connectionString });
        const { app } = await buildApp({
          config: loadConfig({ RATE_LIMIT_PER_SECOND: '100000', MODELS_DOWNLOAD: '0', DATA_DIR: t.context.config.dataDir } as NodeJS.ProcessEnv),
          database,
          logger: false,
        });
        try {
          await app.listen({ port: 0, host: '127.0.0.1' });
          const nodeB = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
          const onB = async (method: string, path: string, body?: unknown) => {
            const res = await fetch(nodeB + path, {
              method,
              headers: { authorization: `Bearer ${t.key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
              body: body ? JSON.stringify(body) : undefined,
            });
            const text = await res.text();
            return { status: res.status, body: text ? JSON.parse(text) : null };
          };
          assert.equal((await upload(t, glb, { name: 'Roamer', gender: 'f', avatar_id: 'roamer' })).status, 201);
          const agent = await onB('POST', '/v1/agent/create', { name: 'On B', avatar_id: 'roamer' });
          assert.equal(agent.status, 200, JSON.stringify(agent.body));
          assert.equal(agent.body.voice_id, 'af_alloy');
          await sleep(1100);
          assert.ok(
            (await onB('GET', '/v1/avatars')).body.some((f: any) => f.avatar_id === 'roamer'),
            'listed on node B',
          );
          assert.equal((await onB('DELETE', `/v1/agent/${agent.body.id}?confirm=true`)).status, 204);
          assert.equal((await t.request('DELETE', '/v1/avatars/roamer?confirm=true')).status, 204);
          await sleep(1100);
          assert.ok(!(await onB('GET', '/v1/avatars')).body.some((f: any) => f.avatar_id === 'roamer'), 'gone on node B');
        } finally {
          await app.close();
          await database.close();
        }
      });
    });
  }
});

/**
 * The agent rules and limits: field ranges, catalogs, plan limits, the voice/face gender rule and
 * the free plan's one-agent limit under concurrency.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { assertCoded, validationItems } from './helpers.js';

function assertValidationAt(res: { status: number; body: any }, loc: Array<string | number>): void {
  const items = validationItems(res);
  assert.ok(
    items.some((i) => JSON.stringify(i.loc) === JSON.stringify(loc)),
    `no item at ${JSON.stringify(loc)}: ${JSON.stringify(items)}`,
  );
}

forEachEngine('agent rules and limits', (engine) => {
  let t: TestApp;
  let agentId: number;
  /** Agents the main (paid) account holds; creates that fail must not add to it. */
  const count = async (key?: string) => (await t.request('GET', '/v1/agent/has-agents', { key })).body.count as number;
  const create = (body: unknown, key?: string) => t.request('POST', '/v1/agent/create', { body, key });
  const patch = (id: number, body: unknown, key?: string) => t.request('PATCH', `/v1/agent/${id}`, { body, key });

  before(async () => {
    t = await startTestApp(engine);
    agentId = (await create({ name: 'Rules' })).body.id;
  });
  after(() => t.close());

  describe('name', () => {
    it('is required on create, may be omitted on PATCH, and may not be blanked', async () => {
      assertValidationAt(await create({ avatar_id: 'face01' }), ['body', 'name']);
      assert.equal((await patch(agentId, { concurrency_limit: 2 })).status, 200);
      assertValidationAt(await patch(agentId, { name: '' }), ['body', 'name']);
      assertValidationAt(await patch(agentId, { name: null }), ['body', 'name']);
    });
  });

  describe('languages', () => {
    for (const good of [{ main: 'en' }, { main: 'de', also: ['en', 'fr', 'zh'] }, { main: 'pt', also: [] }]) {
      it(`accepts ${JSON.stringify(good)}`, async () => {
        const res = await patch(agentId, { languages: good });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(res.body.languages, { also: [], ...good });
      });
    }
    const bad: Array<[unknown, Array<string | number>]> = [
      [{ main: 'english' }, ['body', 'languages', 'main']],
      [{ main: 'en-US' }, ['body', 'languages', 'main']],
      [{ main: 'EN' }, ['body', 'languages', 'main']],
      [{ main: 'xx' }, ['body', 'languages', 'main']],
      [{ main: 'eng' }, ['body', 'languages', 'main']],
      [{ also: ['en'] }, ['body', 'languages', 'main']],
      [{ main: 'en', also: ['fr', 'qq'] }, ['body', 'languages', 'also', 1]],
      [{ main: 'en', also: 'fr' }, ['body', 'languages', 'also']],
    ];
    for (const [value, loc] of bad) {
      it(`refuses ${JSON.stringify(value)} on create and PATCH`, async () => {
        const before = await count();
        assertValidationAt(await create({ name: 'L', languages: value }), loc);
        assert.equal(await count(), before);
        assertValidationAt(await patch(agentId, { languages: value }), loc);
      });
    }
  });

  describe('studio', () => {
    it('every catalog backdrop and null are accepted', async () => {
      const backdrops = (await t.request('GET', '/v1/backdrops')).body as Array<{ backdrop_id: string }>;
      for (const { backdrop_id } of backdrops) {
        const res = await patch(agentId, { studio: { backdrop: backdrop_id } });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(res.body.studio.backdrop, backdrop_id);
      }
      assert.equal((await patch(agentId, { studio: { backdrop: null } })).body.studio.backdrop, null);
    });

    it('a backdrop not in the catalog answers 422 invalid_look on create and PATCH, changing nothing', async () => {
      const before = await count();
      assertCoded(await create({ name: 'S', studio: { backdrop: 'moon_base' } }), 422, 'invalid_look');
      assert.equal(await count(), before);
      const saved = (await t.request('GET', `/v1/agent/${agentId}`)).body.studio;
      assertCoded(await patch(agentId, { studio: { backdrop: 'Studio_Grey' } }), 422, 'invalid_look');
      assertCoded(await patch(agentId, { studio: { backdrop: 'moon_base', face_light: 0.9 } }), 422, 'invalid_look');
      assert.deepEqual((await t.request('GET', `/v1/agent/${agentId}`)).body.studio, saved);
    });

    it('cameras: any non-empty subset of far, mid, close is accepted', async () => {
      for (const cameras of [['far'], ['mid'], ['close'], ['close', 'far'], ['far', 'mid', 'close']]) {
        const res = await patch(agentId, { studio: { cameras } });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(res.body.studio.cameras, cameras);
      }
    });

    it('a camera that does not exist answers 422 invalid_look (contract: Agents)', async () => {
      const before = await count();
      assertCoded(await create({ name: 'S', studio: { cameras: ['far', 'drone'] } }), 422, 'invalid_look');
      assert.equal(await count(), before);
      assertCoded(await patch(agentId, { studio: { cameras: ['wide'] } }), 422, 'invalid_look');
      assertCoded(await patch(agentId, { studio: { cameras: ['auto'] } }), 422, 'invalid_look');
    });

    it('malformed cameras (not a list, repeated, empty) answer 422', async () => {
      assert.equal((await patch(agentId, { studio: { cameras: 'far' } })).status, 422);
      assert.equal((await patch(agentId, { studio: { cameras: ['far', 'far'] } })).status, 422);
      assert.equal((await patch(agentId, { studio: { cameras: [] } })).status, 422);
    });

    for (const value of [0.5, 1.5, 1, 0.75]) {
      it(`face_light ${value} is accepted`, async () => {
        const res = await patch(agentId, { studio: { face_light: value } });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(res.body.studio.face_light, value);
        const created = await create({ name: 'FL', studio: { face_light: value } });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        assert.equal(created.body.studio.face_light, value);
        await t.request('DELETE', `/v1/agent/${created.body.id}?confirm=true`);
      });
    }
    for (const value of [0.49, 1.51, 0, -1, 2, '1.0', null]) {
      it(`face_light ${JSON.stringify(value)} is refused at loc [body, studio, face_light]`, async () => {
        const before = await count();
        assertValidationAt(await create({ name: 'FL', studio: { face_light: value } }), ['body', 'studio', 'face_light']);
        assert.equal(await count(), before);
        assertValidationAt(await patch(agentId, { studio: { face_light: value } }), ['body', 'studio', 'face_light']);
      });
    }
  });

  describe('welcome_message', () => {
    it('300 characters are accepted, 301 refused', async () => {
      const ok = await patch(agentId, { welcome_message: 'w'.repeat(300) });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.welcome_message.length, 300);
      const res = await patch(agentId, { welcome_message: 'x'.repeat(301) });
      const item = validationItems(res).find((i) => JSON.stringify(i.loc) === '["body","welcome_message"]');
      assert.ok(item);
      assert.equal(item!.type, 'string_too_long');
      assert.equal((await t.request('GET', `/v1/agent/${agentId}`)).body.welcome_message, 'w'.repeat(300));
    });

    it('counts characters, not bytes: 300 multi-byte characters are accepted', async () => {
      const res = await patch(agentId, { welcome_message: 'é'.repeat(300) });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    });
  });

  describe('plans', () => {
    it('free plan: the second agent answers 402 agent_limit', async () => {
      const free = await t.account('free');
      assert.equal((await create({ name: 'First' }, free.key)).status, 200);
      assertCoded(await create({ name: 'Second' }, free.key), 402, 'agent_limit');
      assert.equal(await count(free.key), 1);
    });

    it('free plan: a premium tts_primary answers 402 paid_feature, on create and PATCH', async () => {
      const free = await t.account('free');
      for (const provider of ['inworld', 'inworld-flash', 'elevenlabs', 'elevenlabs-flash', 'cartesia']) {
        assertCoded(await create({ name: 'P', tts_primary: provider }, free.key), 402, 'paid_feature');
      }
      assertCoded(await create({ name: 'P', tts_primary: 'elevenlabs', voice_id: '21m00Tcm4TlvDq8ikWAM' }, free.key), 402, 'paid_feature');
      assert.equal(await count(free.key), 0);
      const agent = (await create({ name: 'Kokoro' }, free.key)).body;
      assertCoded(await patch(agent.id, { tts_primary: 'inworld', voice_id: 'Ashley' }, free.key), 402, 'paid_feature');
      assertCoded(await patch(agent.id, { tts_primary: 'cartesia' }, free.key), 402, 'paid_feature');
      const saved = (await t.request('GET', `/v1/agent/${agent.id}`, { key: free.key })).body;
      assert.equal(saved.tts_primary, 'kokoro');
      assert.equal(saved.voice_id, 'af_bella');
    });

    it('free plan: a premium voice answers 402 paid_feature even without naming its provider', async () => {
      const free = await t.account('free');
      assertCoded(await create({ name: 'P', voice_id: 'Ashley' }, free.key), 402, 'paid_feature');
      assertCoded(await create({ name: 'P', voice_id: '21m00Tcm4TlvDq8ikWAM' }, free.key), 402, 'paid_feature');
      assert.equal(await count(free.key), 0);
      const agent = (await create({ name: 'Kokoro' }, free.key)).body;
      assertCoded(await patch(agent.id, { voice_id: 'Olivia' }, free.key), 402, 'paid_feature');
    });

    it('free plan: kokoro voices of any language are fine', async () => {
      const free = await t.account('free');
      const res = await create({ name: 'K', voice_id: 'bf_emma', languages: { main: 'en', also: ['fr'] } }, free.key);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.voice_id, 'bf_emma');
    });

    it('paid plan: premium providers and voices are accepted', async () => {
      const res = await create({ name: 'Premium', tts_primary: 'elevenlabs', voice_id: '21m00Tcm4TlvDq8ikWAM' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.tts_primary, 'elevenlabs');
      assert.equal(res.body.voice_id, '21m00Tcm4TlvDq8ikWAM');
      const switched = await patch(res.body.id, { tts_primary: 'inworld', voice_id: 'Ashley' });
      assert.equal(switched.status, 200, JSON.stringify(switched.body));
      assert.equal(switched.body.tts_primary, 'inworld');
      const male = await patch(res.body.id, { avatar_id: 'face02', voice_id: 'Dennis' });
      assert.equal(male.status, 200, JSON.stringify(male.body));
      await t.request('DELETE', `/v1/agent/${res.body.id}?confirm=true`);
    });

    it('paid plan may hold several agents', async () => {
      const paid = await t.account('paid');
      for (const name of ['a', 'b', 'c']) assert.equal((await create({ name }, paid.key)).status, 200);
      assert.equal(await count(paid.key), 3);
    });
  });

  describe('voice and face', () => {
    it("a woman's face with a man's voice (and the reverse) answers 422 voice_face_mismatch on create", async () => {
      const before = await count();
      const mismatch = await create({ name: 'M', avatar_id: 'face01', voice_id: 'am_adam' });
      assertCoded(mismatch, 422, 'voice_face_mismatch');
      assert.match(mismatch.body.detail.message, /af_bella/, 'the message suggests a voice that suits the face');
      assertCoded(await create({ name: 'M', avatar_id: 'face02', voice_id: 'af_bella' }), 422, 'voice_face_mismatch');
      // The default voice af_bella does not suit a man's face named with that voice explicitly…
      assertCoded(await create({ name: 'M', avatar_id: 'face06', voice_id: 'af_heart' }), 422, 'voice_face_mismatch');
      // …and a man's voice alone does not suit the default face face01.
      assertCoded(await create({ name: 'M', voice_id: 'am_michael' }), 422, 'voice_face_mismatch');
      assert.equal(await count(), before);
    });

    it('a PATCH that changes only the face answers 422 voice_face_mismatch and changes nothing', async () => {
      const agent = (await create({ name: 'FaceSwap' })).body;
      assert.equal(agent.voice_id, 'af_bella');
      const res = await patch(agent.id, { avatar_id: 'face02' });
      assertCoded(res, 422, 'voice_face_mismatch');
      assertCoded(await patch(agent.id, { voice_id: 'am_eric' }), 422, 'voice_face_mismatch');
      const saved = (await t.request('GET', `/v1/agent/${agent.id}`)).body;
      assert.deepEqual([saved.avatar_id, saved.voice_id], ['face01', 'af_bella']);
      // Another woman's face keeps the voice; face and voice together pass.
      assert.equal((await patch(agent.id, { avatar_id: 'face03' })).status, 200);
      assert.equal((await patch(agent.id, { avatar_id: 'face02', voice_id: 'am_eric' })).status, 200);
      await t.request('DELETE', `/v1/agent/${agent.id}?confirm=true`);
    });

    it('an unknown avatar answers 422 unknown_avatar on create and PATCH', async () => {
      const before = await count();
      assertCoded(await create({ name: 'U', avatar_id: 'face99' }), 422, 'unknown_avatar');
      assertCoded(await create({ name: 'U', avatar_id: 'FACE01' }), 422, 'unknown_avatar');
      assert.equal(await count(), before);
      assertCoded(await patch(agentId, { avatar_id: 'nobody' }), 422, 'unknown_avatar');
    });

    it('an unknown voice answers 422 on create and PATCH', async () => {
      const before = await count();
      const res = await create({ name: 'V', voice_id: 'af_nobody' });
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.equal(await count(), before);
      assert.equal((await patch(agentId, { voice_id: 'xx_unknown' })).status, 422);
      // A kokoro id under a premium provider is unknown there.
      assert.equal((await create({ name: 'V', tts_primary: 'cartesia', voice_id: 'af_bella' })).status, 422);
    });

    it('an unknown tts_primary is a validation error', async () => {
      assertValidationAt(await create({ name: 'T', tts_primary: 'espeak' }), ['body', 'tts_primary']);
    });
  });

  describe('concurrency', () => {
    it('10 simultaneous creates on a free account create exactly one agent', async () => {
      const free = await t.account('free');
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => create({ name: `Race ${i}` }, free.key)));
      const statuses = results.map((r) => r.status).sort();
      assert.deepEqual(statuses, [200, ...Array(9).fill(402)], JSON.stringify(results.map((r) => [r.status, r.body?.detail?.code])));
      for (const r of results.filter((x) => x.status === 402)) assert.equal(r.body.detail.code, 'agent_limit');
      const list = (await t.request('GET', '/v1/agent/list', { key: free.key })).body;
      assert.equal(list.length, 1);
      assert.equal(list[0].id, results.find((r) => r.status === 200)!.body.id);
      assert.equal((await t.request('GET', '/v1/agent/has-agents', { key: free.key })).body.default_agent_id, list[0].id);
    });

    it('10 simultaneous creates on a paid account create ten distinct agents with one default', async () => {
      const paid = await t.account('paid');
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => create({ name: `Burst ${i}` }, paid.key)));
      assert.deepEqual(
        results.map((r) => r.status),
        Array(10).fill(200),
      );
      assert.equal(new Set(results.map((r) => r.body.id)).size, 10);
      const list = (await t.request('GET', '/v1/agent/list', { key: paid.key })).body as any[];
      assert.equal(list.length, 10);
      assert.equal(list.filter((a) => a.is_default).length, 1);
    });
  });
});

/**
 * Every route of the interface's Agents table, through the real server on both engines.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';

const AGENT_FIELDS = [
  'id',
  'name',
  'avatar_id',
  'voice_id',
  'tts_primary',
  'languages',
  'studio',
  'website_url',
  'system_prompt',
  'concurrency_limit',
  'welcome_message',
  'fillers_enabled',
  'status',
];

forEachEngine('agents routes', (engine) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(engine);
  });
  after(() => t.close());

  const create = async (body: Record<string, unknown>, key?: string) => {
    const res = await t.request('POST', '/v1/agent/create', { body, key });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };

  describe('create, get, list, has-agents', () => {
    it('a fresh account has no agents', async () => {
      const account = await t.account('paid');
      const has = await t.request('GET', '/v1/agent/has-agents', { key: account.key });
      assert.equal(has.status, 200);
      assert.equal(has.body.has_agents, false);
      assert.equal(has.body.count, 0);
      assert.equal(has.body.default_agent_id, null);
      assert.deepEqual((await t.request('GET', '/v1/agent/list', { key: account.key })).body, []);
    });

    it('create with only a name applies every default', async () => {
      const account = await t.account('free');
      const agent = await create({ name: 'Ava' }, account.key);
      for (const field of AGENT_FIELDS) assert.ok(field in agent, `answer lacks ${field}`);
      assert.equal(typeof agent.id, 'number');
      assert.ok(Number.isInteger(agent.id));
      assert.equal(agent.name, 'Ava');
      assert.equal(agent.avatar_id, 'face01');
      assert.equal(agent.voice_id, 'af_bella');
      assert.equal(agent.tts_primary, 'kokoro');
      assert.equal(agent.concurrency_limit, 1);
      assert.equal(agent.languages.main, 'en');
      assert.deepEqual(agent.languages.also, []);
      assert.equal(agent.studio.backdrop, 'studio_grey');
      assert.deepEqual(agent.studio.cameras, ['far', 'mid', 'close']);
      assert.equal(agent.studio.face_light, 1);
      assert.equal(agent.website_url, null);
      assert.equal(agent.system_prompt, null);
      assert.equal(agent.welcome_message, null);
      assert.equal(agent.fillers_enabled, false);
      assert.equal(typeof agent.status, 'string');
      assert.equal(agent.is_default, true, 'the first agent becomes the default');

      const got = await t.request('GET', `/v1/agent/${agent.id}`, { key: account.key });
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, agent);
      const list = await t.request('GET', '/v1/agent/list', { key: account.key });
      assert.deepEqual(list.body, [agent]);
      const has = await t.request('GET', '/v1/agent/has-agents', { key: account.key });
      assert.deepEqual(has.body, { has_agents: true, count: 1, default_agent_id: agent.id });
    });

    it('create with every field stores every field', async () => {
      const body = {
        name: 'Full',
        avatar_id: 'face02',
        voice_id: 'am_adam',
        tts_primary: 'kokoro',
        languages: { main: 'de', also: ['en', 'fr'] },
        studio: { backdrop: 'night_blue', cameras: ['close'], face_light: 1.2 },
        website_url: 'https://example.com/',
        system_prompt: 'Be brief.',
        concurrency_limit: 5,
      };
      const agent = await create(body);
      for (const [key, value] of Object.entries(body)) assert.deepEqual(agent[key], value, key);
      assert.deepEqual((await t.request('GET', `/v1/agent/${agent.id}`)).body, agent);
    });

    it('a partial studio on create is laid over the studio defaults; backdrop null means plain', async () => {
      const agent = await create({ name: 'Plain', studio: { backdrop: null } });
      assert.deepEqual(agent.studio, { backdrop: null, cameras: ['far', 'mid', 'close'], face_light: 1 });
      const lit = await create({ name: 'Lit', studio: { face_light: 0.8 } });
      assert.deepEqual(lit.studio, { backdrop: 'studio_grey', cameras: ['far', 'mid', 'close'], face_light: 0.8 });
    });

    it('a chosen face without a voice speaks with a voice that suits it', async () => {
      const agent = await create({ name: 'Dan', avatar_id: 'face02' });
      const avatars = (await t.request('GET', '/v1/avatars')).body as any[];
      const face = avatars.find((a) => a.avatar_id === 'face02');
      const voices = (await t.request('GET', '/v1/voices/kokoro')).body;
      assert.equal(agent.voice_id, face.default_voice_id);
      if (Array.isArray(voices)) assert.equal(voices.find((v: any) => v.voice_id === agent.voice_id)?.gender, 'm');
    });

    it('list answers the account agents only, ordered, each with is_default', async () => {
      const account = await t.account('paid');
      const a = await create({ name: 'One' }, account.key);
      const b = await create({ name: 'Two' }, account.key);
      const list = (await t.request('GET', '/v1/agent/list', { key: account.key })).body;
      assert.deepEqual(
        list.map((x: any) => x.id).sort((x: number, y: number) => x - y),
        [a.id, b.id],
      );
      assert.deepEqual(
        list.map((x: any) => [x.id, x.is_default]).sort(),
        [
          [a.id, true],
          [b.id, false],
        ].sort(),
      );
      assert.deepEqual(
        list.find((x: any) => x.id === b.id),
        b,
      );
      const has = (await t.request('GET', '/v1/agent/has-agents', { key: account.key })).body;
      assert.deepEqual(has, { has_agents: true, count: 2, default_agent_id: a.id });
    });

    it('a missing agent answers 404 agent_not_found', async () => {
      const res = await t.request('GET', '/v1/agent/999999');
      assert.equal(res.status, 404);
      assert.equal(res.body.detail.code, 'agent_not_found');
    });
  });

  describe('PATCH', () => {
    let agent: any;
    before(async () => {
      agent = await create({
        name: 'Patchable',
        studio: { backdrop: 'sunset', cameras: ['far', 'close'], face_light: 1.1 },
        languages: { main: 'en', also: ['es'] },
        website_url: 'https://a.example',
      });
    });

    it('changes only the fields sent', async () => {
      const res = await t.request('PATCH', `/v1/agent/${agent.id}`, { body: { name: 'Patched' } });
      assert.equal(res.status, 200);
      const expected = { ...agent, name: 'Patched', updated_at: res.body.updated_at };
      assert.deepEqual(res.body, expected);
      assert.ok(Date.parse(res.body.updated_at) >= Date.parse(agent.updated_at));
      assert.deepEqual((await t.request('GET', `/v1/agent/${agent.id}`)).body, res.body);
      agent = res.body;
    });

    it('an empty PATCH changes nothing', async () => {
      const res = await t.request('PATCH', `/v1/agent/${agent.id}`, { body: {} });
      assert.equal(res.status, 200);
      assert.deepEqual({ ...res.body, updated_at: agent.updated_at }, agent);
    });

    it('studio PATCH with only face_light keeps backdrop and cameras', async () => {
      const res = await t.request('PATCH', `/v1/agent/${agent.id}`, { body: { studio: { face_light: 0.7 } } });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.studio, { backdrop: 'sunset', cameras: ['far', 'close'], face_light: 0.7 });
      assert.deepEqual((await t.request('GET', `/v1/agent/${agent.id}`)).body.studio, { backdrop: 'sunset', cameras: ['far', 'close'], face_light: 0.7 });
    });

    it('studio PATCH with only cameras keeps backdrop and face_light; backdrop null clears to plain', async () => {
      let res = await t.request('PATCH', `/v1/agent/${agent.id}`, { body: { studio: { cameras: ['mid'] } } });
      assert.deepEqual(res.body.studio, { backdrop: 'sunset', cameras: ['mid'], face_light: 0.7 });
      res = await t.request('PATCH', `/v1/agent/${agent.id}`, { body: { studio: { backdrop: null } } });
      assert.deepEqual(res.body.studio, { backdrop: null, cameras: ['mid'], face_light: 0.7 });
      agent = res.body;
    });

    it('update-only fields are accepted on PATCH and stored', async () => {
      const res = await t.request('PATCH', `/v1/agent/${agent.id}`, { body: { welcome_message: 'Hi there!', fillers_enabled: true, status: 'inactive' } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.welcome_message, 'Hi there!');
      assert.equal(res.body.fillers_enabled, true);
      assert.equal(res.body.status, 'inactive');
      assert.equal(res.body.name, 'Patched');
      const back = await t.request('PATCH', `/v1/agent/${agent.id}`, { body: { status: 'active' } });
      assert.equal(back.body.status, 'active');
      assert.equal(back.body.welcome_message, 'Hi there!');
      agent = back.body;
    });

    it('languages are replaced as a whole; nullable text fields can be cleared', async () => {
      const res = await t.request('PATCH', `/v1/agent/${agent.id}`, { body: { languages: { main: 'fr' }, website_url: null, system_prompt: 'Only facts.' } });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.languages, { main: 'fr', also: [] });
      assert.equal(res.body.website_url, null);
      assert.equal(res.body.system_prompt, 'Only facts.');
    });

    it('face and voice changed together to a matching pair', async () => {
      const res = await t.request('PATCH', `/v1/agent/${agent.id}`, { body: { avatar_id: 'face04', voice_id: 'am_michael' } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.avatar_id, 'face04');
      assert.equal(res.body.voice_id, 'am_michael');
    });
  });

  describe('delete, default agent', () => {
    it('DELETE answers 204 with no body, then 404; the default moves to the oldest remaining agent', async () => {
      const account = await t.account('paid');
      const a = await create({ name: 'A' }, account.key);
      const b = await create({ name: 'B' }, account.key);
      const c = await create({ name: 'C' }, account.key);
      assert.equal(a.is_default, true);
      const res = await t.request('DELETE', `/v1/agent/${a.id}?confirm=true`, { key: account.key });
      assert.equal(res.status, 204);
      assert.equal(res.body, null);
      const gone = await t.request('GET', `/v1/agent/${a.id}`, { key: account.key });
      assert.equal(gone.status, 404);
      assert.equal(gone.body.detail.code, 'agent_not_found');
      assert.equal((await t.request('DELETE', `/v1/agent/${a.id}?confirm=true`, { key: account.key })).status, 404);
      const has = (await t.request('GET', '/v1/agent/has-agents', { key: account.key })).body;
      assert.deepEqual(has, { has_agents: true, count: 2, default_agent_id: b.id });
      assert.equal((await t.request('GET', `/v1/agent/${b.id}`, { key: account.key })).body.is_default, true);

      // Deleting a non-default agent leaves the default alone.
      assert.equal((await t.request('DELETE', `/v1/agent/${c.id}?confirm=true`, { key: account.key })).status, 204);
      assert.equal((await t.request('GET', '/v1/agent/has-agents', { key: account.key })).body.default_agent_id, b.id);

      // Deleting the last agent leaves no default.
      assert.equal((await t.request('DELETE', `/v1/agent/${b.id}?confirm=true`, { key: account.key })).status, 204);
      assert.deepEqual((await t.request('GET', '/v1/agent/has-agents', { key: account.key })).body, { has_agents: false, count: 0, default_agent_id: null });
    });

    it('set-default flips is_default; deleting that default moves it to the oldest remaining', async () => {
      const account = await t.account('paid');
      const a = await create({ name: 'A' }, account.key);
      const b = await create({ name: 'B' }, account.key);
      const c = await create({ name: 'C' }, account.key);
      const res = await t.request('POST', `/v1/agent/${c.id}/set-default`, { key: account.key });
      assert.equal(res.status, 200);
      assert.equal(res.body.id, c.id);
      assert.equal(res.body.is_default, true);
      const flags = Object.fromEntries(((await t.request('GET', '/v1/agent/list', { key: account.key })).body as any[]).map((x) => [x.id, x.is_default]));
      assert.deepEqual(flags, { [a.id]: false, [b.id]: false, [c.id]: true });
      assert.equal((await t.request('GET', `/v1/agent/${a.id}`, { key: account.key })).body.is_default, false);
      // Setting it again is harmless.
      assert.equal((await t.request('POST', `/v1/agent/${c.id}/set-default`, { key: account.key })).body.is_default, true);

      assert.equal((await t.request('DELETE', `/v1/agent/${c.id}?confirm=true`, { key: account.key })).status, 204);
      assert.equal((await t.request('GET', '/v1/agent/has-agents', { key: account.key })).body.default_agent_id, a.id);
    });

    it('a free account may create again after deleting its one agent', async () => {
      const account = await t.account('free');
      const a = await create({ name: 'Only' }, account.key);
      assert.equal((await t.request('DELETE', `/v1/agent/${a.id}?confirm=true`, { key: account.key })).status, 204);
      const b = await create({ name: 'Again' }, account.key);
      assert.equal(b.is_default, true);
    });
  });

  describe('duplicate', () => {
    it('copies settings under a new id with its own embed key', async () => {
      const source = await create({
        name: 'Original',
        avatar_id: 'face03',
        voice_id: 'af_heart',
        languages: { main: 'es', also: ['en'] },
        studio: { backdrop: 'mint', cameras: ['mid', 'close'], face_light: 1.3 },
        website_url: 'https://shop.example',
        system_prompt: 'Sell.',
        concurrency_limit: 3,
      });
      await t.request('PATCH', `/v1/agent/${source.id}`, { body: { welcome_message: 'Hola', fillers_enabled: true } });
      await t.request('PATCH', `/v1/agent/${source.id}/embed`, { body: { button_text: 'Chat', primary_color: '#112233', position: 'bottom-left' } });
      await t.request('PATCH', `/v1/agent/${source.id}/visitor-values`, { body: { fields: [{ name: 'plan', required: true }] } });
      const sourceEmbed = (await t.request('GET', `/v1/agent/${source.id}/embed`)).body;
      const sourceSecret = (await t.request('GET', `/v1/agent/${source.id}/visitor-values/secret`)).body.secret;

      const res = await t.request('POST', `/v1/agent/${source.id}/duplicate`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const copy = res.body;
      assert.notEqual(copy.id, source.id);
      assert.equal(copy.is_default, false);
      for (const field of ['avatar_id', 'voice_id', 'tts_primary', 'languages', 'studio', 'website_url', 'system_prompt', 'concurrency_limit']) {
        assert.deepEqual(copy[field], source[field], field);
      }
      assert.equal(copy.welcome_message, 'Hola');
      assert.equal(copy.fillers_enabled, true);
      assert.notEqual(copy.name, undefined);
      assert.deepEqual((await t.request('GET', `/v1/agent/${copy.id}`)).body, copy);

      const copyEmbed = (await t.request('GET', `/v1/agent/${copy.id}/embed`)).body;
      assert.notEqual(copyEmbed.embed_key, sourceEmbed.embed_key);
      assert.equal(copyEmbed.agent_id, copy.id);
      for (const field of ['button_text', 'primary_color', 'position', 'allowed_origins', 'width', 'height', 'auto_open']) {
        assert.deepEqual(copyEmbed[field], sourceEmbed[field], field);
      }
      assert.deepEqual((await t.request('GET', `/v1/agent/${copy.id}/visitor-values`)).body.fields, [
        { name: 'plan', description: '', required: true, max_length: 256 },
      ]);
      assert.notEqual((await t.request('GET', `/v1/agent/${copy.id}/visitor-values/secret`)).body.secret, sourceSecret);

      // The source is untouched; changing the copy does not change the source.
      await t.request('PATCH', `/v1/agent/${copy.id}`, { body: { name: 'Copy renamed', studio: { face_light: 0.6 } } });
      const sourceAfter = (await t.request('GET', `/v1/agent/${source.id}`)).body;
      assert.equal(sourceAfter.name, 'Original');
      assert.equal(sourceAfter.studio.face_light, 1.3);
    });

    it('on the free plan, duplicating the one agent answers 402 agent_limit', async () => {
      const account = await t.account('free');
      const a = await create({ name: 'Solo' }, account.key);
      const res = await t.request('POST', `/v1/agent/${a.id}/duplicate`, { key: account.key });
      assert.equal(res.status, 402);
      assert.equal(res.body.detail.code, 'agent_limit');
      assert.equal((await t.request('GET', '/v1/agent/has-agents', { key: account.key })).body.count, 1);
    });
  });

  describe('embed', () => {
    let account: { id: number; key: string };
    let a: any;
    let b: any;
    let c: any;
    before(async () => {
      account = await t.account('paid');
      a = await create({ name: 'EmbedA' }, account.key);
      b = await create({ name: 'EmbedB' }, account.key);
      c = await create({ name: 'EmbedC' }, account.key);
    });

    it('GET answers the config with a public key and snippets that carry it', async () => {
      const res = await t.request('GET', `/v1/agent/${a.id}/embed`, { key: account.key });
      assert.equal(res.status, 200);
      assert.equal(res.body.agent_id, a.id);
      assert.equal(typeof res.body.embed_key, 'string');
      assert.ok(res.body.embed_key.length >= 16);
      assert.ok(res.body.script_snippet.includes(res.body.embed_key));
      assert.ok(res.body.script_snippet.includes(t.url), 'snippet points at PUBLIC_URL');
      assert.equal(typeof res.body.iframe_snippet, 'string');
      const other = (await t.request('GET', `/v1/agent/${b.id}/embed`, { key: account.key })).body;
      assert.notEqual(other.embed_key, res.body.embed_key);
    });

    it('PATCH changes only the fields sent and keeps the key', async () => {
      const before = (await t.request('GET', `/v1/agent/${a.id}/embed`, { key: account.key })).body;
      const res = await t.request('PATCH', `/v1/agent/${a.id}/embed`, {
        key: account.key,
        body: { button_text: 'Ask me', allowed_origins: ['https://www.example.com/', 'http://localhost:3000'], width: 320 },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.button_text, 'Ask me');
      assert.deepEqual(res.body.allowed_origins, ['https://www.example.com', 'http://localhost:3000']);
      assert.equal(res.body.width, 320);
      assert.equal(res.body.height, before.height);
      assert.equal(res.body.position, before.position);
      assert.equal(res.body.embed_key, before.embed_key);
      assert.ok(res.body.script_snippet.includes('Ask me'));
      assert.deepEqual((await t.request('GET', `/v1/agent/${a.id}/embed`, { key: account.key })).body, res.body);
    });

    it('regenerate replaces the key; the old one differs and is gone', async () => {
      const before = (await t.request('GET', `/v1/agent/${a.id}/embed`, { key: account.key })).body;
      const res = await t.request('POST', `/v1/agent/${a.id}/embed/regenerate`, { key: account.key });
      assert.equal(res.status, 200);
      assert.notEqual(res.body.embed_key, before.embed_key);
      assert.ok(res.body.script_snippet.includes(res.body.embed_key));
      assert.ok(!res.body.script_snippet.includes(before.embed_key));
      assert.equal(res.body.button_text, before.button_text, 'settings survive');
      assert.equal((await t.request('GET', `/v1/agent/${a.id}/embed`, { key: account.key })).body.embed_key, res.body.embed_key);
    });

    it("apply-to-all copies the widget settings, not the keys, to the account's other agents only", async () => {
      await t.request('PATCH', `/v1/agent/${a.id}/embed`, {
        key: account.key,
        body: { position: 'inline', primary_color: '#abcdef', auto_open: true, height: 700 },
      });
      const source = (await t.request('GET', `/v1/agent/${a.id}/embed`, { key: account.key })).body;
      const keysBefore = await Promise.all([b, c].map(async (x) => (await t.request('GET', `/v1/agent/${x.id}/embed`, { key: account.key })).body.embed_key));
      const outsider = await create({ name: 'Outsider' });
      const outsiderBefore = (await t.request('GET', `/v1/agent/${outsider.id}/embed`)).body;

      const res = await t.request('POST', `/v1/agent/${a.id}/embed/apply-to-all`, { key: account.key });
      assert.equal(res.status, 200);
      assert.equal(typeof res.body, 'object');
      assert.deepEqual(
        [...res.body.updated_agent_ids].sort((x: number, y: number) => x - y),
        [b.id, c.id],
      );

      for (const [i, agent] of [b, c].entries()) {
        const embed = (await t.request('GET', `/v1/agent/${agent.id}/embed`, { key: account.key })).body;
        for (const field of ['allowed_origins', 'position', 'button_text', 'primary_color', 'auto_open', 'width', 'height']) {
          assert.deepEqual(embed[field], source[field], `${field} of agent ${agent.id}`);
        }
        assert.equal(embed.embed_key, keysBefore[i], 'own key kept');
        assert.notEqual(embed.embed_key, source.embed_key);
      }
      assert.equal((await t.request('GET', `/v1/agent/${a.id}/embed`, { key: account.key })).body.embed_key, source.embed_key);
      const outsiderAfter = (await t.request('GET', `/v1/agent/${outsider.id}/embed`)).body;
      assert.deepEqual(outsiderAfter, outsiderBefore, "another account's agent is untouched");
    });
  });

  describe('preview link', () => {
    it('answers a preview_url on PUBLIC_URL and an expiry a few minutes ahead; the agent is not changed', async () => {
      // An explicit PUBLIC_URL, as an operator sets it: links must be built on it.
      const publicUrl = 'https://avatars.example.com';
      const p = await startTestApp(engine, { PUBLIC_URL: publicUrl });
      try {
        const make = async (name: string) => (await p.request('POST', '/v1/agent/create', { body: { name } })).body;
        const agent = await make('Previewed');
        const beforeCall = Date.now();
        const res = await p.request('POST', `/v1/agent/${agent.id}/preview`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(typeof res.body, 'object');
        assert.equal(typeof res.body.preview_url, 'string');
        assert.ok(res.body.preview_url.startsWith(publicUrl + '/'), res.body.preview_url);
        const expires = Date.parse(res.body.expires_at);
        assert.ok(Number.isFinite(expires), 'expires_at is a timestamp');
        assert.ok(expires > beforeCall + 60_000, 'valid for at least a minute');
        assert.ok(expires < beforeCall + 24 * 3600_000, 'short-lived');
        const other = await make('Previewed 2');
        const otherLink = (await p.request('POST', `/v1/agent/${other.id}/preview`)).body.preview_url;
        assert.notEqual(otherLink, res.body.preview_url, 'each agent has its own link');
        assert.deepEqual((await p.request('GET', `/v1/agent/${agent.id}`)).body, agent);
        const embed = (await p.request('GET', `/v1/agent/${agent.id}/embed`)).body;
        assert.ok(embed.script_snippet.includes(`${publicUrl}/`), 'the embed snippet is on PUBLIC_URL too');
      } finally {
        await p.close();
      }
    });
  });
});

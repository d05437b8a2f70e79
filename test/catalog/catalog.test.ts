/**
 * Catalogs (contract.md "Catalogs") and the OpenAPI document, through the real server.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { BUILTIN_FACES } from '../../src/faces/builtin.js';
import { KOKORO_VOICES } from '../../src/speech/voices/kokoro.js';

const AGENT_PATHS: Array<[string, string]> = [
  ['post', '/v1/agent/create'],
  ['get', '/v1/agent/list'],
  ['get', '/v1/agent/has-agents'],
  ['get', '/v1/agent/{agent_id}'],
  ['patch', '/v1/agent/{agent_id}'],
  ['delete', '/v1/agent/{agent_id}'],
  ['post', '/v1/agent/{agent_id}/duplicate'],
  ['post', '/v1/agent/{agent_id}/set-default'],
  ['get', '/v1/agent/{agent_id}/embed'],
  ['patch', '/v1/agent/{agent_id}/embed'],
  ['post', '/v1/agent/{agent_id}/embed/regenerate'],
  ['post', '/v1/agent/{agent_id}/embed/apply-to-all'],
  ['post', '/v1/agent/{agent_id}/preview'],
  ['get', '/v1/agent/{agent_id}/visitor-values'],
  ['patch', '/v1/agent/{agent_id}/visitor-values'],
  ['get', '/v1/agent/{agent_id}/visitor-values/secret'],
  ['post', '/v1/agent/{agent_id}/visitor-values/secret'],
  ['post', '/v1/agent/{agent_id}/visitor-values/preview'],
];

forEachEngine('catalogs and API documents', (engine) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(engine);
  });
  after(() => t.close());

  describe('GET /v1/avatars', () => {
    it('lists at least eight faces of both genders, each with avatar_id, name, gender, model_url', async () => {
      const res = await t.request('GET', '/v1/avatars');
      assert.equal(res.status, 200);
      assert.ok(Array.isArray(res.body));
      assert.ok(res.body.length >= 8, `only ${res.body.length} faces`);
      const ids = new Set<string>();
      for (const face of res.body) {
        assert.equal(typeof face.avatar_id, 'string');
        assert.ok(face.avatar_id.length > 0);
        assert.equal(typeof face.name, 'string');
        assert.ok(face.name.length > 0);
        assert.ok(face.gender === 'f' || face.gender === 'm', `gender ${face.gender}`);
        assert.equal(typeof face.model_url, 'string');
        assert.ok(face.model_url.length > 0);
        ids.add(face.avatar_id);
      }
      assert.equal(ids.size, res.body.length, 'avatar ids are unique');
      const genders = new Set(res.body.map((f: any) => f.gender));
      assert.deepEqual([...genders].sort(), ['f', 'm']);
    });

    it("face01 is a woman's face whose default voice is af_bella", async () => {
      const face = ((await t.request('GET', '/v1/avatars')).body as any[]).find((f) => f.avatar_id === 'face01');
      assert.ok(face);
      assert.equal(face.gender, 'f');
      assert.equal(face.default_voice_id, 'af_bella');
    });

    it("every face's default voice is a kokoro voice of the face's gender", async () => {
      const kokoro = new Map(KOKORO_VOICES.map((v) => [v.voice_id, v]));
      const listed = (await t.request('GET', '/v1/avatars')).body as any[];
      for (const face of [...BUILTIN_FACES, ...listed]) {
        const voice = kokoro.get(face.default_voice_id);
        assert.ok(voice, `${face.avatar_id}: ${face.default_voice_id} is not a kokoro voice`);
        assert.equal(voice!.gender, face.gender, `${face.avatar_id} (${face.gender}) speaks with ${voice!.voice_id} (${voice!.gender})`);
        assert.equal(voice!.premium, false);
      }
    });

    it('every built-in face is listed, and each works as an agent face with its default voice (free plan)', async () => {
      const listed = new Set(((await t.request('GET', '/v1/avatars')).body as any[]).map((f) => f.avatar_id));
      for (const face of BUILTIN_FACES) assert.ok(listed.has(face.avatar_id), face.avatar_id);
      const free = await t.account('free');
      const agent = (await t.request('POST', '/v1/agent/create', { key: free.key, body: { name: 'Faces' } })).body;
      for (const face of BUILTIN_FACES) {
        const res = await t.request('PATCH', `/v1/agent/${agent.id}`, { key: free.key, body: { avatar_id: face.avatar_id, voice_id: face.default_voice_id } });
        assert.equal(res.status, 200, `${face.avatar_id}: ${JSON.stringify(res.body)}`);
      }
    });

    it('the listed model_url of a face resolves under PUBLIC_URL or is an absolute URL', async () => {
      const face = ((await t.request('GET', '/v1/avatars')).body as any[])[0];
      assert.ok(face.model_url.startsWith('/') || /^https?:\/\//.test(face.model_url), face.model_url);
    });
  });

  describe('GET /v1/backdrops', () => {
    it('lists at least eight backdrops, each with backdrop_id and name', async () => {
      const res = await t.request('GET', '/v1/backdrops');
      assert.equal(res.status, 200);
      assert.ok(Array.isArray(res.body));
      assert.ok(res.body.length >= 8, `only ${res.body.length} backdrops`);
      for (const backdrop of res.body) {
        assert.equal(typeof backdrop.backdrop_id, 'string');
        assert.ok(backdrop.backdrop_id.length > 0);
        assert.equal(typeof backdrop.name, 'string');
        assert.ok(backdrop.name.length > 0);
      }
      assert.equal(new Set(res.body.map((b: any) => b.backdrop_id)).size, res.body.length, 'backdrop ids are unique');
    });

    it('the default studio backdrop is in the catalog', async () => {
      const ids = new Set(((await t.request('GET', '/v1/backdrops')).body as any[]).map((b) => b.backdrop_id));
      const agent = (await t.request('POST', '/v1/agent/create', { body: { name: 'Backdrop' } })).body;
      assert.ok(agent.studio.backdrop === null || ids.has(agent.studio.backdrop), agent.studio.backdrop);
    });

    it('catalogs need an API key with read', async () => {
      assert.equal((await t.request('GET', '/v1/avatars', { key: null })).status, 401);
      const setupOnly = await t.keyFor(t.accountId, ['setup']);
      assert.equal((await t.request('GET', '/v1/backdrops', { key: setupOnly })).status, 403);
    });
  });

  describe('OpenAPI', () => {
    let doc: any;
    before(async () => {
      const res = await t.request('GET', '/openapi.json', { key: null });
      assert.equal(res.status, 200);
      doc = res.body;
    });

    it('is OpenAPI 3.1 and served without a key', () => {
      assert.equal(typeof doc, 'object');
      assert.match(doc.openapi, /^3\.1\./);
      assert.equal(typeof doc.info?.title, 'string');
      assert.equal(doc.info.version, '1');
    });

    it('documents every route of the Agents table', () => {
      for (const [method, path] of AGENT_PATHS) {
        assert.ok(doc.paths?.[path], `path ${path} missing; have ${Object.keys(doc.paths ?? {}).join(', ')}`);
        assert.ok(doc.paths[path][method], `${method.toUpperCase()} ${path} missing`);
      }
      assert.ok(doc.paths['/v1/avatars']?.get);
      assert.ok(doc.paths['/v1/backdrops']?.get);
    });

    const resolve = (schema: any): any => {
      if (schema?.$ref) {
        const name = schema.$ref.split('/').pop();
        return resolve(doc.components.schemas[name]);
      }
      return schema;
    };
    const bodySchema = (method: string, path: string) => resolve(doc.paths[path][method].requestBody?.content?.['application/json']?.schema);

    it('POST /v1/agent/create takes AgentCreateRequest with name required', () => {
      const ref = doc.paths['/v1/agent/create'].post.requestBody?.content?.['application/json']?.schema;
      assert.ok(ref, 'request body documented');
      assert.ok(doc.components?.schemas?.AgentCreateRequest, 'AgentCreateRequest is a named schema');
      const schema = bodySchema('post', '/v1/agent/create');
      assert.deepEqual(schema.required, ['name']);
      for (const field of ['name', 'avatar_id', 'voice_id', 'tts_primary', 'languages', 'studio', 'website_url', 'system_prompt', 'concurrency_limit']) {
        assert.ok(schema.properties?.[field], `AgentCreateRequest.${field}`);
      }
      for (const field of ['welcome_message', 'fillers_enabled', 'status']) assert.ok(!schema.properties[field], `${field} is update-only`);
    });

    it('PATCH /v1/agent/{agent_id} takes AgentUpdateRequest with nothing required and the update-only fields', () => {
      assert.ok(doc.components.schemas.AgentUpdateRequest);
      const schema = bodySchema('patch', '/v1/agent/{agent_id}');
      assert.ok(!schema.required || schema.required.length === 0, JSON.stringify(schema.required));
      for (const field of ['name', 'studio', 'welcome_message', 'fillers_enabled', 'status'])
        assert.ok(schema.properties?.[field], `AgentUpdateRequest.${field}`);
      const welcome = resolve(schema.properties.welcome_message);
      assert.ok(JSON.stringify(welcome).includes('"maxLength":300'), JSON.stringify(welcome));
    });

    it('every agents route with a body names its schema, and the path id is an integer parameter', () => {
      for (const [method, path, name] of [
        ['patch', '/v1/agent/{agent_id}/embed', 'EmbedConfigUpdate'],
        ['patch', '/v1/agent/{agent_id}/visitor-values', 'VisitorValuesUpdate'],
        ['post', '/v1/agent/{agent_id}/visitor-values/preview', 'PreviewRequest'],
      ]) {
        assert.ok(doc.components.schemas[name], `${name} is a named schema`);
        assert.ok(bodySchema(method, path), `${method} ${path} documents its body`);
      }
      for (const [method, path] of AGENT_PATHS.filter(([, p]) => p.includes('{agent_id}'))) {
        const param = (doc.paths[path][method].parameters ?? []).find((p: any) => p.name === 'agent_id' && p.in === 'path');
        assert.ok(param, `${method} ${path} documents agent_id`);
        assert.equal(param.required, true);
        assert.ok(JSON.stringify(param.schema).includes('integer'), `${path}: agent_id is ${JSON.stringify(param.schema)}`);
      }
    });

    it('studio face_light documents its 0.5..1.5 range', () => {
      const studio = resolve(doc.components.schemas.StudioPatch ?? doc.components.schemas.Studio);
      const light = resolve(studio.properties.face_light);
      assert.equal(light.minimum, 0.5);
      assert.equal(light.maximum, 1.5);
    });

    it('names the bearer scheme', () => {
      const schemes = Object.values(doc.components?.securitySchemes ?? {}) as any[];
      assert.ok(
        schemes.some((s) => s.type === 'http' && s.scheme === 'bearer'),
        JSON.stringify(schemes),
      );
    });

    it('/docs serves an HTML page', async () => {
      const res = await fetch(`${t.url}/docs`, { redirect: 'follow' });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      const html = await res.text();
      assert.match(html, /<html/i);
    });
  });
});

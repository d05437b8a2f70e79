/**
 * 422 bodies in the FastAPI shape (contract.md "Validation errors"):
 * {"detail": [{"type", "loc", "msg", "input"}]} with loc starting body, query or path.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { itemAt, validationItems } from './helpers.js';

const findItem = itemAt;

forEachEngine('validation errors (FastAPI shape)', (engine) => {
  let t: TestApp;
  let agentId: number;
  before(async () => {
    t = await startTestApp(engine);
    agentId = (await t.request('POST', '/v1/agent/create', { body: { name: 'Valid' } })).body.id;
  });
  after(() => t.close());

  it('missing name: type missing, loc [body, name], msg Field required, input is the body', async () => {
    const body = { avatar_id: 'face01' };
    const res = await t.request('POST', '/v1/agent/create', { body });
    const item = findItem(res, ['body', 'name']);
    assert.equal(item.type, 'missing');
    assert.equal(item.msg, 'Field required');
    assert.deepEqual(item.input, body);
    assert.equal(res.body.detail.length, 1);
  });

  it('a missing nested field is type missing; its input is the object that lacks it', async () => {
    const res = await t.request('POST', '/v1/agent/create', { body: { name: 'x', languages: { also: ['fr'] } } });
    const item = findItem(res, ['body', 'languages', 'main']);
    assert.equal(item.type, 'missing');
    assert.equal(item.msg, 'Field required');
    assert.deepEqual(item.input, { also: ['fr'] });
  });

  it('a missing required field of a list item: loc into the list', async () => {
    const res = await t.request('PATCH', `/v1/agent/${agentId}/visitor-values`, { body: { fields: [{ name: 'plan' }, { required: true }] } });
    const item = findItem(res, ['body', 'fields', 1, 'name']);
    assert.equal(item.type, 'missing');
    assert.deepEqual(item.input, { required: true });
  });

  it('empty object body: the same missing name', async () => {
    const item = findItem(await t.request('POST', '/v1/agent/create', { body: {} }), ['body', 'name']);
    assert.equal(item.type, 'missing');
  });

  it('no body at all is a 422 at loc [body]', async () => {
    const items = validationItems(await t.request('POST', '/v1/agent/create'));
    assert.equal(items[0].loc[0], 'body');
  });

  it('blank name is refused', async () => {
    const item = findItem(await t.request('POST', '/v1/agent/create', { body: { name: '   ' } }), ['body', 'name']);
    assert.equal(item.type, 'string_too_short');
  });

  it('wrong types: each bad field reported at its own loc with its input', async () => {
    const res = await t.request('POST', '/v1/agent/create', {
      body: { name: 42, concurrency_limit: 'two', studio: { face_light: 'bright' }, languages: 'en' },
    });
    const name = findItem(res, ['body', 'name']);
    assert.equal(name.type, 'string_type');
    assert.equal(name.input, 42);
    const limit = findItem(res, ['body', 'concurrency_limit']);
    assert.equal(limit.input, 'two');
    const light = findItem(res, ['body', 'studio', 'face_light']);
    assert.equal(light.input, 'bright');
    const languages = findItem(res, ['body', 'languages']);
    assert.equal(languages.type, 'dict_type');
    assert.equal((await t.request('GET', '/v1/agent/has-agents')).body.count, 1, 'nothing was created');
  });

  it('concurrency_limit must be an integer of at least 1', async () => {
    assert.equal(
      findItem(await t.request('POST', '/v1/agent/create', { body: { name: 'x', concurrency_limit: 1.5 } }), ['body', 'concurrency_limit']).input,
      1.5,
    );
    assert.equal(
      findItem(await t.request('POST', '/v1/agent/create', { body: { name: 'x', concurrency_limit: 0 } }), ['body', 'concurrency_limit']).type,
      'greater_than_equal',
    );
  });

  it('PATCH with wrong types answers 422 at body locs and changes nothing', async () => {
    const before = (await t.request('GET', `/v1/agent/${agentId}`)).body;
    const res = await t.request('PATCH', `/v1/agent/${agentId}`, { body: { name: 'Changed', fillers_enabled: 'yes', status: 'sleeping' } });
    assert.equal(findItem(res, ['body', 'fillers_enabled']).type, 'bool_type');
    assert.equal(findItem(res, ['body', 'status']).input, 'sleeping');
    const after = (await t.request('GET', `/v1/agent/${agentId}`)).body;
    assert.deepEqual(after, before);
  });

  for (const [label, raw, type] of [
    ['abc', 'abc', 'int_parsing'],
    ['1.5', '1.5', undefined],
    ['-1', '-1', undefined],
    ['0', '0', undefined],
    ['overflow', '99999999999', undefined],
  ] as const) {
    it(`path agent_id ${label}: 422 at loc [path, agent_id]`, async () => {
      for (const [method, suffix, body] of [
        ['GET', '', undefined],
        ['PATCH', '', { name: 'x' }],
        ['DELETE', '?confirm=true', undefined],
        ['POST', '/duplicate', undefined],
        ['GET', '/embed', undefined],
      ] as const) {
        const res = await t.request(method, `/v1/agent/${raw}${suffix}`, { body });
        const item = findItem(res, ['path', 'agent_id']);
        if (type) assert.equal(item.type, type);
        assert.equal(String(item.input), raw);
      }
    });
  }

  it('path agent_id abc has the int_parsing message', async () => {
    const item = findItem(await t.request('GET', '/v1/agent/abc'), ['path', 'agent_id']);
    assert.equal(item.msg, 'Input should be a valid integer, unable to parse string as an integer');
    assert.equal(item.input, 'abc');
  });

  it('malformed JSON: 422 json_invalid at loc [body, …]', async () => {
    for (const raw of ['{"name": "x",', '{name: x}', 'not json']) {
      const items = validationItems(await t.request('POST', '/v1/agent/create', { body: raw }));
      assert.equal(items[0].type, 'json_invalid');
      assert.equal(items[0].loc[0], 'body');
    }
    const patch = validationItems(await t.request('PATCH', `/v1/agent/${agentId}`, { body: '{"name":' }));
    assert.equal(patch[0].type, 'json_invalid');
  });

  it('update-only fields on create: 422 at their body loc, nothing created', async () => {
    for (const [field, value] of [
      ['welcome_message', 'Hello'],
      ['fillers_enabled', true],
      ['status', 'active'],
    ] as const) {
      const res = await t.request('POST', '/v1/agent/create', { body: { name: 'Early', [field]: value } });
      const item = findItem(res, ['body', field]);
      assert.equal(item.input, value);
    }
    const res = await t.request('POST', '/v1/agent/create', { body: { name: 'Early', welcome_message: 'Hi', fillers_enabled: false } });
    assert.equal(validationItems(res).length, 2);
    assert.equal((await t.request('GET', '/v1/agent/has-agents')).body.count, 1);
  });

  it('DELETE /v1/agent/abc?confirm=true passes the gate and reports the path id', async () => {
    const res = await t.request('DELETE', `/v1/agent/abc?confirm=true`);
    findItem(res, ['path', 'agent_id']);
  });

  it('nested validation locs reach into arrays: languages.also[1]', async () => {
    const res = await t.request('POST', '/v1/agent/create', { body: { name: 'x', languages: { main: 'en', also: ['fr', 'xx'] } } });
    const item = findItem(res, ['body', 'languages', 'also', 1]);
    assert.equal(item.input, 'xx');
  });

  it('embed and visitor-values bodies report body locs too', async () => {
    findItem(await t.request('PATCH', `/v1/agent/${agentId}/embed`, { body: { primary_color: 'red' } }), ['body', 'primary_color']);
    findItem(await t.request('PATCH', `/v1/agent/${agentId}/embed`, { body: { allowed_origins: ['https://ok.example', 'https://bad.example/path'] } }), [
      'body',
      'allowed_origins',
      1,
    ]);
    findItem(await t.request('PATCH', `/v1/agent/${agentId}/visitor-values`, { body: { require_signature: 'yes' } }), ['body', 'require_signature']);
    findItem(await t.request('POST', `/v1/agent/${agentId}/visitor-values/preview`, { body: {} }), ['body', 'values']);
  });
});

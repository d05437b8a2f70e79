/**
 * Issue 15, item 4: the API reference is usable. `/openapi.json` is a valid OpenAPI 3.1 document
 * (checked by @apidevtools/swagger-parser), no `$ref` dangles and no component carries the `$id`
 * that made Swagger UI show bodies as `any $ref=…`, every JSON body and answer has an example that
 * its own schema accepts (and none is the placeholder "string"), and `/docs` in a real browser shows
 * the request body's fields.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { hasChromium, launch } from '../player/support/browser.js';

/** Every `$ref` in the document, with where it was found. */
function refsOf(value: unknown, at = '#', out: Array<{ ref: string; at: string }> = []): Array<{ ref: string; at: string }> {
  if (Array.isArray(value)) value.forEach((v, i) => refsOf(v, `${at}/${i}`, out));
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === '$ref' && typeof v === 'string') out.push({ ref: v, at });
      else refsOf(v, `${at}/${key}`, out);
    }
  }
  return out;
}

function resolvePointer(document: any, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node, key) => (node == null ? undefined : node[key]), document);
}

/** Each JSON request body and answer of the document: where, its schema, its example. */
function medias(document: any): Array<{ where: string; schema: any; example: unknown }> {
  const out: Array<{ where: string; schema: any; example: unknown }> = [];
  for (const [path, operations] of Object.entries<any>(document.paths)) {
    for (const [method, operation] of Object.entries<any>(operations)) {
      const body = operation.requestBody?.content?.['application/json'];
      if (body) out.push({ where: `${method.toUpperCase()} ${path} request`, schema: body.schema, example: body.example });
      for (const [status, answer] of Object.entries<any>(operation.responses ?? {})) {
        const media = answer.content?.['application/json'];
        if (media && media.schema?.type !== 'null')
          out.push({ where: `${method.toUpperCase()} ${path} ${status}`, schema: media.schema, example: media.example });
      }
    }
  }
  return out;
}

describe('the OpenAPI document and /docs', () => {
  let t: TestApp;
  let document: any;
  before(async () => {
    t = await startTestApp('pglite');
    const response = await fetch(`${t.url}/openapi.json`);
    assert.equal(response.status, 200);
    document = await response.json();
  });
  after(() => t?.close());

  it('is a valid OpenAPI 3.1 document (swagger-parser validates it and resolves every reference)', async () => {
    assert.equal(document.openapi, '3.1.0');
    await SwaggerParser.validate(structuredClone(document));
    assert.ok(Object.keys(document.paths).length > 50, 'the routes are in it');
  });

  it('no $ref dangles, and no component has an $id or $schema of its own', () => {
    const refs = refsOf(document);
    assert.ok(refs.length > 100);
    const dangling = refs.filter(({ ref }) => resolvePointer(document, ref) === undefined);
    assert.deepEqual(dangling, []);
    assert.ok(
      refs.some(({ ref }) => ref === '#/components/schemas/AgentCreateRequestInput'),
      'the body the user met is a reference…',
    );
    assert.equal(document.components.schemas.AgentCreateRequestInput.type, 'object', '…to a real component');
    for (const [name, schema] of Object.entries<any>(document.components.schemas)) {
      assert.equal(schema.$id, undefined, `${name} has an $id (Swagger UI resolves its references against it)`);
      assert.equal(schema.$schema, undefined, name);
    }
  });

  it('every JSON body and answer has a realistic example that its schema accepts', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
    ajv.addSchema({ $id: 'doc', components: document.components }, 'doc');
    const all = medias(document);
    assert.ok(all.length > 80);
    const problems: string[] = [];
    for (const { where, schema, example } of all) {
      if (example === undefined) {
        problems.push(`${where}: no example`);
        continue;
      }
      const text = JSON.stringify(example);
      if (/:"string"|^"string"$|\["string"\]/.test(text)) problems.push(`${where}: placeholder "string" in ${text.slice(0, 200)}`);
      // The schema's references point into the document: resolve them against it.
      const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"doc#/components/')));
      if (!validate(example)) problems.push(`${where}: example refused by its schema: ${ajv.errorsText(validate.errors)} in ${text.slice(0, 300)}`);
    }
    assert.deepEqual(problems, []);
    const create = document.paths['/v1/agent/create'].post.requestBody.content['application/json'].example;
    assert.equal(typeof create.name, 'string');
    assert.notEqual(create.name, 'string');
  });

  it('error answers are documented in the interface shapes; public routes ask for no key', async () => {
    const create = document.paths['/v1/agent/create'].post;
    for (const status of ['401', '403', '422', '429']) assert.ok(create.responses[status], `create documents ${status}`);
    assert.equal(create.responses['401'].content['application/json'].schema.$ref, '#/components/schemas/Error');
    // Validation items, or (issue 30: the agents' catalogue) a `{code, message}` such as unknown_voice.
    assert.deepEqual(create.responses['422'].content['application/json'].schema.anyOf, [
      { $ref: '#/components/schemas/ValidationError' },
      { $ref: '#/components/schemas/Error' },
    ]);
    // A route taking nothing still answers 422 to an unknown query parameter (core/validation.ts), so says so.
    assert.equal(
      document.paths['/v1/agent/list'].get.responses['422'].content['application/json'].schema.$ref,
      '#/components/schemas/ValidationError',
      'a route taking nothing documents the 422 of an unknown query parameter',
    );
    const refused = await fetch(`${t.url}/v1/agent/list?zz_unknown=1`, { headers: { authorization: `Bearer ${t.key}` } });
    assert.equal(refused.status, 422);
    assert.ok(document.paths['/v1/agent/{agent_id}'].get.responses['404'], 'a route naming a record documents 404');
    const start = document.paths['/v1/embed/sessions'].post;
    assert.deepEqual(start.security, [], 'the embed start is public');
    assert.equal(start.responses['401'], undefined);
  });

  it('path and query parameters have examples too', () => {
    const missing: string[] = [];
    for (const [path, operations] of Object.entries<any>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        for (const parameter of operation.parameters ?? [])
          if (parameter.example === undefined || parameter.example === 'string') missing.push(`${method} ${path} ${parameter.name}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  it('/docs in a browser shows the create body with its fields and example, not "any $ref"', {
    skip: hasChromium() ? false : 'chromium is not installed (apt-get install chromium)',
  }, async () => {
    const browser = await launch();
    try {
      const page = await browser.newPage();
      await page.goto(`${t.url}/docs/static/index.html#/Agents/post_v1_agent_create`);
      const block = page.locator('#operations-Agents-post_v1_agent_create');
      await block.waitFor({ timeout: 30_000 });
      const body = block.locator('.opblock-body');
      if (!(await body.isVisible())) await block.locator('.opblock-summary').first().click();
      await body.locator('.body-param__example, .highlight-code').first().waitFor({ timeout: 30_000 });
      const exampleText = await body.locator('.body-param__example, .highlight-code').first().innerText();
      assert.match(exampleText, /"name": "Ada"/);
      assert.doesNotMatch(exampleText, /"string"/);
      // The Schema tab of the request body: its fields, resolved.
      await body.locator('.tablinks[data-name="model"], button:has-text("Schema")').first().click();
      const model = await body.locator('.model-box').first().innerText({ timeout: 30_000 });
      assert.doesNotMatch(model, /\$ref/);
      assert.doesNotMatch(await body.innerText(), /any \$ref|Could not resolve reference/);
    } finally {
      await browser.close();
    }
  });
});

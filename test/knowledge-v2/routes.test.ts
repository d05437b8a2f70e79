/**
 * Knowledge v2 routes on both database engines, offline (no LLM_URL), against the test bakery
 * website: probe, schema and extract as build jobs, the brain and completion, the owner's edits
 * (answer, question state, atomic knowledge ops, review, consolidate, corrections, orphans),
 * behavior and dynamic instructions; the permission map, another account's agent, bad bodies.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { startTestSite, type TestSite } from '../knowledge/support/site.js';
import { agentWithWebsite, ask, awaitBuild } from '../knowledge/support/brain.js';
import { assertCoded } from '../agents/helpers.js';

forEachEngine('knowledge v2 routes', (engine) => {
  let t: TestApp;
  let site: TestSite;
  let agent: number;
  const v2 = (path: string) => `/v1/agent/${agent}/v2${path}`;
  before(async () => {
    site = await startTestSite();
    t = await startTestApp(engine, { CRAWL_ALLOW_PRIVATE: '1' });
    agent = await agentWithWebsite(t, `${site.url}/`);
  });
  after(async () => {
    await t.close();
    await site.close();
  });

  test('probe: reachable, language, business type, pages and robots; unreachable is reachable false; 422 without any url', async () => {
    const res = await t.request('POST', v2('/probe'), { body: {} });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.reachable, true);
    assert.equal(res.body.language, 'en');
    assert.equal(res.body.business_type, 'bakery');
    assert.ok(res.body.page_count >= 10, `page_count ${res.body.page_count}`);
    assert.deepEqual(res.body.robots.disallow, ['/private/', '/order?']);
    assert.deepEqual(res.body.robots.sitemaps, [`${site.url}/sitemap_index.xml`]);
    const pages = await t.request('GET', `/v1/agent/${agent}/pages/list`);
    assert.equal(pages.body.length, 0, 'probe changes nothing');

    const down = await t.request('POST', v2('/probe'), { body: { url: 'http://127.0.0.1:9/' } });
    assert.equal(down.status, 200);
    assert.equal(down.body.reachable, false);
    const bare = await agentWithWebsite(t, null, undefined, 'Bare');
    const missing = await t.request('POST', `/v1/agent/${bare}/v2/probe`, { body: {} });
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.body.detail[0].loc, ['body', 'url']);
    assert.equal((await t.request('POST', v2('/probe'), { body: { url: 'not a url' } })).status, 422);
  });

  test('schema/generate and extract are build jobs; the schema asks the common questions; facts carry page sources', async () => {
    const started = await t.request('POST', v2('/schema/generate'));
    assert.equal(started.status, 200, JSON.stringify(started.body));
    assert.ok(['pending', 'processing'].includes(started.body.brain_status));
    assert.equal((await awaitBuild(t, agent)).last.brain_status, 'complete');
    let brain = (await t.request('GET', v2('/brain'))).body;
    assert.equal(brain.business_type, 'bakery');
    const keys = brain.questions.map((q: any) => q.key);
    for (const key of ['hours', 'prices', 'services', 'contact', 'booking', 'cancellation']) assert.ok(keys.includes(key), key);
    assert.ok(keys.includes('dietary'), 'a bakery is asked about gluten-free and vegan options');
    assert.ok(brain.questions.every((q: any) => q.state === 'needed' && q.answered === false));

    const extract = await t.request('POST', v2('/extract'), { body: { pages: [{ url: `${site.url}/`, is_primary: true }, { url: `${site.url}/contact`, is_primary: true }, { url: `${site.url}/prices`, is_primary: true }, { url: `${site.url}/faq`, is_primary: true }] } });
    assert.equal(extract.status, 200, JSON.stringify(extract.body));
    const built = await awaitBuild(t, agent);
    assert.equal(built.last.brain_status, 'complete', JSON.stringify(built.last));
    const pages = (await t.request('GET', `/v1/agent/${agent}/pages/list`)).body;
    assert.equal(pages.length, 4);
    brain = (await t.request('GET', v2('/brain'))).body;
    const q = (key: string) => brain.questions.find((x: any) => x.key === key);
    const factsOf = (key: string) => brain.facts.filter((f: any) => f.question_id === q(key).id);
    assert.ok(factsOf('hours').some((f: any) => /7(:00)? am/.test(f.text)), JSON.stringify(factsOf('hours')));
    assert.ok(factsOf('prices').some((f: any) => /\$/.test(f.text)), JSON.stringify(factsOf('prices')));
    assert.ok(factsOf('cancellation').some((f: any) => /24 hours/.test(f.text)), JSON.stringify(factsOf('cancellation')));
    const hours = factsOf('hours')[0];
    assert.equal(hours.sources[0].kind, 'page');
    const page = pages.find((p: any) => p.id === hours.sources[0].ref);
    assert.ok(page && hours.sources[0].url === page.url);
    assert.ok(hours.confidence > 0 && hours.confidence <= 1);
    assert.equal(q('hours').answered, true);
  });
});

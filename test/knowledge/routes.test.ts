/** Knowledge and brain routes on both database engines, against the test website. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { startTestSite, type TestSite } from './support/site.js';
import { agentWithWebsite, ask, awaitBuild, until } from './support/brain.js';
import { assertCoded, itemAt } from '../agents/helpers.js';

forEachEngine('knowledge routes', (engine) => {
  let t: TestApp;
  let site: TestSite;
  let agent: number;
  let built: any;
  before(async () => {
    site = await startTestSite();
    t = await startTestApp(engine, { CRAWL_ALLOW_PRIVATE: '1' });
    agent = await agentWithWebsite(t, `${site.url}/`);
  });
  after(async () => {
    await t.close();
    await site.close();
  });

  test('extract-links lists the site with scores and categories; without website_url 422 no_website', async () => {
    const res = await t.request('GET', `/v1/agent/${agent}/extract-links`);
    assert.equal(res.status, 200);
    assert.equal(res.body.homepage_url, `${site.url}/`);
    assert.equal(res.body.total_found, res.body.links.length);
    const prices = res.body.links.find((l: any) => l.path === '/prices');
    assert.deepEqual(Object.keys(prices).sort(), ['anchor', 'default_category', 'path', 'score', 'source', 'url']);
    assert.equal(prices.default_category, 'primary');
    const bare = await agentWithWebsite(t, null, undefined, 'Bare');
    assertCoded(await t.request('GET', `/v1/agent/${bare}/extract-links`), 422, 'no_website');
    assertCoded(await t.request('POST', `/v1/agent/${bare}/generate-brain`, { body: {} }), 422, 'no_website');
    assertCoded(await t.request('GET', `/v1/agent/999999/extract-links`), 404, 'agent_not_found');
  });

  test('brain build: pending → processing → complete, with progress and the instructions (facts with their sources)', async () => {
    const before = await t.request('GET', `/v1/agent/${agent}/brain-status`);
    assert.equal(before.body.brain_status, 'none');
    const started = await t.request('POST', `/v1/agent/${agent}/generate-brain`);
    assert.equal(started.status, 200, JSON.stringify(started.body));
    assert.equal(started.body.brain_status, 'pending');
    // A second build while one runs is refused.
    assertCoded(await t.request('POST', `/v1/agent/${agent}/generate-brain`, { body: {} }), 409, 'build_in_progress');
    const { last, seen } = await awaitBuild(t, agent);
    built = last;
    assert.equal(last.brain_status, 'complete', JSON.stringify(last));
    assert.ok(seen.includes('processing') || seen[0] === 'pending', seen.join(','));
    assert.equal(last.progress.pages_done, last.progress.pages_total);
    assert.ok(last.progress.pages_total >= 15, `read ${last.progress.pages_total} pages`);
    assert.equal(last.engine, 'offline');
    assert.match(last.instructions, /You are Ava, the virtual assistant of Sunrise Bakery & Café/);
    const fact = (topic: string, pattern: RegExp) => last.facts.find((f: any) => f.topic === topic && pattern.test(f.text));
    assert.equal(fact('hours', /7 am to 3 pm|7:00 am/)?.source.url.startsWith(site.url), true);
    assert.equal(fact('prices', /Butter croissant: \$3\.25/)?.source.url, `${site.url}/prices`);
    assert.ok(fact('contact', /\(555\) 123-4567/));
    assert.ok(fact('services', /Catering/));
    assert.ok(fact('areas', /10 miles/));
    assert.ok(fact('policies', /48 hours in advance/));
    assert.match(last.instructions, /Butter croissant: \$3\.25 \(source: http:\/\/127\.0\.0\.1:\d+\/prices\)/);
    assert.ok(!/cookies/i.test(last.instructions), 'the cookie banner is not knowledge');
  });

  test('pages: statuses, titles, sizes and the reasons pages failed', async () => {
    const res = await t.request('GET', `/v1/agent/${agent}/pages/list`);
    assert.equal(res.status, 200);
    const byPath = new Map(res.body.map((p: any) => [new URL(p.url).pathname, p]));
    const prices: any = byPath.get('/prices');
    assert.equal(prices.status, 'read');
    assert.equal(prices.title, 'Menu and prices');
    assert.ok(prices.size > 300 && prices.read_at);
    assert.equal(prices.content, undefined, 'the list leaves the text out');
    assert.match((byPath.get('/app') as any).error, /drawn by JavaScript/);
    assert.equal((byPath.get('/app') as any).status, 'failed');
    assert.match((byPath.get('/missing-page') as any).error, /HTTP 404/);
    assert.match((byPath.get('/old-menu') as any).error, /redirects to .*\/prices/);
    assert.equal((byPath.get('/blog/summer-news') as any).is_primary, false);
    // One page, with its readable text: the price table is still a table.
    const one = await t.request('GET', `/v1/agent/${agent}/pages/${prices.id}`);
    assert.match(one.body.content, /\| Cappuccino \| \$4\.50 \|/);
    assert.doesNotMatch(one.body.content, /cookies|Sign up for our newsletter|All rights reserved|Our story/);
  });

  test('a build makes conversation-mode sessions wait (409 agent_building); render mode is not affected', async () => {
    const slowSite = await startTestSite({ latencyMs: 300 });
    try {
      const slow = await agentWithWebsite(t, `${slowSite.url}/`, undefined, 'Slow');
      await t.request('POST', `/v1/agent/${slow}/generate-brain`, {
        body: {
          pages: [
            { url: `${slowSite.url}/`, is_primary: true },
            { url: `${slowSite.url}/faq`, is_primary: true },
            { url: `${slowSite.url}/about`, is_primary: true },
          ],
        },
      });
      assertCoded(await t.request('POST', '/v1/sessions', { body: { agent_id: slow, mode: 'conversation' } }), 409, 'agent_building');
      const render = await t.request('POST', '/v1/sessions', { body: { agent_id: slow, mode: 'render' } });
      assert.equal(render.status, 201, JSON.stringify(render.body));
      await t.request('POST', `/v1/sessions/${render.body.session_id}/stop`);
      const { last } = await awaitBuild(t, slow);
      assert.equal(last.brain_status, 'complete');
      assert.equal(last.progress.pages_total, 3);
      const conversation = await t.request('POST', '/v1/sessions', { body: { agent_id: slow, mode: 'conversation' } });
      assert.equal(conversation.status, 201, JSON.stringify(conversation.body));
      await t.request('POST', `/v1/sessions/${conversation.body.session_id}/stop`);
    } finally {
      await slowSite.close();
    }
  });

  test('generate-brain with a page list reads those pages; CRAWL_MAX_PAGES bounds it', async () => {
    const other = await agentWithWebsite(t, `${site.url}/`, undefined, 'Listed');
    const pages = Array.from({ length: 51 }, (_, i) => ({ url: `${site.url}/blog/diary-${i}`, is_primary: false }));
    assertCoded(await t.request('POST', `/v1/agent/${other}/generate-brain`, { body: { pages } }), 422, 'too_many_pages');
    itemAt(await t.request('POST', `/v1/agent/${other}/generate-brain`, { body: { pages: [{ url: 'ftp://x.example/', is_primary: true }] } }), [
      'body',
      'pages',
      0,
      'url',
    ]);
    const res = await t.request('POST', `/v1/agent/${other}/generate-brain`, {
      body: {
        pages: [
          { url: `${site.url}/faq`, is_primary: true },
          { url: `${site.url}/faq#parking`, is_primary: true },
        ],
      },
    });
    assert.equal(res.status, 200);
    const { last } = await awaitBuild(t, other);
    assert.equal(last.progress.pages_total, 1, 'the same page twice is one page');
    const list = await t.request('GET', `/v1/agent/${other}/pages/list`);
    assert.deepEqual(
      list.body.map((p: any) => p.url),
      [`${site.url}/faq`],
    );
  });

  test('add-page reads one page in the background (202); edit, delete and clear pages; the next answer knows at once', async () => {
    const res = await t.request('POST', `/v1/agent/${agent}/add-page`, { body: { url: `${site.url}/gift-cards`, is_primary: true } });
    assert.equal(res.status, 202);
    assert.equal(res.body.status, 'pending');
    const page = await until(async () => {
      const one = await t.request('GET', `/v1/agent/${agent}/pages/${res.body.id}`);
      return one.body.status === 'read' ? one.body : undefined;
    });
    assert.match(page.content, /Gift cards are available/);
    // The site's boilerplate learnt by the build is dropped from an added page too.
    assert.doesNotMatch(page.content, /Sign up for our newsletter/);

    // The owner's own text for a page replaces what was read, at once.
    const faq = (await t.request('GET', `/v1/agent/${agent}/pages/list`)).body.find((p: any) => p.url.endsWith('/faq'));
    const edited = await t.request('PATCH', `/v1/agent/${agent}/pages/${faq.id}`, {
      body: { content: '## Parking\n\nThere is a private car park behind the bakery with 12 spaces.', is_primary: true },
    });
    assert.equal(edited.status, 200);
    assert.equal(edited.body.has_override, true);
    assert.match((await ask(t, agent, 'Where can I park?')).text, /12 spaces/);
    const reset = await t.request('PATCH', `/v1/agent/${agent}/pages/${faq.id}`, { body: { content: null } });
    assert.equal(reset.body.has_override, false);
    assert.match((await ask(t, agent, 'Where can I park?')).text, /street parking/);

    // Deleting a page removes what it taught.
    const gift = await ask(t, agent, 'Do you sell gift cards?');
    assert.match(gift.text, /\$10 to \$200/);
    assert.equal((await t.request('DELETE', `/v1/agent/${agent}/pages/${res.body.id}?confirm=true`)).status, 204);
    assert.equal((await ask(t, agent, 'Do you sell gift cards?')).done.answered, false);
    assertCoded(await t.request('DELETE', `/v1/agent/${agent}/pages/${res.body.id}?confirm=true`), 404, 'page_not_found');
    assertCoded(await t.request('DELETE', `/v1/agent/${agent}/pages/${res.body.id}`), 400, 'confirmation_required');

    // Clear only the background pages, then all.
    assert.equal((await t.request('DELETE', `/v1/agent/${agent}/pages?is_primary=false&confirm=true`)).status, 204);
    const left = (await t.request('GET', `/v1/agent/${agent}/pages/list`)).body;
    assert.ok(left.length > 0 && left.every((p: any) => p.is_primary));
    itemAt(await t.request('DELETE', `/v1/agent/${agent}/pages?is_primary=maybe&confirm=true`), ['query', 'is_primary']);
  });

  test('knowledge-base sections by topic: create, list, update, delete; known to the next answer without a rebuild', async () => {
    const created = await t.request('POST', `/v1/agent/${agent}/kb-sections`, {
      body: { title: 'Wi-Fi & Internet', content: 'Free Wi-Fi is available for customers; the password is on your receipt.' },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const section = created.body.sections.find((s: any) => s.title === 'Wi-Fi & Internet');
    assert.equal(section.topic, 'wi-fi-internet');
    assert.match((await ask(t, agent, 'Do you have wifi?')).text, /Free Wi-Fi is available/);
    assertCoded(await t.request('POST', `/v1/agent/${agent}/kb-sections`, { body: { title: 'wi-fi  internet', content: 'x' } }), 409, 'section_exists');
    const updated = await t.request('PATCH', `/v1/agent/${agent}/kb-sections/wi-fi-internet`, {
      body: { content: 'Wi-Fi is free; ask the barista for the password.' },
    });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.sections.find((s: any) => s.topic === 'wi-fi-internet').content, 'Wi-Fi is free; ask the barista for the password.');
    assert.match((await ask(t, agent, 'Is there wifi?')).text, /ask the barista/);
    assert.equal((await t.request('GET', `/v1/agent/${agent}/kb-sections`)).body.sections.length, 1);
    const removed = await t.request('DELETE', `/v1/agent/${agent}/kb-sections/wi-fi-internet?confirm=true`);
    assert.equal(removed.status, 200);
    assert.deepEqual(removed.body.sections, []);
    assertCoded(await t.request('PATCH', `/v1/agent/${agent}/kb-sections/wi-fi-internet`, { body: { content: 'x' } }), 404, 'section_not_found');
    assertCoded(await t.request('DELETE', `/v1/agent/${agent}/kb-sections/nope?confirm=true`), 404, 'section_not_found');
    assert.equal((await ask(t, agent, 'Do you have wifi?')).done.answered, false);
  });

  test('system_prompt is knowledge for the next answer', async () => {
    await t.request('PATCH', `/v1/agent/${agent}`, { body: { system_prompt: 'Our barista Lena makes the best latte art in Riverton.' } });
    assert.match((await ask(t, agent, 'Who makes the latte art?')).text, /Lena/);
    await t.request('PATCH', `/v1/agent/${agent}`, { body: { system_prompt: null } });
    assert.equal((await ask(t, agent, 'Who makes the latte art?')).done.answered, false);
  });

  test('bad input is a 4xx, never a 500: NUL bytes, lone surrogates, ids out of range, another account', async () => {
    const nul = await t.request('POST', `/v1/agent/${agent}/kb-sections`, { body: { title: 'A\u0000B', content: 'x' } });
    itemAt(nul, ['body', 'title']);
    itemAt(await t.request('POST', `/v1/agent/${agent}/kb-sections`, { body: '{"title":"ok","content":"\\ud800"}' }), ['body', 'content']);
    const page = (await t.request('GET', `/v1/agent/${agent}/pages/list`)).body[0];
    itemAt(await t.request('PATCH', `/v1/agent/${agent}/pages/${page.id}`, { body: { content: 'text\u0000more' } }), ['body', 'content']);
    itemAt(await t.request('POST', `/v1/agent/${agent}/add-page`, { body: { url: `${site.url}/\u0000x`, is_primary: true } }), ['body', 'url']);
    itemAt(await t.request('POST', `/v1/agent/${agent}/add-page`, { body: { url: 'javascript:alert(1)', is_primary: true } }), ['body', 'url']);
    itemAt(await t.request('PATCH', `/v1/agent/${agent}/kb-sections/a%00b`, { body: { content: 'x' } }), ['path', 'topic']);
    itemAt(await t.request('GET', `/v1/agent/${agent}/pages/99999999999`), ['path', 'page_id']);
    itemAt(await t.request('GET', `/v1/agent/${agent}/pages/abc`), ['path', 'page_id']);
    assertCoded(await t.request('GET', `/v1/agent/${agent}/pages/2147483647`), 404, 'page_not_found');
    itemAt(await t.request('POST', `/v1/agent/${agent}/generate-brain`, { body: { pages: 'all' } }), ['body', 'pages']);
    // Another account's agent and page are answered as missing.
    const other = await t.account('paid');
    assertCoded(await t.request('GET', `/v1/agent/${agent}/pages/list`, { key: other.key }), 404, 'agent_not_found');
    assertCoded(await t.request('GET', `/v1/agent/${agent}/pages/${page.id}`, { key: other.key }), 404, 'agent_not_found');
    const theirs = await agentWithWebsite(t, `${site.url}/`, other.key, 'Theirs');
    assertCoded(await t.request('GET', `/v1/agent/${theirs}/pages/${page.id}`, { key: other.key }), 404, 'page_not_found');
    // Permissions: reading needs read, changing needs setup.
    const readOnly = await t.keyFor(t.accountId, ['read']);
    assert.equal((await t.request('GET', `/v1/agent/${agent}/brain-status`, { key: readOnly })).status, 200);
    assertCoded(await t.request('POST', `/v1/agent/${agent}/generate-brain`, { key: readOnly, body: {} }), 403, 'missing_permission');
    assertCoded(await t.request('POST', `/v1/agent/${agent}/kb-sections`, { key: readOnly, body: { title: 'x', content: 'y' } }), 403, 'missing_permission');
  });

  test('a website on a private address: extract-links 422 private_address, and a build fails with the reason', async () => {
    const strict = await startTestApp(engine, { CRAWL_ALLOW_PRIVATE: '0' });
    try {
      for (const url of [`${site.url}/`, `http://localhost:${site.port}/`]) {
        const id = await agentWithWebsite(strict, url);
        assertCoded(await strict.request('GET', `/v1/agent/${id}/extract-links`), 422, 'private_address');
        await strict.request('POST', `/v1/agent/${id}/generate-brain`);
        const { last } = await awaitBuild(strict, id);
        assert.equal(last.brain_status, 'failed');
        assert.match(last.error, /private_address/);
        assert.equal(last.instructions, undefined);
      }
      // Pages given to a build fail one by one, with the reason; with nothing else known the build fails.
      const listed = await agentWithWebsite(strict, null, undefined, 'Listed');
      await strict.request('POST', `/v1/agent/${listed}/generate-brain`, { body: { pages: [{ url: `http://localhost:${site.port}/faq`, is_primary: true }] } });
      const { last } = await awaitBuild(strict, listed);
      assert.equal(last.brain_status, 'failed');
      const pages = (await strict.request('GET', `/v1/agent/${listed}/pages/list`)).body;
      assert.match(pages[0].error, /private_address/);
    } finally {
      await strict.close();
    }
  });

  test('duplicating an agent copies its knowledge; deleting an agent removes it', async () => {
    await t.request('POST', `/v1/agent/${agent}/kb-sections`, {
      body: { title: 'Allergens', content: 'Every cake label lists its allergens; ask us for the full allergen sheet.' },
    });
    const copy = await t.request('POST', `/v1/agent/${agent}/duplicate`);
    assert.equal(copy.status, 200);
    const copyId = copy.body.id;
    const pages = (await t.request('GET', `/v1/agent/${copyId}/pages/list`)).body;
    const sourcePages = (await t.request('GET', `/v1/agent/${agent}/pages/list`)).body;
    assert.deepEqual(
      pages.map((p: any) => p.url),
      sourcePages.map((p: any) => p.url),
    );
    assert.ok(pages.every((p: any) => p.agent_id === copyId));
    assert.equal((await t.request('GET', `/v1/agent/${copyId}/kb-sections`)).body.sections[0].topic, 'allergens');
    const status = (await t.request('GET', `/v1/agent/${copyId}/brain-status`)).body;
    assert.equal(status.brain_status, 'complete');
    assert.equal(status.instructions, built.instructions);
    assert.match((await ask(t, copyId, 'Is there an allergen sheet?')).text, /allergen sheet/);
    assert.match((await ask(t, copyId, 'How much is a cappuccino?')).text, /\$4\.50/);

    assert.equal((await t.request('DELETE', `/v1/agent/${copyId}?confirm=true`)).status, 204);
    for (const table of ['knowledge_pages', 'knowledge_sections', 'knowledge_brains', 'knowledge_answers'] as const) {
      const rows = await t.database.db.selectFrom(table).select('agent_id').where('agent_id', '=', copyId).execute();
      assert.equal(rows.length, 0, `${table} rows left for the deleted agent`);
    }
    assert.equal((await t.request('GET', `/v1/agent/${agent}/kb-sections`)).body.sections.length, 1, "the source's knowledge stays");
  });
});

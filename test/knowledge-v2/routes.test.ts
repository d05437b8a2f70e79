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

    const extract = await t.request('POST', v2('/extract'), {
      body: {
        pages: [
          { url: `${site.url}/`, is_primary: true },
          { url: `${site.url}/contact`, is_primary: true },
          { url: `${site.url}/prices`, is_primary: true },
          { url: `${site.url}/faq`, is_primary: true },
        ],
      },
    });
    assert.equal(extract.status, 200, JSON.stringify(extract.body));
    const built = await awaitBuild(t, agent);
    assert.equal(built.last.brain_status, 'complete', JSON.stringify(built.last));
    const pages = (await t.request('GET', `/v1/agent/${agent}/pages/list`)).body;
    assert.equal(pages.length, 4);
    brain = (await t.request('GET', v2('/brain'))).body;
    const q = (key: string) => brain.questions.find((x: any) => x.key === key);
    const factsOf = (key: string) => brain.facts.filter((f: any) => f.question_id === q(key).id);
    assert.ok(
      factsOf('hours').some((f: any) => /7(:00)? am/.test(f.text)),
      JSON.stringify(factsOf('hours')),
    );
    assert.ok(
      factsOf('prices').some((f: any) => /\$/.test(f.text)),
      JSON.stringify(factsOf('prices')),
    );
    assert.ok(
      factsOf('cancellation').some((f: any) => /24 hours/.test(f.text)),
      JSON.stringify(factsOf('cancellation')),
    );
    const hours = factsOf('hours')[0];
    assert.equal(hours.sources[0].kind, 'page');
    const page = pages.find((p: any) => p.id === hours.sources[0].ref);
    assert.ok(page && hours.sources[0].url === page.url);
    assert.ok(hours.confidence > 0 && hours.confidence <= 1);
    assert.equal(q('hours').answered, true);
  });

  const brainOf = async () => (await t.request('GET', v2('/brain'))).body;
  const questionId = async (key: string) => (await brainOf()).questions.find((q: any) => q.key === key).id;

  test('completion counts needed questions; answer makes an owner fact (replaced on a second answer); state changes the total; 404 and 422', async () => {
    const before = (await t.request('GET', v2('/completion'))).body;
    assert.equal(before.answered + before.missing.length, before.total);
    assert.equal(before.percent, Math.round((100 * before.answered) / before.total));
    const missing = before.missing[0];
    assert.ok(missing, 'something is missing');

    const answered = await t.request('POST', v2('/answer'), { body: { question_id: String(missing.question_id), answer: 'Yes, we do.' } });
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    assert.equal(answered.body.answered, before.answered + 1);
    assert.ok(!answered.body.missing.some((m: any) => m.question_id === missing.question_id));
    await t.request('POST', v2('/answer'), { body: { question_id: missing.question_id, answer: 'Yes, every day.' } });
    const owned = (await brainOf()).facts.filter((f: any) => f.question_id === missing.question_id);
    assert.deepEqual(
      owned.map((f: any) => [f.text, f.sources]),
      [['Yes, every day.', [{ kind: 'owner', ref: null }]]],
    );

    const skipped = await t.request('POST', v2('/questions/state'), { body: { question_id: before.missing[1].question_id, state: 'not_applicable' } });
    assert.equal(skipped.status, 200);
    assert.equal(skipped.body.total, before.total - 1);
    assert.equal((await brainOf()).questions.find((q: any) => q.id === before.missing[1].question_id).state, 'not_applicable');

    assertCoded(await t.request('POST', v2('/answer'), { body: { question_id: 999999, answer: 'x' } }), 404, 'question_not_found');
    assertCoded(await t.request('POST', v2('/answer'), { body: { question_id: 'abc', answer: 'x' } }), 404, 'question_not_found');
    assertCoded(await t.request('POST', v2('/questions/state'), { body: { question_id: 999999, state: 'skipped' } }), 404, 'question_not_found');
    const blank = await t.request('POST', v2('/answer'), { body: { question_id: missing.question_id, answer: '   ' } });
    assert.equal(blank.status, 422);
    assert.deepEqual(blank.body.detail[0].loc, ['body', 'answer']);
    const badState = await t.request('POST', v2('/questions/state'), { body: { question_id: missing.question_id, state: 'maybe' } });
    assert.equal(badState.status, 422);
    assert.deepEqual(badState.body.detail[0].loc, ['body', 'state']);
  });

  test('knowledge ops: add, change and remove in order; a bad op anywhere applies nothing (422 at body.ops.i)', async () => {
    const brain = await brainOf();
    const pageFact = brain.facts.find((f: any) => f.sources[0]?.kind === 'page');
    const hours = brain.questions.find((q: any) => q.key === 'hours').id;
    const res = await t.request('POST', v2('/knowledge/ops'), {
      body: {
        ops: [
          { op: 'add', text: 'We have free wifi for customers.' },
          { op: 'add', text: 'Open late on Fridays until 9 pm.', question_id: hours },
          { op: 'change', fact_id: String(pageFact.id), text: 'Changed by the owner.' },
        ],
      },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.results.map((r: any) => r.op),
      ['add', 'add', 'change'],
    );
    assert.equal(res.body.results[2].fact_id, pageFact.id);
    const after = await brainOf();
    const changed = after.facts.find((f: any) => f.id === pageFact.id);
    assert.equal(changed.text, 'Changed by the owner.');
    assert.deepEqual(
      changed.sources.map((s: any) => s.kind),
      ['page', 'owner'],
    );
    assert.equal(after.facts.find((f: any) => f.id === res.body.results[1].fact_id).question_id, hours);

    const count = after.facts.length;
    for (const [ops, loc] of [
      [
        [
          { op: 'add', text: 'fine' },
          { op: 'remove', fact_id: 999999 },
        ],
        ['body', 'ops', 1, 'fact_id'],
      ],
      [
        [
          { op: 'remove', fact_id: pageFact.id },
          { op: 'remove', fact_id: pageFact.id },
        ],
        ['body', 'ops', 1, 'fact_id'],
      ],
      [
        [
          { op: 'add', text: 'fine' },
          { op: 'add', text: 'x', question_id: 999999 },
        ],
        ['body', 'ops', 1, 'question_id'],
      ],
      [
        [
          { op: 'add', text: 'fine' },
          { op: 'rename', fact_id: pageFact.id },
        ],
        ['body', 'ops', 1, 'op'],
      ],
      [
        [
          { op: 'add', text: 'fine' },
          { op: 'change', fact_id: pageFact.id },
        ],
        ['body', 'ops', 1, 'text'],
      ],
    ] as const) {
      const bad = await t.request('POST', v2('/knowledge/ops'), { body: { ops } });
      assert.equal(bad.status, 422, JSON.stringify(bad.body));
      assert.deepEqual(bad.body.detail[0].loc, loc, JSON.stringify(bad.body));
    }
    const unchanged = await brainOf();
    assert.equal(unchanged.facts.length, count, 'nothing of a bad batch applied');
    assert.ok(unchanged.facts.some((f: any) => f.id === pageFact.id));

    const removed = await t.request('POST', v2('/knowledge/ops'), { body: { ops: [{ op: 'remove', fact_id: pageFact.id }] } });
    assert.equal(removed.status, 200);
    assert.ok(!(await brainOf()).facts.some((f: any) => f.id === pageFact.id));
  });

  test('the owner wins: a re-extract keeps owner facts and never brings back overruled page words; the agent says the owner fact', async () => {
    const before = await brainOf();
    const target = before.facts.find((f: any) => f.sources.length === 1 && f.sources[0].kind === 'page' && /Harbour Street/.test(f.text));
    assert.ok(target, 'a fact read from a page');
    await t.request('POST', v2('/knowledge/ops'), { body: { ops: [{ op: 'remove', fact_id: target.id }] } });
    const owner = before.facts.filter((f: any) => f.owner).map((f: any) => f.text);
    await t.request('POST', v2('/extract'));
    assert.equal((await awaitBuild(t, agent)).last.brain_status, 'complete');
    const after = await brainOf();
    for (const text of owner)
      assert.ok(
        after.facts.some((f: any) => f.text === text),
        `kept ${text}`,
      );
    assert.ok(!after.facts.some((f: any) => f.text === target.text), 'an overruled page fact is not extracted again');
    const wifi = await ask(t, agent, 'Do you have wifi?');
    assert.match(wifi.text, /free wifi/i);
    assert.equal(wifi.done.answered, true);
  });

  test('review: disagreeing sources wait for the owner; resolve keeps one or replaces them; 404 review_not_found', async () => {
    const created = await t.request('POST', `/v1/agent/${agent}/kb-sections`, { body: { title: 'Bread prices', content: 'Sourdough loaf: $7.00.' } });
    assert.equal(created.status, 200);
    await t.request('POST', v2('/extract'));
    assert.equal((await awaitBuild(t, agent)).last.brain_status, 'complete');
    let brain = await brainOf();
    assert.ok(brain.review.length >= 1, 'a review item');
    const item = brain.review[0];
    const texts = item.fact_ids.map((id: number) => brain.facts.find((f: any) => f.id === id).text).join(' | ');
    assert.match(texts, /6\.50/);
    assert.match(texts, /7\.00/);
    const keep = item.fact_ids.find((id: number) => /7\.00/.test(brain.facts.find((f: any) => f.id === id).text));
    const resolved = await t.request('POST', v2('/review/resolve'), { body: { review_id: item.id, fact_id: keep } });
    assert.equal(resolved.status, 200, JSON.stringify(resolved.body));
    brain = await brainOf();
    assert.ok(!brain.review.some((r: any) => r.id === item.id));
    for (const id of item.fact_ids)
      assert.equal(
        brain.facts.some((f: any) => f.id === id),
        id === keep,
      );
    assertCoded(await t.request('POST', v2('/review/resolve'), { body: { review_id: item.id, fact_id: keep } }), 404, 'review_not_found');
    assert.equal((await t.request('POST', v2('/review/resolve'), { body: { review_id: item.id } })).status, 422);
    const price = await ask(t, agent, 'How much is a sourdough loaf?');
    assert.match(price.text, /7\.00/);
    assert.doesNotMatch(price.text, /6\.50/);
  });

  test('consolidate merges facts with the same question and text, keeping all their sources', async () => {
    const hours = await questionId('hours');
    await t.request('POST', v2('/knowledge/ops'), {
      body: {
        ops: [
          { op: 'add', text: 'Closed on Christmas Day.', question_id: hours },
          { op: 'add', text: '  closed on christmas day ', question_id: hours },
          { op: 'add', text: 'Closed on Christmas Day', question_id: null },
        ],
      },
    });
    const res = await t.request('POST', v2('/consolidate'));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const same = (await brainOf()).facts.filter((f: any) => /christmas day/i.test(f.text));
    assert.equal(same.length, 2, 'same text, other question: not merged');
    assert.ok(res.body.merged.some((m: any) => m.merged_ids.length === 1));
    assert.equal(res.body.facts_after, res.body.facts_before - 1);
  });

  test('correction: the preview matches the fact the sentence is about and changes nothing; apply makes exactly that change once', async () => {
    const hours = await questionId('hours');
    const ops = await t.request('POST', v2('/knowledge/ops'), { body: { ops: [{ op: 'add', text: 'Saturday: 7:00 am to 3:00 pm.', question_id: hours }] } });
    const factId = ops.body.results[0].fact_id;
    const before = await brainOf();
    const preview = await t.request('POST', v2('/correction'), { body: { text: 'on Saturdays we now close at 4 pm' } });
    assert.equal(preview.status, 200, JSON.stringify(preview.body));
    assert.deepEqual(
      preview.body.changes.map((c: any) => [c.fact_id, c.before, c.after]),
      [[factId, 'Saturday: 7:00 am to 3:00 pm.', 'On Saturdays we now close at 4 pm.']],
    );
    assert.deepEqual(preview.body.changes[0].matched, ['saturdai']);
    assert.deepEqual((await brainOf()).facts, before.facts, 'the preview changes nothing');
    const applied = await t.request('POST', v2('/correction/apply'), { body: { preview_id: preview.body.preview_id } });
    assert.equal(applied.status, 200, JSON.stringify(applied.body));
    assert.deepEqual(applied.body.changes, [{ fact_id: factId, before: 'Saturday: 7:00 am to 3:00 pm.', after: 'On Saturdays we now close at 4 pm.' }]);
    const fact = (await brainOf()).facts.find((f: any) => f.id === factId);
    assert.deepEqual(fact.sources.at(-1), { kind: 'correction', ref: preview.body.preview_id });
    assertCoded(await t.request('POST', v2('/correction/apply'), { body: { preview_id: preview.body.preview_id } }), 404, 'preview_not_found');
    assertCoded(await t.request('POST', v2('/correction/apply'), { body: { preview_id: 'prv_nothing' } }), 404, 'preview_not_found');
    const saturday = await ask(t, agent, 'What time do you close on Saturday?');
    assert.match(saturday.text, /4 pm/);

    const fresh = await t.request('POST', v2('/correction'), { body: { text: 'we also sell birthday candles' } });
    assert.deepEqual(
      fresh.body.changes.map((c: any) => [c.fact_id, c.before]),
      [[null, null]],
    );
    assert.equal((await t.request('POST', v2('/correction'), { body: { text: '' } })).status, 422);
  });

  test('behavior: the whole object; PATCH changes only the fields sent; unknown_answer is said when the agent cannot answer; 422 on a wrong type', async () => {
    const got = await t.request('GET', v2('/behavior'));
    assert.deepEqual(got.body, { unknown_answer: null, tone: 'friendly', answer_length: 'short', never_discuss: [], handover: null });
    const patched = await t.request('PATCH', v2('/behavior'), { body: { unknown_answer: 'Please call Maria on 555 0100 for that.' } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.tone, 'friendly');
    assert.equal(patched.body.unknown_answer, 'Please call Maria on 555 0100 for that.');
    const unknown = await ask(t, agent, 'Do you repair motorbikes?');
    assert.equal(unknown.done.answered, false);
    assert.match(unknown.text, /call Maria on 555 0100/);
    assert.ok(unknown.done.gapId, 'the question still becomes a gap');
    for (const body of [{ unknown_answer: 5 }, { tone: 'angry' }, { never_discuss: 'politics' }, { whatever: 1 }]) {
      assert.equal((await t.request('PATCH', v2('/behavior'), { body })).status, 422, JSON.stringify(body));
    }
    assert.equal((await t.request('GET', v2('/behavior'))).body.unknown_answer, 'Please call Maria on 555 0100 for that.');
    await t.request('PATCH', v2('/behavior'), { body: { unknown_answer: null } });
  });

  test('dynamic instructions: variables once each; preview fills values (missing ones empty), saved ones when absent; 422 when values are not strings', async () => {
    const saved = await t.request('PATCH', v2('/dynamic-instructions'), {
      body: { instructions: 'Greet {{visitor.first_name}} by name. Plan: {{ visitor.plan }}. Again {{visitor.first_name}}.' },
    });
    assert.equal(saved.status, 200);
    assert.deepEqual(saved.body.variables, ['first_name', 'plan']);
    assert.deepEqual((await t.request('GET', v2('/dynamic-instructions'))).body, saved.body);
    const preview = await t.request('POST', v2('/dynamic-instructions/preview'), { body: { values: { first_name: 'Maria' } } });
    assert.equal(preview.body.rendered, 'Greet Maria by name. Plan: . Again Maria.');
    const other = await t.request('POST', v2('/dynamic-instructions/preview'), { body: { values: { x: '1' }, instructions: 'x={{visitor.x}}' } });
    assert.equal(other.body.rendered, 'x=1');
    assert.equal((await t.request('POST', v2('/dynamic-instructions/preview'), { body: { values: { first_name: 3 } } })).status, 422);
    assert.equal((await t.request('POST', v2('/dynamic-instructions/preview'), { body: { values: 'Maria' } })).status, 422);
    assert.equal((await t.request('PATCH', v2('/dynamic-instructions'), { body: { instructions: 7 } })).status, 422);
  });

  test("orphans: deleting pages orphans the facts they alone sourced (not those with another source); keep makes them the owner's, drop deletes them; a non-orphan id is 422", async () => {
    const brain = await brainOf();
    const pages = (await t.request('GET', `/v1/agent/${agent}/pages/list`)).body;
    const gone = pages.filter((p: any) => /\/(prices|faq)$/.test(p.url)).map((p: any) => p.id);
    const alone = brain.facts.filter((f: any) => f.sources.length === 1 && f.sources[0].kind === 'page' && gone.includes(f.sources[0].ref));
    assert.ok(alone.length >= 2, `${alone.length} facts from the two pages`);
    for (const id of gone) assert.equal((await t.request('DELETE', `/v1/agent/${agent}/pages/${id}?confirm=true`)).status, 204);
    assert.equal((await t.request('DELETE', `/v1/agent/${agent}/kb-sections/bread-prices?confirm=true`)).status, 200);
    const orphans = (await t.request('GET', v2('/orphans'))).body.orphans;
    assert.deepEqual(orphans.map((f: any) => f.id).sort(), alone.map((f: any) => f.id).sort());
    assert.ok(orphans.every((f: any) => f.orphan && f.sources.every((s: any) => s.gone)));
    const sectionAndOwner = (await brainOf()).facts.find((f: any) => f.sources.some((s: any) => s.kind === 'kb_section'));
    assert.ok(!sectionAndOwner || !sectionAndOwner.orphan, 'a fact the owner also stands behind is no orphan');
    const [keep, ...rest] = orphans;
    const owned = brain.facts.find((f: any) => f.owner);
    const bad = await t.request('POST', v2('/orphans/resolve'), { body: { fact_ids: [keep.id, owned.id], action: 'keep' } });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.detail[0].loc, ['body', 'fact_ids', 1]);
    assert.equal((await t.request('POST', v2('/orphans/resolve'), { body: { fact_ids: [keep.id], action: 'forget' } })).status, 422);
    assert.equal((await t.request('GET', v2('/orphans'))).body.orphans.length, orphans.length, 'nothing applied');
    const kept = await t.request('POST', v2('/orphans/resolve'), { body: { fact_ids: [String(keep.id)], action: 'keep' } });
    assert.equal(kept.status, 200);
    assert.equal(kept.body.orphans.length, orphans.length - 1);
    const dropped = await t.request('POST', v2('/orphans/resolve'), { body: { fact_ids: rest.map((f: any) => f.id), action: 'drop' } });
    assert.deepEqual(dropped.body.orphans, []);
    const after = await brainOf();
    assert.deepEqual(after.facts.find((f: any) => f.id === keep.id).sources, [{ kind: 'owner', ref: null }]);
    for (const f of rest) assert.ok(!after.facts.some((x: any) => x.id === f.id));
  });

  test('recompile: once complete the instructions hold the current facts (added words in, removed ones out)', async () => {
    const ops = await t.request('POST', v2('/knowledge/ops'), { body: { ops: [{ op: 'add', text: 'We bake rye bread on Thursdays.' }] } });
    const brain = await brainOf();
    const gone = brain.facts.find((f: any) => !f.owner && f.sources[0]?.kind === 'page');
    await t.request('POST', v2('/knowledge/ops'), { body: { ops: [{ op: 'remove', fact_id: gone.id }] } });
    const res = await t.request('POST', v2('/recompile'));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.ok(['pending', 'processing'].includes(res.body.brain_status));
    const { last } = await awaitBuild(t, agent);
    assert.equal(last.brain_status, 'complete');
    assert.match(last.instructions, /We bake rye bread on Thursdays\./);
    assert.ok(!last.instructions.includes(gone.text), `removed: ${gone.text}`);
    assert.ok(ops.body.results[0].fact_id);
  });

  test('a duplicated agent keeps the v2 knowledge: questions and states, facts with their page sources on its own pages, behavior', async () => {
    await t.request('PATCH', v2('/behavior'), { body: { tone: 'casual' } });
    const original = await brainOf();
    const copy = await t.request('POST', `/v1/agent/${agent}/duplicate`);
    assert.equal(copy.status, 200, JSON.stringify(copy.body));
    const twin = (await t.request('GET', `/v1/agent/${copy.body.id}/v2/brain`)).body;
    assert.deepEqual(
      twin.questions.map((q: any) => [q.key, q.state, q.answered]),
      original.questions.map((q: any) => [q.key, q.state, q.answered]),
    );
    assert.deepEqual(
      twin.facts.map((f: any) => f.text),
      original.facts.map((f: any) => f.text),
    );
    const twinPages = (await t.request('GET', `/v1/agent/${copy.body.id}/pages/list`)).body;
    for (const fact of twin.facts)
      for (const source of fact.sources)
        if (source.kind === 'page' && !source.gone) assert.ok(twinPages.some((p: any) => p.id === source.ref && p.url === source.url));
    assert.equal((await t.request('GET', `/v1/agent/${copy.body.id}/v2/behavior`)).body.tone, 'casual');
  });

  test("permissions: GET needs read, POST and PATCH setup (403, nothing changes); another account's agent is 404 agent_not_found", async () => {
    const reader = await t.keyFor(t.accountId, ['read']);
    assert.equal((await t.request('GET', v2('/brain'), { key: reader })).status, 200);
    assert.equal((await t.request('GET', v2('/completion'), { key: reader })).status, 200);
    const before = await brainOf();
    assertCoded(await t.request('POST', v2('/knowledge/ops'), { key: reader, body: { ops: [{ op: 'add', text: 'sneaky' }] } }), 403, 'missing_permission');
    assertCoded(await t.request('PATCH', v2('/behavior'), { key: reader, body: { tone: 'formal' } }), 403, 'missing_permission');
    assert.equal((await brainOf()).facts.length, before.facts.length);
    const setupOnly = await t.keyFor(t.accountId, ['setup']);
    assertCoded(await t.request('GET', v2('/orphans'), { key: setupOnly }), 403, 'missing_permission');
    const other = await t.account('paid');
    for (const [method, path, body] of [
      ['GET', '/brain'],
      ['GET', '/completion'],
      ['GET', '/behavior'],
      ['GET', '/dynamic-instructions'],
      ['GET', '/orphans'],
      ['POST', '/probe', {}],
      ['POST', '/schema/generate'],
      ['POST', '/extract'],
      ['POST', '/recompile'],
      ['POST', '/consolidate'],
      ['POST', '/answer', { question_id: 1, answer: 'x' }],
      ['POST', '/questions/state', { question_id: 1, state: 'skipped' }],
      ['POST', '/knowledge/ops', { ops: [{ op: 'add', text: 'x' }] }],
      ['POST', '/review/resolve', { review_id: 1, text: 'x' }],
      ['POST', '/correction', { text: 'x' }],
      ['POST', '/correction/apply', { preview_id: 'x' }],
      ['PATCH', '/behavior', { tone: 'formal' }],
      ['PATCH', '/dynamic-instructions', { instructions: 'x' }],
      ['POST', '/dynamic-instructions/preview', { values: {} }],
      ['POST', '/orphans/resolve', { fact_ids: [], action: 'drop' }],
    ] as Array<[string, string, unknown?]>) {
      assertCoded(await t.request(method, v2(path), { key: other.key, body }), 404, 'agent_not_found');
    }
  });

  test('every v2 body and answer is in the OpenAPI document', async () => {
    const doc = (await t.request('GET', '/openapi.json', { key: null })).body;
    for (const name of [
      'ProbeRequest',
      'ProbeResponse',
      'ExtractRequest',
      'BrainView',
      'CompletionResponse',
      'AnswerRequest',
      'QuestionStateRequest',
      'KnowledgeOpsRequest',
      'KnowledgeOpsResponse',
      'ReviewResolveRequest',
      'CorrectionRequest',
      'CorrectionPreview',
      'CorrectionApplyRequest',
      'CorrectionApplyResponse',
      'BehaviorResponse',
      'BehaviorUpdateRequest',
      'DynamicInstructionsResponse',
      'DynamicInstructionsUpdate',
      'DynamicPreviewRequest',
      'DynamicPreviewResponse',
      'OrphanResolveRequest',
      'OrphansResponse',
      'Fact',
      'Question',
    ]) {
      assert.ok(doc.components.schemas[name], name);
    }
    assert.ok(doc.paths['/v1/agent/{agent_id}/v2/knowledge/ops'].post);
    assert.ok(doc.paths['/v1/agent/{agent_id}/v2/dynamic-instructions'].patch);
  });
});

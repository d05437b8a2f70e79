/**
 * Reports over real conversation records: the list with every filter and paging, every 422,
 * permissions, another account's conversations never visible, the OpenAPI document.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { forEachEngine, type TestApp } from '../support/app.js';
import { assertCoded, itemAt, makeAgent } from '../sessions/helpers.js';
import { startReportsApp } from './support.js';
import { csvCell, csvRow } from '../../src/reports/csv.js';
import { dateBounds } from '../../src/reports/schemas.js';

test('csv cells: commas, quotes and line breaks are quoted; formulas are defused; rows end CRLF', () => {
  assert.equal(csvCell('plain'), 'plain');
  assert.equal(csvCell('a,b'), '"a,b"');
  assert.equal(csvCell('say "hi"'), '"say ""hi"""');
  assert.equal(csvCell('one\ntwo'), '"one\ntwo"');
  assert.equal(csvCell('one\r\ntwo'), '"one\r\ntwo"');
  assert.equal(csvCell('=SUM(A1)'), "'=SUM(A1)");
  assert.equal(csvCell('-1+2,x'), `"'-1+2,x"`);
  assert.equal(csvCell(-3.5), '-3.5');
  assert.equal(csvCell(null), '');
  assert.equal(csvRow(['a', 1, null, 'b"c']), 'a,1,,"b""c"\r\n');
});

test('date bounds: a date is its whole UTC day, a date-time its instant; impossible days are refused', () => {
  assert.deepEqual(dateBounds('2026-11-23'), { start: new Date('2026-11-23T00:00:00Z'), endExclusive: new Date('2026-11-24T00:00:00Z') });
  assert.equal(dateBounds('2026-11-23T14:30:00+02:00')!.start.toISOString(), '2026-11-23T12:30:00.000Z');
  assert.equal(dateBounds('2026-11-23T14:30')!.start.toISOString(), '2026-11-23T14:30:00.000Z');
  assert.equal(dateBounds('2026-11-23 14:30:05.250Z')!.start.toISOString(), '2026-11-23T14:30:05.250Z');
  for (const bad of ['2026-02-30', '2026-13-01', '23/11/2026', '2026-11-23T25:00', 'yesterday', '2026-11-23T10:00:00+0'])
    assert.equal(dateBounds(bad), undefined, bad);
});

forEachEngine('reports: list, filters, validation', (engine) => {
  let t: TestApp;
  let acct: { id: number; key: string };
  let other: { id: number; key: string };
  let alice: number;
  let bob: number;
  let ids: Record<string, string>;
  before(async () => {
    ({ t, acct, other, alice, bob, ids } = await startReportsApp(engine));
  });
  after(() => t?.close());

  const get = (path: string, key = acct.key) => t.request('GET', path, { key });
  const listIds = async (query: string) => {
    const res = await get(`/v1/reports/conversations${query}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return (res.body.items as any[]).map((i) => Object.keys(ids).find((k) => ids[k] === i.conversation_id));
  };

  test('the list: newest first, the contract fields, paging and total', async () => {
    const res = await get('/v1/reports/conversations');
    assert.equal(res.status, 200);
    assert.equal(res.body.total, 4);
    assert.equal(res.body.limit, 50);
    assert.equal(res.body.offset, 0);
    assert.deepEqual(await listIds(''), ['running', 'c3', 'c2', 'c1']);
    const c1 = res.body.items[3];
    assert.deepEqual(
      { ...c1 },
      {
        conversation_id: ids.c1,
        session_id: ids.c1,
        agent_id: alice,
        agent_name: 'Alice desk',
        mode: 'conversation',
        visitor_id: 'v_1',
        started_at: '2026-01-10T10:00:00.000Z',
        ended_at: '2026-01-10T10:02:00.000Z',
        duration_seconds: 120,
        end_reason: 'stopped',
        visitor_turns: 2,
        agent_turns: 1,
        notif_categories: [],
        handoffs_delivered: 1,
      },
    );
    const running = res.body.items[0];
    assert.equal(running.ended_at, null);
    assert.equal(running.end_reason, null);
    assert.ok(running.duration_seconds >= 1 && running.duration_seconds < 120, `running for ${running.duration_seconds}s`);
    const page = await get('/v1/reports/conversations?limit=2&offset=1');
    assert.deepEqual(
      page.body.items.map((i: any) => i.conversation_id),
      [ids.c3, ids.c2],
    );
    assert.equal(page.body.total, 4);
    assert.equal(page.body.limit, 2);
    assert.equal(page.body.offset, 1);
    const past = await get('/v1/reports/conversations?offset=10');
    assert.deepEqual(past.body.items, []);
    assert.equal(past.body.total, 4);
  });

  test('each filter alone, and together', async () => {
    assert.deepEqual(await listIds('?date_from=2026-01-10&date_to=2026-01-10'), ['c2', 'c1'], 'a date covers its whole UTC day');
    assert.deepEqual(await listIds('?date_from=2026-01-11'), ['running', 'c3']);
    assert.deepEqual(await listIds('?date_to=2026-01-11'), ['c2', 'c1']);
    assert.deepEqual(await listIds('?date_from=2026-01-10T10:00:00Z&date_to=2026-01-10T10:00:00Z'), ['c1'], 'date-times are inclusive instants');
    assert.deepEqual(await listIds('?date_from=2026-01-10T12:00:01%2B02:00&date_to=2026-01-12'), ['c3', 'c2'], 'a zone offset counts');
    assert.deepEqual(await listIds(`?agent_id=${bob}`), ['running', 'c3']);
    assert.deepEqual(await listIds('?visitor_id=v_1'), ['c3', 'c1']);
    assert.deepEqual(await listIds('?min_duration_seconds=100'), ['c3', 'c1']);
    assert.deepEqual(await listIds('?min_duration_seconds=600'), ['c3']);
    assert.deepEqual(await listIds('?q=refund'), ['c1'], "words of the visitor's turns; another account's never");
    assert.deepEqual(await listIds('?q=REFUNDS%20five'), ['c1'], "the agent's turns too, case-insensitively, every word");
    assert.deepEqual(await listIds('?q=refund%20hours'), []);
    assert.deepEqual(await listIds('?q=refund%20or%20hours'), ['c2', 'c1']);
    assert.deepEqual(await listIds('?q=%22opening%20hours%22'), ['c2'], 'a quoted phrase');
    assert.deepEqual(await listIds('?q=%22hours%20opening%22'), [], 'a phrase in its order only');
    assert.deepEqual(await listIds('?q=%2B%2B%2B'), [], 'no words: nothing matches');
    assert.deepEqual(await listIds('?notif_category=lead'), ['c2']);
    assert.deepEqual(await listIds('?notif_category=other'), []);
    assert.deepEqual(await listIds(`?agent_id=${alice}&visitor_id=v_1&q=thanks&date_from=2026-01-01&min_duration_seconds=60`), ['c1']);
    assert.deepEqual(await listIds(`?agent_id=${alice}&visitor_id=v_2&q=thanks`), []);
  });

  test('another account sees only its own', async () => {
    const res = await get('/v1/reports/conversations?visitor_id=v_1', other.key);
    assert.deepEqual(
      res.body.items.map((i: any) => i.conversation_id),
      [ids.foreign],
    );
    assert.equal(res.body.total, 1);
    assertCoded(await get(`/v1/reports/conversations/${ids.c1}`, other.key), 404, 'conversation_not_found');
    assertCoded(await get(`/v1/reports/export/conversations/${ids.c1}`, other.key), 404, 'conversation_not_found');
    assertCoded(await get(`/v1/reports/conversations/${crypto.randomUUID()}`), 404, 'conversation_not_found');
    assertCoded(await get('/v1/reports/conversations/not-a-uuid'), 404, 'conversation_not_found');
    const stats = await get('/v1/reports/stats', other.key);
    assert.equal(stats.body.conversations, 1);
    const csv = await fetch(`${t.url}/v1/reports/export/conversations`, { headers: { authorization: `Bearer ${other.key}` } });
    const text = await csv.text();
    assert.equal(text.trim().split('\r\n').length, 2);
    assert.ok(!text.includes(ids.c1));
    const agents = await get('/v1/reports/agents', other.key);
    assert.deepEqual(
      agents.body.agents.map((a: any) => a.agent_name),
      ['Elsewhere'],
    );
  });

  test('every query is validated: 422 in the FastAPI shape', async () => {
    const cases: Array<[string, string]> = [
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=abc', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=1.5', 'offset'],
      ['date_from=2026-02-30', 'date_from'],
      ['date_from=yesterday', 'date_from'],
      ['date_to=2026-11-23T25:00', 'date_to'],
      [`date_to=${'2'.repeat(41)}`, 'date_to'],
      ['agent_id=x', 'agent_id'],
      ['agent_id=0', 'agent_id'],
      ['agent_id=99999999999', 'agent_id'],
      ['visitor_id=has%20space', 'visitor_id'],
      [`visitor_id=${'v'.repeat(129)}`, 'visitor_id'],
      ['min_duration_seconds=-1', 'min_duration_seconds'],
      ['min_duration_seconds=ten', 'min_duration_seconds'],
      ['q=', 'q'],
      [`q=${'w'.repeat(201)}`, 'q'],
      ['notif_category=', 'notif_category'],
      [`notif_category=${'c'.repeat(101)}`, 'notif_category'],
      ['date_from=2026-01-12&date_to=2026-01-11', 'date_to'],
    ];
    for (const [query, field] of cases) {
      itemAt(await get(`/v1/reports/conversations?${query}`), ['query', field]);
      if (!['limit', 'offset', 'notif_category'].some((f) => query.startsWith(f))) {
        itemAt(await get(`/v1/reports/stats?${query}`), ['query', field]);
        itemAt(await get(`/v1/reports/export/conversations?${query}`), ['query', field]);
      }
    }
    const item = itemAt(await get('/v1/reports/conversations?limit=201'), ['query', 'limit']);
    assert.equal(item.type, 'less_than_equal');
    assert.equal(item.input, '201');
    // The boundaries themselves are fine.
    assert.equal((await get('/v1/reports/conversations?limit=200&offset=0&min_duration_seconds=0')).status, 200);
    assert.equal((await get('/v1/reports/conversations?limit=1')).body.items.length, 1);
  });

  test('permissions: read is needed, and enough', async () => {
    const reader = await t.keyFor(acct.id, ['read']);
    const sessionsOnly = await t.keyFor(acct.id, ['sessions', 'setup']);
    for (const path of [
      '/v1/reports/me',
      '/v1/reports/agents',
      '/v1/reports/conversations',
      '/v1/reports/stats',
      '/v1/reports/export/conversations',
      `/v1/reports/conversations/${ids.c1}`,
      `/v1/reports/export/conversations/${ids.c1}`,
    ]) {
      assert.equal((await get(path, reader)).status, 200, path);
      assertCoded(await get(path, sessionsOnly), 403, 'missing_permission');
      assertCoded(await t.request('GET', path, { key: null }), 401, 'invalid_api_key');
    }
  });

  test('the OpenAPI document lists every reports route with its answer', async () => {
    const doc = (await t.request('GET', '/openapi.json', { key: null })).body;
    for (const path of [
      '/v1/usage/summary',
      '/v1/reports/me',
      '/v1/reports/agents',
      '/v1/reports/conversations',
      '/v1/reports/stats',
      '/v1/reports/export/conversations',
      '/v1/reports/export/conversations/{conversation_id}',
      '/v1/reports/conversations/{conversation_id}',
    ]) {
      assert.ok(doc.paths[path]?.get, `${path} is documented`);
      assert.ok(doc.paths[path].get.responses['200'], `${path} has its answer`);
    }
    const params = doc.paths['/v1/reports/conversations'].get.parameters.map((p: any) => p.name).sort();
    assert.deepEqual(params, ['agent_id', 'date_from', 'date_to', 'limit', 'min_duration_seconds', 'notif_category', 'offset', 'q', 'visitor_id']);
  });
});

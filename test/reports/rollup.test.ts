/**
 * The per-day rollup (migration 0015) against the scan it stands in for: stats, totals and
 * per-agent totals read from the rollup (whole UTC days, an agent) equal the same aggregates
 * computed from the conversations' rows, through every way a conversation changes after it ends
 * (a late turn, a handoff delivered after the end, a category, a deletion), with running
 * conversations (also one begun on an earlier day), gaps raised in ended and running ones, and
 * conversations at the edges of a day. The migration's backfill equals what the trigger kept.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { forEachEngine, type TestApp } from '../support/app.js';
import { startTestApp } from '../support/app.js';
import { makeAgent } from '../sessions/helpers.js';
import { ConversationQueries, type ConversationFilter } from '../../src/conversation/queries.js';
import { backfillConversationDays } from '../../src/core/db/migrations/0015_conversation_days.js';
import type { Db } from '../../src/core/db/database.js';

const day = (d: string) => new Date(`${d}T00:00:00Z`);

forEachEngine('reports: the per-day rollup agrees with the scan', (engine) => {
  let t: TestApp;
  let acct: { id: number; key: string };
  let other: { id: number; key: string };
  let alice: number;
  let bob: number;
  const ids: Record<string, string> = {};

  /** Begins a conversation as the records do; ends it after `seconds` unless undefined. */
  async function record(
    name: string,
    o: {
      accountId?: number;
      agentId: number;
      start: string;
      seconds?: number;
      turns?: Array<['visitor' | 'agent', string, Record<string, unknown>?]>;
      agentName?: string;
    },
  ) {
    const id = crypto.randomUUID();
    ids[name] = id;
    const started = new Date(o.start);
    const session = { id, account_id: o.accountId ?? acct.id, agent_id: o.agentId, mode: 'conversation' as const, created_at: started };
    await t.context.conversations.begin({ session, visitorId: 'v_rollup', agentName: o.agentName });
    let at = started.getTime();
    for (const [role, text, details] of o.turns ?? []) await t.context.conversations.addTurn(id, { role, text, at: new Date((at += 1)), details });
    if (o.seconds !== undefined) {
      await t.context.conversations.end({
        ...session,
        ended_at: new Date(started.getTime() + o.seconds * 1000),
        duration_seconds: o.seconds,
        end_reason: 'stopped',
      });
    }
    return id;
  }

  before(async () => {
    t = await startTestApp(engine);
    acct = await t.account('paid');
    other = await t.account('paid');
    alice = await makeAgent(t, { name: 'Alice' }, acct.key);
    bob = await makeAgent(t, { name: 'Bob' }, acct.key);
    const elsewhere = await makeAgent(t, { name: 'Elsewhere' }, other.key);
    const queries = new ConversationQueries(t.database.db);
    const gap = (id: number) => ({ source: 'answer', answered: false, gap_id: id });

    // The edges of 2026-03-10: its last instant and the next day's first.
    await record('lastInstant', {
      agentId: alice,
      start: '2026-03-10T23:59:59.999Z',
      seconds: 12.345,
      turns: [
        ['visitor', 'late question'],
        ['agent', 'no idea', gap(7)],
      ],
    });
    await record('firstInstant', {
      agentId: alice,
      start: '2026-03-11T00:00:00.000Z',
      seconds: 60,
      turns: [
        ['visitor', 'early'],
        ['agent', 'hm', gap(7)],
        ['agent', 'hm again', gap(7)],
      ],
    });
    await record('bobs', {
      agentId: bob,
      start: '2026-03-11T10:00:00Z',
      seconds: 0.5,
      turns: [
        ['visitor', 'hi'],
        ['agent', 'hello', gap(8)],
      ],
      agentName: 'Bob (old name)',
    });
    await record('bobsLater', { agentId: bob, start: '2026-03-12T10:00:00Z', seconds: 30, turns: [['visitor', 'hi again']] });
    // Changes after the end: a late turn raising a gap, a handoff delivered (twice: counted once), a category.
    await record('changed', { agentId: alice, start: '2026-03-12T08:00:00Z', seconds: 90, turns: [['visitor', 'first']] });
    await t.context.conversations.addTurn(ids.changed!, { role: 'agent', text: 'a late answer', details: gap(9) });
    await t.context.conversations.addTurn(ids.changed!, { role: 'visitor', text: 'a late visitor turn' });
    await queries.handoffDelivered(ids.changed!, 3);
    await queries.handoffDelivered(ids.changed!, 3);
    await queries.handoffDelivered(ids.changed!, 4);
    await t.context.conversations.tag(ids.changed!, 'lead');
    // Ended, then deleted: its share leaves the rollup.
    await record('deleted', { agentId: bob, start: '2026-03-12T09:00:00Z', seconds: 45, turns: [['agent', 'gone', gap(10)]] });
    await sql`DELETE FROM conversations WHERE id = ${ids.deleted}`.execute(t.database.db);
    // Ended once, ended again (ignored), and an ended row written whole (as an import or the bench does).
    await record('twice', { agentId: alice, start: '2026-03-13T12:00:00Z', seconds: 20 });
    await t.context.conversations.end({
      id: ids.twice!,
      account_id: acct.id,
      agent_id: alice,
      mode: 'conversation',
      created_at: new Date('2026-03-13T12:00:00Z'),
      ended_at: new Date(),
      duration_seconds: 999,
      end_reason: 'again',
    });
    ids.inserted = crypto.randomUUID();
    await sql`INSERT INTO conversations (id, account_id, agent_id, agent_name, mode, started_at, ended_at, duration_seconds, end_reason, visitor_turns, agent_turns, gap_ids)
              VALUES (${ids.inserted}, ${acct.id}, ${bob}, 'Bob', 'conversation', '2026-03-13T13:00:00Z', '2026-03-13T13:01:00Z', NULL, 'stopped', 2, 1, '{11}')`.execute(
      t.database.db,
    );
    // Running: one begun on an earlier day (its duration keeps growing), one now; both raised gaps.
    await record('runningOld', {
      agentId: alice,
      start: '2026-03-11T15:00:00Z',
      turns: [
        ['visitor', 'still here'],
        ['agent', 'yes', gap(8)],
      ],
    });
    await record('runningNow', { agentId: bob, start: new Date(Date.now() - 5000).toISOString(), turns: [['agent', 'hello', gap(12)]] });
    // Another account's, the same day.
    await record('foreign', { accountId: other.id, agentId: elsewhere, start: '2026-03-11T10:00:00Z', seconds: 100, turns: [['agent', 'x', gap(7)]] });
  });
  after(() => t?.close());

  const filters = (): Array<[string, ConversationFilter]> => [
    ['everything', { accountId: acct.id }],
    ['an agent', { accountId: acct.id, agentId: alice }],
    ['the other agent', { accountId: acct.id, agentId: bob }],
    ['from a day', { accountId: acct.id, from: day('2026-03-11') }],
    ['before a day', { accountId: acct.id, before: day('2026-03-11') }],
    ['one day', { accountId: acct.id, from: day('2026-03-11'), before: day('2026-03-12') }],
    ['an agent on two days', { accountId: acct.id, agentId: bob, from: day('2026-03-11'), before: day('2026-03-13') }],
    ['this month onwards', { accountId: acct.id, from: new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1)) }],
    ['nothing there', { accountId: acct.id, from: day('2025-01-01'), before: day('2025-02-01') }],
    // Date-time bounds: whole days from the rollup, the cut days' rows scanned.
    ['from the last instant of a day', { accountId: acct.id, from: new Date('2026-03-10T23:59:59.999Z') }],
    ['from just after a day began', { accountId: acct.id, from: new Date('2026-03-11T00:00:00.001Z') }],
    ['to the end of a day, to the second', { accountId: acct.id, before: new Date('2026-03-12T23:59:59.001Z') }],
    ['to the first instant of a day', { accountId: acct.id, before: new Date('2026-03-11T00:00:00.001Z') }],
    ['cut at both ends', { accountId: acct.id, agentId: alice, from: new Date('2026-03-10T12:00:00Z'), before: new Date('2026-03-13T12:00:00.001Z') }],
    ['within one day', { accountId: acct.id, from: new Date('2026-03-11T00:00:00.001Z'), before: new Date('2026-03-11T23:00:00Z') }],
    ['across one midnight', { accountId: acct.id, from: new Date('2026-03-10T12:00:00Z'), before: new Date('2026-03-11T12:00:00Z') }],
    ['the other account', { accountId: other.id }],
  ];

  /**
   * Both ways inside one transaction, so that now() (the running durations) is the same instant.
   * Seconds are compared to the microsecond: the rollup adds exact decimals, the scan doubles.
   */
  async function bothWays<T>(read: (q: ConversationQueries, rollup: boolean) => Promise<T>): Promise<{ rollup: T; scan: T }> {
    const micro = (v: T): T => JSON.parse(JSON.stringify(v, (k, x) => (k === 'seconds' ? Math.round(x * 1e6) / 1e6 : x)));
    return t.database.db.transaction().execute(async (trx) => {
      const q = new ConversationQueries(trx as unknown as Db);
      return { rollup: micro(await read(q, true)), scan: micro(await read(q, false)) };
    });
  }

  test('stats, totals and per-agent totals: the rollup equals the scan for every filter of an agent and dates (whole days, cut days)', async () => {
    for (const [name, filter] of filters()) {
      const stats = await bothWays((q, rollup) => q.stats(filter, { rollup }));
      // The scan's per-day rows carry the day's first and last starts; stats do not use them.
      const strip = (s: typeof stats.scan) => ({ gaps: s.gaps, days: s.days.map((d) => ({ ...d, first: null, last: null })) });
      assert.deepEqual(strip(stats.rollup), strip(stats.scan), `stats: ${name}`);
      const totals = await bothWays((q, rollup) => q.totals(filter, { rollup }));
      assert.deepEqual(totals.rollup, totals.scan, `totals: ${name}`);
      const perAgent = await bothWays((q, rollup) => q.perAgent(filter, { rollup }));
      assert.deepEqual(perAgent.rollup, perAgent.scan, `per agent: ${name}`);
    }
  });

  test('what the rollup answers: edges of a day, running conversations, changes after the end, gaps', async () => {
    const q = new ConversationQueries(t.database.db);
    const march10 = await q.stats({ accountId: acct.id, from: day('2026-03-10'), before: day('2026-03-11') });
    assert.deepEqual(
      march10.days.map((d) => [d.day, d.conversations, d.seconds, d.visitorTurns, d.agentTurns]),
      [['2026-03-10', 1, 12.345, 1, 1]],
    );
    assert.equal(march10.gaps, 1);
    const march11 = await q.stats({ accountId: acct.id, from: day('2026-03-11'), before: day('2026-03-12') });
    const [d11] = march11.days;
    assert.equal(d11!.conversations, 3, 'firstInstant, bobs and the running one begun that day');
    assert.equal(d11!.running, 1);
    assert.ok(d11!.seconds > 60 + 0.5 + 86_400, 'the running one counts its time so far');
    assert.equal(march11.gaps, 2, 'gap 7 (twice in one conversation), gap 8 (ended and running)');
    const march12 = await q.stats({ accountId: acct.id, from: day('2026-03-12'), before: day('2026-03-13') });
    assert.deepEqual(
      march12.days.map((d) => [d.conversations, d.seconds, d.visitorTurns, d.agentTurns, d.handoffsDelivered]),
      [[2, 120, 3, 1, 2]],
      'the deleted one is gone; the late turns and the handoffs count',
    );
    assert.equal(march12.gaps, 1, 'the late answer raised gap 9; the deleted one took gap 10 with it');
    const march13 = await q.stats({ accountId: acct.id, from: day('2026-03-13'), before: day('2026-03-14') });
    assert.deepEqual(
      march13.days.map((d) => [d.conversations, d.seconds]),
      [[2, 80]],
      'ended once (20 s), and an inserted ended row without a duration (its end minus its start)',
    );
    const all = await q.stats({ accountId: acct.id });
    assert.equal(all.gaps, 5, 'gaps 7, 8, 9, 11 and 12 (10 left with its conversation)');
  });

  test('the rollup is what is read for whole days, and not for other filters or no whole day', async () => {
    // Skewing the rollup inside a transaction that is rolled back shows which path answered.
    const whole: ConversationFilter = { accountId: acct.id, from: day('2026-03-11'), before: day('2026-03-12') };
    // To the first instant of the next day: the whole day from the rollup, that instant scanned.
    const cut: ConversationFilter = { accountId: acct.id, from: day('2026-03-11'), before: new Date(day('2026-03-12').getTime() + 1) };
    const inside: ConversationFilter = {
      accountId: acct.id,
      from: new Date(day('2026-03-11').getTime() - 1),
      before: new Date(day('2026-03-12').getTime() - 1),
    };
    const rollback = new Error('rollback');
    await assert.rejects(
      t.database.db.transaction().execute(async (trx) => {
        await sql`UPDATE conversation_days SET conversations = conversations + 1000 WHERE account_id = ${acct.id} AND agent_id = ${alice}`.execute(trx);
        const q = new ConversationQueries(trx as unknown as Db);
        assert.equal((await q.stats(whole)).days[0]!.conversations, 1003);
        assert.equal((await q.totals({ accountId: acct.id })).conversations > 1000, true);
        assert.equal((await q.perAgent({ accountId: acct.id, agentId: alice }))[0]!.conversations > 1000, true);
        assert.equal((await q.stats(cut)).days[0]!.conversations, 1003, 'a cut day at the end: the whole day from the rollup');
        assert.equal((await q.stats(inside)).days.find((d) => d.day === '2026-03-11')!.conversations, 3, 'no whole day inside: scanned');
        assert.equal((await q.stats({ ...whole, visitorId: 'v_rollup' })).days[0]!.conversations, 3, 'a visitor scans');
        assert.equal((await q.stats({ ...whole, words: 'early' })).days[0]!.conversations, 1, 'words scan');
        throw rollback;
      }),
      (e) => e === rollback,
    );
  });

  test('the stats route answers the same through the rollup and through a scan', async () => {
    const get = async (query: string) => {
      const res = await t.request('GET', `/v1/reports/stats?${query}`, { key: acct.key });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body;
    };
    // min_duration_seconds=0 matches everything but is not a rollup filter.
    // (Ranges without a running conversation: two requests are two instants.)
    for (const query of ['date_from=2026-03-12&date_to=2026-03-13', 'date_to=2026-03-10', `date_from=2026-03-10&date_to=2026-03-13&agent_id=${bob}`]) {
      const rollup = await get(query);
      assert.ok(rollup.conversations > 0, query);
      assert.deepEqual(rollup, await get(`${query}&min_duration_seconds=0`), query);
    }
  });

  test("the migration's backfill equals the rollup the trigger kept", async () => {
    const read = async (db: Db) => ({
      days: (
        await sql`SELECT account_id, agent_id, day::text, conversations, seconds::text, visitor_turns::int, agent_turns::int, handoffs_delivered::int FROM conversation_days ORDER BY 1, 2, 3`.execute(
          db,
        )
      ).rows,
      gaps: (await sql`SELECT account_id, agent_id, day::text, gap_id, conversations FROM conversation_day_gaps ORDER BY 1, 2, 3, 4`.execute(db)).rows,
    });
    const kept = await read(t.database.db);
    assert.ok(kept.days.length >= 6 && kept.gaps.length >= 5);
    const rebuilt = await t.database.db.transaction().execute(async (trx) => {
      await backfillConversationDays(trx);
      return read(trx as unknown as Db);
    });
    assert.deepEqual(rebuilt, kept);
  });

  test("deleting an account's conversations (by an operator) leaves no rollup row behind", async () => {
    await sql`DELETE FROM conversations WHERE account_id = ${other.id}`.execute(t.database.db);
    const left = async (table: string) =>
      Number((await sql<{ n: string }>`SELECT COUNT(*) AS n FROM ${sql.table(table)} WHERE account_id = ${other.id}`.execute(t.database.db)).rows[0]!.n);
    assert.deepEqual([await left('conversations'), await left('conversation_days'), await left('conversation_day_gaps')], [0, 0, 0]);
    const mine = await new ConversationQueries(t.database.db).totals({ accountId: acct.id });
    assert.ok(mine.conversations > 0);
  });
});

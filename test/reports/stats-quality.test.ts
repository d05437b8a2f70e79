/**
 * GET /v1/reports/stats answers the answer rate and voice-to-voice p50/p95 (issue 24, Reports), in
 * the totals and per day, from conversations recorded as the conversation capability records them
 * (begin, turns with their `answered` flag and latency waterfall, end). The percentiles are the
 * nearest rank over every measured answer to the histogram's resolution (the middle of the exact
 * figure's bucket, checked against the same computation over the raw values), agree with a
 * conversation's own detail, are the same through the per-day rollup and
 * through a scan (whole days, cut days, running conversations, changes after the end), and empty
 * ranges answer null. The migration's backfills equal what the turns and the trigger kept.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { makeAgent } from '../sessions/helpers.js';
import { ConversationQueries, type ConversationFilter } from '../../src/conversation/queries.js';
import { backfillAnswerQuality, backfillConversationAnswers } from '../../src/core/db/migrations/0029_answer_quality.js';
import type { Db } from '../../src/core/db/database.js';
import { bucketValue, latencyBucket } from '../../src/conversation/latency-buckets.js';

/** An answer: known or not, its first audio (ms; null: the waterfall has none; undefined: no waterfall at all). */
type Answer = [known: boolean, firstAudio?: number | null];

/** Nearest rank, as the detail computes it: the value at rank ceil(p x n) of the sorted values. */
function exactRank(values: number[], percent: number): number | null {
  const sorted = [...values].sort((a, b) => a - b);
  if (!sorted.length) return null;
  return sorted[Math.ceil((percent * sorted.length) / 100) - 1]!;
}

/** What the stats answer for an exact figure: the middle of its histogram bucket. */
const approx = (ms: number) => bucketValue(latencyBucket(ms));

/** The stats' percentile: the exact nearest rank, to the histogram's resolution (bucketing keeps the order). */
function nearestRank(values: number[], percent: number): number | null {
  const exact = exactRank(values, percent);
  return exact === null ? null : approx(exact);
}

const day = (d: string) => new Date(`${d}T00:00:00Z`);

forEachEngine('reports: answer rate and voice-to-voice percentiles in the stats', (engine) => {
  let t: TestApp;
  let acct: { id: number; key: string };
  let alice: number;
  let bob: number;
  const ids: Record<string, string> = {};
  /** What each conversation was recorded with, to compute the expected figures from. */
  const recorded: Array<{ name: string; agentId: number; start: Date; answers: Answer[] }> = [];

  async function record(name: string, o: { agentId: number; start: string; seconds?: number; answers: Answer[]; visitorId?: string }) {
    const id = crypto.randomUUID();
    ids[name] = id;
    const started = new Date(o.start);
    recorded.push({ name, agentId: o.agentId, start: started, answers: o.answers });
    const session = { id, account_id: acct.id, agent_id: o.agentId, mode: 'conversation' as const, created_at: started };
    await t.context.conversations.begin({ session, visitorId: o.visitorId ?? `v_${name}` });
    let at = started.getTime();
    const next = () => new Date((at += 1000));
    // A welcome is an agent turn, not an answer: it counts in neither the rate nor the latencies.
    await t.context.conversations.addTurn(id, { role: 'agent', text: 'Hi! How can I help?', at: next(), details: { source: 'welcome' } });
    for (const [i, [known, firstAudio]] of o.answers.entries()) {
      await t.context.conversations.addTurn(id, { role: 'visitor', text: `question ${i}`, at: next(), details: { source: 'typed' } });
      const details: Record<string, unknown> = { source: 'answer', answered: known, ...(known ? {} : { gap_id: 100 + i }) };
      if (firstAudio !== undefined)
        details.latency_ms = {
          end_of_turn: 0,
          recognised: 0,
          first_text: firstAudio === null ? null : Math.max(0, firstAudio - 100),
          first_audio: firstAudio,
          heard: firstAudio === null ? null : firstAudio + 120,
        };
      await t.context.conversations.addTurn(id, { role: 'agent', text: known ? 'We open at eight.' : "I don't know that yet.", at: next(), details });
    }
    if (o.seconds !== undefined) {
      await t.context.conversations.end({
        ...session,
        ended_at: new Date(started.getTime() + o.seconds * 1000),
        duration_seconds: o.seconds,
        end_reason: 'stopped',
      });
    }
  }

  /** The figures the stats should answer for the recorded conversations `which` selects. */
  function expected(which: (c: (typeof recorded)[number]) => boolean) {
    const chosen = recorded.filter(which);
    const figures = (cs: typeof chosen) => {
      const answers = cs.flatMap((c) => c.answers);
      const known = answers.filter(([k]) => k).length;
      const ms = answers.map(([, f]) => f).filter((f): f is number => typeof f === 'number');
      return {
        answers: answers.length,
        answered: known,
        answer_rate: answers.length ? Math.round((known / answers.length) * 10_000) / 10_000 : null,
        voice_to_voice_ms: ms.length ? { p50: nearestRank(ms, 50), p95: nearestRank(ms, 95) } : null,
      };
    };
    const days = [...new Set(chosen.map((c) => c.start.toISOString().slice(0, 10)))].sort();
    return { totals: figures(chosen), days: new Map(days.map((d) => [d, figures(chosen.filter((c) => c.start.toISOString().startsWith(d)))])) };
  }

  const quality = (body: any) => ({ answers: body.answers, answered: body.answered, answer_rate: body.answer_rate, voice_to_voice_ms: body.voice_to_voice_ms });

  async function stats(query: string) {
    const res = await t.request('GET', `/v1/reports/stats${query}`, { key: acct.key });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  }

  /** The stats' quality figures against the expected ones: totals, and every day (days without conversations: null). */
  function assertFigures(body: any, want: ReturnType<typeof expected>, what: string) {
    assert.deepEqual(quality(body), want.totals, `${what}: totals`);
    for (const d of body.per_day) {
      const wanted = want.days.get(d.date) ?? { answers: 0, answered: 0, answer_rate: null, voice_to_voice_ms: null };
      assert.deepEqual(quality(d), wanted, `${what}: ${d.date}`);
    }
    assert.deepEqual(
      body.per_day.filter((d: any) => d.conversations > 0).map((d: any) => d.date),
      [...want.days.keys()],
      `${what}: the days`,
    );
  }

  before(async () => {
    t = await startTestApp(engine);
    acct = await t.account('paid');
    alice = await makeAgent(t, { name: 'Alice' }, acct.key);
    bob = await makeAgent(t, { name: 'Bob' }, acct.key);

    // 2026-04-01, Alice: twenty measured answers over two conversations, some the same to the
    // millisecond (the histogram counts them), 16 known. Sorted: 100 200 200 300 … as listed.
    const first = [100, 200, 200, 300, 420, 480, 480, 480, 510, 600];
    const second = [650, 700, 730, 730, 800, 900, 1000, 1200, 1500, 4000];
    await record('a1', { agentId: alice, start: '2026-04-01T09:00:00Z', seconds: 300, answers: first.map((ms, i) => [i % 4 !== 3, ms]) });
    await record('a2', { agentId: alice, start: '2026-04-01T23:59:00Z', seconds: 200, answers: second.map((ms, i) => [i % 4 !== 3, ms]) });
    // 2026-04-02, Bob: an answer without a waterfall and one whose audio never came (no first
    // audio): both count in the rate, neither in the latencies.
    await record('b1', {
      agentId: bob,
      start: '2026-04-02T10:00:00Z',
      seconds: 60,
      answers: [
        [true, 950],
        [false, undefined],
        [false, null],
        [true, 640],
      ],
    });
    // 2026-04-03: visitors only, no answer. 2026-04-04: nothing. 2026-04-05: one answer.
    await record('silent', { agentId: alice, start: '2026-04-03T12:00:00Z', seconds: 30, answers: [] });
    await record('late', { agentId: bob, start: '2026-04-05T08:00:00Z', seconds: 40, answers: [[true, 333]] });
    // Running, begun now: scanned, never in the rollup.
    await record('running', {
      agentId: alice,
      start: new Date(Date.now() - 5000).toISOString(),
      answers: [
        [true, 1234],
        [false, 77],
      ],
    });
  });
  after(() => t?.close());

  test('the figures, exact: the rate of known answers and nearest-rank p50/p95, in the totals and each day', async () => {
    const april = await stats('?date_from=2026-04-01&date_to=2026-04-30');
    assertFigures(
      april,
      expected((c) => c.start < day('2026-05-01')),
      'April',
    );
    // The same numbers written out, so the reference above cannot hide a shared mistake.
    const [d1, d2, d3, d4, d5] = april.per_day;
    assert.deepEqual(
      quality(d1),
      { answers: 20, answered: 16, answer_rate: 0.8, voice_to_voice_ms: { p50: approx(600), p95: approx(1500) } },
      'rank 10 of 20 is 600, rank 19 is 1500',
    );
    assert.deepEqual(
      quality(d2),
      { answers: 4, answered: 2, answer_rate: 0.5, voice_to_voice_ms: { p50: approx(640), p95: approx(950) } },
      'two measured of four answers',
    );
    assert.deepEqual(
      [d3.date, d3.conversations, d3.answer_rate, d3.voice_to_voice_ms],
      ['2026-04-03', 1, null, null],
      'a day with conversations but no answer',
    );
    assert.deepEqual(
      [d4.date, d4.conversations, d4.answers, d4.answer_rate, d4.voice_to_voice_ms],
      ['2026-04-04', 0, 0, null, null],
      'a day without conversations',
    );
    assert.deepEqual(quality(d5), { answers: 1, answered: 1, answer_rate: 1, voice_to_voice_ms: { p50: approx(333), p95: approx(333) } });
    // 23 measured: rank 12 (p50) and rank 22 (p95) of 100 200 200 300 333 420 480 480 480 510 600 640 650 700 730 730 800 900 950 1000 1200 1500 4000.
    assert.deepEqual(quality(april), { answers: 25, answered: 19, answer_rate: 0.76, voice_to_voice_ms: { p50: approx(640), p95: approx(1500) } });

    // Everything, the running conversation included.
    assertFigures(
      await stats(''),
      expected(() => true),
      'everything',
    );
    // One agent.
    assertFigures(
      await stats(`?agent_id=${bob}`),
      expected((c) => c.agentId === bob),
      'Bob',
    );
    assertFigures(
      await stats(`?agent_id=${alice}&date_to=2026-04-30`),
      expected((c) => c.agentId === alice && c.start < day('2026-05-01')),
      'Alice in April',
    );
  });

  test('empty ranges and days answer null, not zero', async () => {
    const none = await stats('?date_from=2025-01-01&date_to=2025-01-31');
    assert.deepEqual([none.conversations, none.answers, none.answered, none.answer_rate, none.voice_to_voice_ms, none.per_day], [0, 0, 0, null, null, []]);
    const silent = await stats('?date_from=2026-04-03&date_to=2026-04-03');
    assert.deepEqual([silent.conversations, silent.answer_rate, silent.voice_to_voice_ms], [1, null, null]);
    assert.deepEqual([silent.per_day[0].answer_rate, silent.per_day[0].voice_to_voice_ms], [null, null]);
    // A scan (a visitor filter) that matches nothing.
    const nobody = await stats('?visitor_id=nobody');
    assert.deepEqual([nobody.answer_rate, nobody.voice_to_voice_ms], [null, null]);
  });

  test('the rollup, a scan and cut days answer the same', async () => {
    // min_duration_seconds=0 matches everything but is not a rollup filter: it scans.
    for (const query of ['date_from=2026-04-01&date_to=2026-04-30', `date_to=2026-04-30&agent_id=${alice}`, 'date_from=2026-04-02&date_to=2026-04-05']) {
      const rollup = await stats(`?${query}`);
      assert.deepEqual(rollup, await stats(`?${query}&min_duration_seconds=0`), query);
    }
    // Date-times cut a day: its rows are scanned, the whole days read from the rollup.
    const cut = await stats('?date_from=2026-04-01T12:00:00Z&date_to=2026-04-05');
    assertFigures(
      cut,
      expected((c) => c.start >= new Date('2026-04-01T12:00:00Z') && c.start < day('2026-04-06')),
      'from noon of the first',
    );
    assert.deepEqual(
      quality(cut.per_day[0]),
      { answers: 10, answered: 8, answer_rate: 0.8, voice_to_voice_ms: { p50: approx(800), p95: approx(4000) } },
      'only a2 on the cut day',
    );
    // A visitor filter scans; one conversation's figures equal its own detail's.
    const one = await stats('?visitor_id=v_b1');
    const detail = await t.request('GET', `/v1/reports/conversations/${ids.b1}`, { key: acct.key });
    assert.equal(detail.status, 200);
    assert.deepEqual(one.voice_to_voice_ms, { p50: approx(detail.body.latency.first_audio_ms.median), p95: approx(detail.body.latency.first_audio_ms.p95) });
    const known = detail.body.transcript.filter((turn: any) => turn.answered !== null);
    assert.equal(one.answer_rate, known.filter((turn: any) => turn.answered).length / known.length);

    // The queries both ways, in one transaction (the running one's row is the same instant), for whole and cut days.
    const filters: ConversationFilter[] = [
      { accountId: acct.id },
      { accountId: acct.id, agentId: alice },
      { accountId: acct.id, from: day('2026-04-02') },
      { accountId: acct.id, from: new Date('2026-04-01T23:00:00Z'), before: new Date('2026-04-02T11:00:00Z') },
      { accountId: acct.id, from: new Date('2026-04-01T12:00:00Z'), before: day('2026-04-06') },
    ];
    await t.database.db.transaction().execute(async (trx) => {
      const q = new ConversationQueries(trx as unknown as Db);
      for (const filter of filters) {
        const scanned = await q.latency(filter, { rollup: false });
        assert.deepEqual(await q.latency(filter, { rollup: true }), scanned, JSON.stringify(filter));
        // The one-pass stats (latencies gathered beside the sums) agree with both.
        for (const rollup of [true, false]) {
          const both = await q.statsWithLatency(filter, { rollup });
          assert.deepEqual(both.latency, scanned, `statsWithLatency, rollup ${rollup}: ${JSON.stringify(filter)}`);
          assert.deepEqual({ days: both.days, gaps: both.gaps }, await q.stats(filter, { rollup }));
        }
      }
    });
  });

  test('changes after the end move the figures; the migration backfills equal what was kept', async () => {
    const before = await stats('?date_from=2026-04-05&date_to=2026-04-05');
    assert.deepEqual(quality(before), { answers: 1, answered: 1, answer_rate: 1, voice_to_voice_ms: { p50: approx(333), p95: approx(333) } });
    // A late answer recorded after the end (the answer is written once it has been heard).
    await t.context.conversations.addTurn(ids.late!, {
      role: 'agent',
      text: 'a late answer',
      details: { source: 'answer', answered: false, latency_ms: { first_audio: 2000 } },
    });
    const later = await stats('?date_from=2026-04-05&date_to=2026-04-05');
    assert.deepEqual(quality(later), { answers: 2, answered: 1, answer_rate: 0.5, voice_to_voice_ms: { p50: approx(333), p95: approx(2000) } });
    assert.deepEqual(later, await stats('?date_from=2026-04-05&date_to=2026-04-05&min_duration_seconds=0'), 'the rollup kept the late answer');

    const read = async (db: Db) => ({
      conversations: (await sql`SELECT id::text, answers, answered, answer_ms FROM conversations WHERE account_id = ${acct.id} ORDER BY id`.execute(db)).rows,
      days: (
        await sql`SELECT agent_id, day::text, answers::int, answered::int, answer_hist FROM conversation_days WHERE account_id = ${acct.id} ORDER BY 1, 2`.execute(
          db,
        )
      ).rows,
    });
    const kept = await read(t.database.db);
    const april1 = kept.days.filter((r: any) => r.day === '2026-04-01').map((r: any) => r.answer_hist as number[]);
    assert.ok(
      april1.some((h) => h[latencyBucket(480)] === 3),
      '480 ms three times on 2026-04-01: its bucket counted 3',
    );
    const rebuilt = await t.database.db.transaction().execute(async (trx) => {
      await sql`UPDATE conversations SET answers = 0, answered = 0, answer_ms = '{}' WHERE account_id = ${acct.id}`.execute(trx);
      await backfillConversationAnswers(trx);
      await backfillAnswerQuality(trx);
      return read(trx as unknown as Db);
    });
    assert.deepEqual(rebuilt, kept);

    // A deleted conversation takes its answers and latencies out of the rollup.
    await sql`DELETE FROM conversations WHERE id = ${ids.late}`.execute(t.database.db);
    const gone = await stats('?date_from=2026-04-05&date_to=2026-04-05');
    assert.deepEqual([gone.conversations, gone.answer_rate, gone.voice_to_voice_ms, gone.per_day], [0, null, null, []]);
    const left = (
      await sql<{
        n: number;
      }>`SELECT COALESCE(SUM(n), 0)::int AS n FROM conversation_days, unnest(answer_hist) AS n WHERE account_id = ${acct.id} AND day = '2026-04-05'`.execute(
        t.database.db,
      )
    ).rows[0]!.n;
    assert.equal(left, 0, 'no latency left in the day');
  });

  test('the database and the code put a latency in the same bucket', async () => {
    const values = [-5, 0, 19, 20, 333, 999, 1499, 1500, 1599, 1600, 4999, 5000, 5999, 29_999, 30_000, 86_400_000];
    const { rows } = await sql<{ ms: number; bucket: number }>`SELECT v AS ms, answer_ms_bucket(v) AS bucket FROM unnest(${values}::int[]) AS v`.execute(
      t.database.db,
    );
    assert.deepEqual(
      rows.map((r) => Number(r.bucket)),
      values.map(latencyBucket),
    );
    // Each bucket's figure lies inside it, and within 10 ms of every latency below 1.5 s.
    for (const ms of [0, 333, 999, 1499]) assert.ok(Math.abs(approx(ms) - ms) <= 10, `${ms}`);
    for (const ms of [1500, 2345, 4999]) assert.ok(Math.abs(approx(ms) - ms) <= 50, `${ms}`);
  });

  test('/openapi.json documents the new fields', async () => {
    const res = await t.request('GET', '/openapi.json', { key: null });
    assert.equal(res.status, 200);
    const answer = res.body.paths['/v1/reports/stats'].get.responses['200'].content['application/json'];
    const text = JSON.stringify(answer.schema);
    for (const field of ['answer_rate', 'voice_to_voice_ms', 'p50', 'p95', 'answers', 'answered']) assert.ok(text.includes(`"${field}"`), field);
    const properties = answer.schema.properties ?? {};
    assert.ok(properties.voice_to_voice_ms && properties.answer_rate, 'in the totals');
    assert.ok(properties.per_day.items.properties.voice_to_voice_ms && properties.per_day.items.properties.answer_rate, 'and per day');
  });
});

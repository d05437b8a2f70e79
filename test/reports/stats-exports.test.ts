/**
 * Reports: stats arithmetic (minutes, averages, the per-day series, handoffs delivered, gaps
 * found), one conversation with its transcript and waterfall, the CSV and transcript exports,
 * reports/me and reports/agents.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { forEachEngine, type TestApp } from '../support/app.js';
import { assertCoded, itemAt, makeAgent } from '../sessions/helpers.js';
import { startReportsApp } from './support.js';
import { bucketValue, latencyBucket } from '../../src/conversation/latency-buckets.js';

/** A latency as the stats give it: the middle of its histogram bucket. */
const approx = (ms: number) => bucketValue(latencyBucket(ms));

forEachEngine('reports: stats, one conversation, exports, totals', (engine) => {
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

  test('stats: counts, minutes, averages, turns, per-day series, handoffs, gaps', async () => {
    const res = await get('/v1/reports/stats?date_to=2026-01-31');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      conversations: 3,
      minutes: 12.5, // 120 + 30 + 600 s
      average_duration_seconds: 250,
      visitor_turns: 4,
      answers: 4, // c1's, c2's and c3's two
      answered: 1,
      answer_rate: 0.25,
      voice_to_voice_ms: { p50: approx(500), p95: approx(900) }, // c1's 500 and c2's 900 (c3's answers were not measured), to the histogram's 20 ms buckets
      running: 0,
      agent_turns: 4,
      handoffs_delivered: 2,
      gaps_found: 2, // gap 7 (twice) and gap 8
      per_day: [
        {
          date: '2026-01-10',
          conversations: 2,
          minutes: 2.5,
          average_duration_seconds: 75,
          visitor_turns: 3,
          answers: 2,
          answered: 1,
          answer_rate: 0.5,
          voice_to_voice_ms: { p50: approx(500), p95: approx(900) },
        },
        {
          date: '2026-01-11',
          conversations: 0,
          minutes: 0,
          average_duration_seconds: 0,
          visitor_turns: 0,
          answers: 0,
          answered: 0,
          answer_rate: null,
          voice_to_voice_ms: null,
        },
        {
          date: '2026-01-12',
          conversations: 1,
          minutes: 10,
          average_duration_seconds: 600,
          visitor_turns: 1,
          answers: 2,
          answered: 0,
          answer_rate: 0,
          voice_to_voice_ms: null,
        },
      ],
    });
    const one = await get(`/v1/reports/stats?agent_id=${alice}&q=hours`);
    assert.deepEqual([one.body.conversations, one.body.minutes, one.body.gaps_found, one.body.handoffs_delivered, one.body.per_day.length], [1, 0.5, 1, 1, 1]);
    const none = await get('/v1/reports/stats?visitor_id=nobody');
    assert.deepEqual(none.body, {
      conversations: 0,
      minutes: 0,
      average_duration_seconds: 0,
      visitor_turns: 0,
      answers: 0,
      answered: 0,
      answer_rate: null,
      voice_to_voice_ms: null,
      running: 0,
      agent_turns: 0,
      handoffs_delivered: 0,
      gaps_found: 0,
      per_day: [],
    });
    const all = await get('/v1/reports/stats');
    assert.equal(all.body.conversations, 4);
    assert.equal(all.body.running, 1);
  });

  test('one conversation: the item, its transcript in order and its latency waterfall', async () => {
    const res = await get(`/v1/reports/conversations/${ids.c1}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.conversation_id, ids.c1);
    assert.equal(res.body.agent_name, 'Alice desk');
    assert.deepEqual(
      res.body.transcript.map((t: any) => [t.role, t.text, t.at]),
      [
        ['visitor', 'I want a refund please', '2026-01-10T10:00:05.000Z'],
        ['agent', 'Sure, refunds take five days.', '2026-01-10T10:00:10.000Z'],
        ['visitor', 'Thanks', '2026-01-10T10:00:15.000Z'],
      ],
    );
    assert.deepEqual(res.body.transcript[1].latency_ms, { end_of_turn: 0, recognised: 0, first_text: 300, first_audio: 500, heard: 650 });
    assert.equal(res.body.transcript[1].answered, true);
    assert.equal(res.body.transcript[0].latency_ms, null);
    assert.equal(res.body.transcript_truncated, false);
    assert.deepEqual(res.body.latency, { answers: 1, first_audio_ms: { median: 500, p95: 500, max: 500 }, heard_ms: { median: 650, p95: 650, max: 650 } });
    const gap = await get(`/v1/reports/conversations/${ids.c2}`);
    assert.equal(gap.body.transcript[1].gap_id, 7);
    assert.deepEqual(gap.body.notif_categories, ['lead']);
  });

  test('the CSV export: the filtered list, quoted cells, an attachment', async () => {
    const res = await fetch(`${t.url}/v1/reports/export/conversations?date_to=2026-01-31`, { headers: { authorization: `Bearer ${acct.key}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/csv/);
    assert.match(res.headers.get('content-disposition')!, /^attachment; filename="conversations-\d{4}-\d{2}-\d{2}\.csv"$/);
    const text = await res.text();
    const lines = text.split('\r\n');
    assert.equal(
      lines[0],
      'conversation_id,session_id,agent_id,agent_name,mode,visitor_id,started_at,ended_at,duration_seconds,end_reason,visitor_turns,agent_turns,notif_categories,handoffs_delivered',
    );
    assert.equal(lines.length, 5, 'header, three rows, and the final CRLF');
    assert.equal(lines[4], '');
    assert.equal(
      lines[1],
      `${ids.c3},${ids.c3},${bob},"Bob, the ""night"" desk",conversation,v_1,2026-01-12T08:00:00.000Z,2026-01-12T08:10:00.000Z,600,stopped,1,2,,0`,
    );
    assert.equal(lines[2], `${ids.c2},${ids.c2},${alice},Alice desk,conversation,v_2,2026-01-10T23:59:59.000Z,2026-01-11T00:00:29.000Z,30,stopped,1,1,lead,1`);
    const filtered = await (await fetch(`${t.url}/v1/reports/export/conversations?q=refund`, { headers: { authorization: `Bearer ${acct.key}` } })).text();
    assert.deepEqual(
      filtered
        .trim()
        .split('\r\n')
        .slice(1)
        .map((l) => l.split(',')[0]),
      [ids.c1],
    );
  });

  test('the transcript export: readable text, multi-line turns indented', async () => {
    const res = await fetch(`${t.url}/v1/reports/export/conversations/${ids.c3}`, { headers: { authorization: `Bearer ${acct.key}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/plain/);
    assert.equal(res.headers.get('content-disposition'), `attachment; filename="conversation-${ids.c3}.txt"`);
    assert.equal(
      await res.text(),
      [
        `Conversation ${ids.c3}`,
        `Agent: Bob, the "night" desk (${bob}), conversation mode`,
        'Visitor: v_1',
        'Started: 2026-01-12T08:00:00.000Z',
        'Ended: 2026-01-12T08:10:00.000Z (stopped)',
        'Duration: 10:00, 1 visitor turn',
        '',
        '[00:05] Visitor: Line one, with a comma',
        '    "quoted" line two',
        '[00:10] Bob, the "night" desk: Noted.',
        '[00:15] Bob, the "night" desk: Anything else?',
        '',
      ].join('\n'),
    );
  });

  test('reports/me and reports/agents: all time and this month', async () => {
    const me = await get('/v1/reports/me');
    assert.equal(me.status, 200);
    assert.equal(me.body.account_id, acct.id);
    assert.equal(me.body.plan, 'paid');
    assert.equal(me.body.agents, 2);
    assert.equal(me.body.conversations, 4);
    assert.equal(me.body.running, 1);
    assert.equal(me.body.handoffs_delivered, 2);
    assert.equal(me.body.visitor_turns, 5);
    assert.equal(me.body.first_conversation_at, '2026-01-10T10:00:00.000Z');
    assert.equal(me.body.this_month.month, new Date().toISOString().slice(0, 7));
    assert.equal(me.body.this_month.conversations, 1, 'only the running one began this month');
    assert.ok(me.body.minutes >= 12.5 && me.body.minutes < 13);
    const agents = await get('/v1/reports/agents');
    assert.equal(agents.status, 200);
    const [a, b] = agents.body.agents;
    assert.deepEqual(
      [
        a.agent_id,
        a.agent_name,
        a.exists,
        a.conversations,
        a.minutes,
        a.average_duration_seconds,
        a.visitor_turns,
        a.handoffs_delivered,
        a.this_month.conversations,
      ],
      [alice, 'Alice desk', true, 2, 2.5, 75, 3, 2, 0],
    );
    assert.deepEqual([b.agent_id, b.conversations, b.running, b.this_month.conversations], [bob, 2, 1, 1]);
    // A new agent without conversations is listed with zeroes; a deleted one keeps its history.
    const fresh = await makeAgent(t, { name: 'Fresh' }, acct.key);
    assert.equal((await t.request('DELETE', `/v1/agent/${alice}?confirm=true`, { key: acct.key })).status, 204);
    const after = (await get('/v1/reports/agents')).body.agents;
    assert.deepEqual(
      after.map((x: any) => [x.agent_id, x.exists, x.conversations]),
      [
        [alice, false, 2],
        [bob, true, 2],
        [fresh, true, 0],
      ],
    );
    assert.equal(after[0].agent_name, 'Alice desk');
  });
});

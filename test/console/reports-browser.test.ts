/**
 * The console's Reports page in Debian's Chromium (issue 24, Reports): with conversations recorded
 * as the conversation capability records them (answers known or not, each with its latency
 * waterfall), the page shows the totals, four plots (conversations, minutes, answer rate and
 * voice-to-voice p50/p95 per day), each with a "Show data table" button (aria-expanded) whose
 * captioned table has the API's numbers, a table per agent with its answer rate, and a narrower
 * range or one agent that changes what is shown. Found by role and accessible name; axe finds no
 * serious or critical issue.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { Browser, Locator, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.js';
import { hasChromium, launch } from '../player/support/browser.js';
import { consolePage, expectAccessible, signIn } from './support/console-page.js';
import { makeAgent } from '../sessions/helpers.js';
import { until } from '../support/until.js';
import { bucketValue, latencyBucket } from '../../src/conversation/latency-buckets.js';

/** A latency as the stats give it: the middle of its histogram bucket. */
const approx = (ms: number) => bucketValue(latencyBucket(ms));

const skip = hasChromium() ? false : 'Debian chromium is not installed';

const DAY_MS = 86_400_000;
/** Ten in the morning (UTC) of `daysAgo` days before today, UTC: inside the page's default range of the last 30 days. */
const morning = (daysAgo: number) => new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - daysAgo * DAY_MS + 10 * 3_600_000);

describe('the console Reports page in a browser', { skip, timeout: 180_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let alice: number;
  let bob: number;

  /** A conversation: begin, a welcome, visitor questions each with an answer (known or not, first audio ms), end. */
  async function record(agentId: number, start: Date, seconds: number, answers: Array<[known: boolean, firstAudio: number | null]>) {
    const id = crypto.randomUUID();
    const session = { id, account_id: t.accountId, agent_id: agentId, mode: 'conversation' as const, created_at: start };
    await t.context.conversations.begin({ session, visitorId: 'v_browser' });
    let at = start.getTime();
    await t.context.conversations.addTurn(id, { role: 'agent', text: 'Hello!', at: new Date((at += 500)), details: { source: 'welcome' } });
    for (const [known, firstAudio] of answers) {
      await t.context.conversations.addTurn(id, { role: 'visitor', text: 'When do you open?', at: new Date((at += 500)), details: { source: 'typed' } });
      await t.context.conversations.addTurn(id, {
        role: 'agent',
        text: known ? 'At seven.' : "I don't know yet.",
        at: new Date((at += 500)),
        details: {
          source: 'answer',
          answered: known,
          latency_ms: { end_of_turn: 0, recognised: 0, first_text: 200, first_audio: firstAudio, heard: firstAudio === null ? null : firstAudio + 120 },
        },
      });
    }
    await t.context.conversations.end({ ...session, ended_at: new Date(start.getTime() + seconds * 1000), duration_seconds: seconds, end_reason: 'stopped' });
  }

  before(async () => {
    t = await startTestApp('pglite');
    alice = await makeAgent(t, { name: 'Alice desk' });
    bob = await makeAgent(t, { name: 'Bob desk' });
    await record(alice, morning(5), 90, [
      [true, 610],
      [true, 820],
      [false, 1900],
    ]);
    await record(alice, morning(5), 45, [[true, 700]]);
    await record(bob, morning(3), 120, [
      [false, 950],
      [true, null],
      [true, 530],
    ]);
    await record(bob, morning(1), 30, []);
    browser = await launch();
    ({ page } = await consolePage(browser));
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  const axe = (label: string) => expectAccessible(page, label);

  /** A table's body as text cells, row by row (the row header first). */
  const cells = (table: Locator) =>
    table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => Array.from(r.children).map((c) => (c.textContent ?? '').trim())));
  const dash = (v: number | null, unit: string) => (v === null ? '—' : `${v}${unit}`);
  const percent = (rate: number | null) => (rate === null ? null : Math.round(rate * 10_000) / 100);

  /** Opens a plot's data table with its button and checks the button says so. */
  async function openTable(title: string): Promise<Locator> {
    const section = page.getByRole('region', { name: title });
    const button = section.getByRole('button', { name: 'Show data table' });
    assert.equal(await button.getAttribute('aria-expanded'), 'false', title);
    await button.click();
    const hide = section.getByRole('button', { name: 'Hide data table' });
    await hide.waitFor();
    assert.equal(await hide.getAttribute('aria-expanded'), 'true', title);
    const table = section.getByRole('table', { name: `${title}: the numbers` });
    await table.waitFor();
    return table;
  }

  it('signs in and opens Reports: totals, four plots, and a table per agent', async () => {
    await signIn(t, page);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Reports' }).click();
    await page.getByRole('heading', { level: 1, name: 'Reports' }).waitFor();
    for (const title of ['Conversations per day', 'Minutes per day', 'Answer rate per day', 'Voice-to-voice per day']) {
      const region = page.getByRole('region', { name: title });
      await region.getByRole('img', { name: new RegExp(`^${title}`) }).waitFor();
      // uPlot drew into the region: a canvas with a size.
      await region.locator('canvas').first().waitFor();
    }
    const stats = (
      await t.request('GET', `/v1/reports/stats?date_from=${morning(29).toISOString().slice(0, 10)}&date_to=${new Date().toISOString().slice(0, 10)}`)
    ).body;
    // 7 answers, 5 known; measured 530 610 700 820 950 1900: p50 rank 3 = 700, p95 rank 6 = 1900 (each given as its histogram bucket's middle).
    assert.deepEqual([stats.answers, stats.answered, stats.answer_rate, stats.voice_to_voice_ms], [7, 5, 0.7143, { p50: approx(700), p95: approx(1900) }]);
    const totals = page.getByRole('list', { name: 'Totals' });
    await totals.getByText(`${percent(stats.answer_rate)} %`, { exact: true }).waitFor();
    await totals.getByText(`${approx(700)} ms`, { exact: true }).waitFor();
    await totals
      .locator('li')
      .filter({ hasText: `p95 ${approx(1900)} ms` })
      .waitFor();

    const agents = page.getByRole('table', { name: 'By agent (all time and this month)' });
    await agents.waitFor();
    const byAgent = (await t.request('GET', '/v1/reports/agents')).body.agents;
    assert.deepEqual(
      await cells(agents),
      byAgent.map((a: any) => [
        a.agent_name,
        String(a.conversations),
        String(a.minutes),
        dash(percent(a.answer_rate), ' %'),
        String(a.this_month.conversations),
        String(a.running),
      ]),
    );
    assert.deepEqual(
      byAgent.map((a: any) => a.answer_rate),
      [0.75, 0.6667],
    );
    await axe('reports');
  });

  it("each plot's data table shows the API's numbers, day by day", async () => {
    const stats = (
      await t.request('GET', `/v1/reports/stats?date_from=${morning(29).toISOString().slice(0, 10)}&date_to=${new Date().toISOString().slice(0, 10)}`)
    ).body;
    const perDay: any[] = stats.per_day;
    assert.equal(perDay[0].date, morning(5).toISOString().slice(0, 10));
    assert.equal(perDay.length, 5, 'from the first conversation to the last, empty days included');

    const rate = await openTable('Answer rate per day');
    assert.deepEqual(
      await cells(rate),
      perDay.map((d) => [d.date, dash(percent(d.answer_rate), ' %')]),
    );
    assert.deepEqual(
      (await cells(rate)).map((r) => r[1]),
      ['75 %', '—', '66.67 %', '—', '—'],
      'a day with no answer, or no conversation, shows a dash',
    );

    const latency = await openTable('Voice-to-voice per day');
    assert.deepEqual(await page.getByRole('table', { name: 'Voice-to-voice per day: the numbers' }).locator('thead th').allTextContents(), [
      'Day',
      'p50',
      'p95',
    ]);
    assert.deepEqual(
      await cells(latency),
      perDay.map((d) => [d.date, dash(d.voice_to_voice_ms?.p50 ?? null, ' ms'), dash(d.voice_to_voice_ms?.p95 ?? null, ' ms')]),
    );
    assert.deepEqual((await cells(latency))[0], [perDay[0].date, `${approx(700)} ms`, `${approx(1900)} ms`]);

    const conversations = await openTable('Conversations per day');
    assert.deepEqual(
      await cells(conversations),
      perDay.map((d) => [d.date, String(d.conversations)]),
    );
    const minutes = await openTable('Minutes per day');
    assert.deepEqual(
      await cells(minutes),
      perDay.map((d) => [d.date, String(d.minutes)]),
    );
    await axe('reports with the data tables open');

    // And closed again: the button says so and the table is gone.
    const section = page.getByRole('region', { name: 'Answer rate per day' });
    await section.getByRole('button', { name: 'Hide data table' }).click();
    assert.equal(await section.getByRole('button', { name: 'Show data table' }).getAttribute('aria-expanded'), 'false');
    assert.equal(await section.getByRole('table', { name: /the numbers/ }).count(), 0);
  });

  it("one agent and a narrower range change the figures to that agent's", async () => {
    const from = morning(4).toISOString().slice(0, 10);
    await page.getByLabel('From date').fill(from);
    await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'Bob desk' });
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    const stats = (await t.request('GET', `/v1/reports/stats?date_from=${from}&date_to=${new Date().toISOString().slice(0, 10)}&agent_id=${bob}`)).body;
    assert.deepEqual([stats.conversations, stats.answer_rate, stats.voice_to_voice_ms], [2, 0.6667, { p50: approx(530), p95: approx(950) }]);
    const totals = page.getByRole('list', { name: 'Totals' });
    await totals.getByText('66.67 %', { exact: true }).waitFor();
    await totals.getByText('530 ms', { exact: true }).waitFor();
    // The latency table was left open: it stays open with the new numbers.
    const latency = page.getByRole('region', { name: 'Voice-to-voice per day' }).getByRole('table', { name: 'Voice-to-voice per day: the numbers' });
    await until(async () => (await cells(latency)).length === 3 || undefined, 10_000, 'the table of the new range');
    assert.deepEqual(
      await cells(latency),
      stats.per_day.map((d: any) => [d.date, dash(d.voice_to_voice_ms?.p50 ?? null, ' ms'), dash(d.voice_to_voice_ms?.p95 ?? null, ' ms')]),
    );
    assert.equal((await cells(latency)).length, 3);
    await axe('reports for one agent');
  });
});

/** Helpers for the knowledge and brain tests: an agent with a website, a build awaited to its end. */
import assert from 'node:assert/strict';
import type { TestApp } from '../../support/app.js';

export { until } from '../../support/until.js';

export async function agentWithWebsite(t: TestApp, websiteUrl: string | null, key?: string, name = 'Ava'): Promise<number> {
  const res = await t.request('POST', '/v1/agent/create', { key, body: { name, ...(websiteUrl ? { website_url: websiteUrl } : {}) } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}

/** Polls brain-status until it is neither pending nor processing; answers the last status and every status seen. */
export async function awaitBuild(t: TestApp, agentId: number, timeoutMs = 60_000): Promise<{ last: any; seen: string[] }> {
  const seen: string[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.request('GET', `/v1/agent/${agentId}/brain-status`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    if (seen[seen.length - 1] !== res.body.brain_status) seen.push(res.body.brain_status);
    if (res.body.brain_status !== 'pending' && res.body.brain_status !== 'processing') return { last: res.body, seen };
    if (Date.now() > deadline) throw new Error(`build still ${res.body.brain_status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One answer through the app's answering engine, collected. */
export async function ask(
  t: TestApp,
  agentId: number,
  text: string,
  options: {
    history?: Array<{ role: 'visitor' | 'agent'; text: string }>;
    missingDetails?: Array<{ name: string; description: string }>;
    accountId?: number;
  } = {},
) {
  let answer = '';
  let done: any;
  let firstTextMs: number | undefined;
  const started = performance.now();
  for await (const event of t.context.answers.answer({
    accountId: options.accountId ?? t.accountId,
    agentId,
    history: options.history ?? [],
    text,
    language: 'en',
    visitor: {},
    missingDetails: options.missingDetails,
    signal: new AbortController().signal,
  })) {
    if (event.type === 'text') {
      firstTextMs ??= performance.now() - started;
      answer += event.text;
    } else done = event;
  }
  return { text: answer.trim(), done, firstTextMs };
}

/** /metrics: the real-time path's counters in Prometheus text, loopback only unless METRICS_TOKEN is set. */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../support/app.js';
import { RenderClient, PlayerClient, voiced } from '../support/render-client.js';

describe('/metrics', () => {
  const apps: TestApp[] = [];
  after(async () => {
    for (const app of apps) await app.close();
  });

  it('counts live sessions and relayed frames, with the relay-delay histogram', async () => {
    const t = await startTestApp('pglite');
    apps.push(t);
    const agent = (await t.request('POST', '/v1/agent/create', { body: { name: 'Counted' } })).body;
    const started = (await t.request('POST', '/v1/sessions', { body: { agent_id: agent.id, mode: 'render' } })).body;
    const client = await RenderClient.open(started.ws_url);
    const player = await PlayerClient.open(started.player_url);
    client.speak(voiced(0.2));
    client.send({ type: 'agent.speak_end' });
    await client.waitForType('agent.speak_ended');
    const text = await (await fetch(`${t.url}/metrics`)).text();
    assert.match(text, /^presence_live_sessions 1$/m);
    const frames = Number(text.match(/^presence_frames_relayed_total (\d+)$/m)?.[1]);
    assert.ok(frames >= 5, `frames relayed: ${frames}`);
    assert.match(text, /^presence_relay_delay_seconds_count \d+$/m);
    assert.match(text, /^presence_clock_tick_lag_seconds_bucket\{le="\+Inf"\} \d+$/m);
    client.close();
    player.close();
  });

  it('counts answers prepared ahead, kept and thrown away by reason', async () => {
    const t = await startTestApp('pglite');
    apps.push(t);
    // The counters are the conversation loop's; move them so the figures cannot be defaults.
    const preemptiveStats = t.context.conversationLoop.preemptiveStats;
    preemptiveStats.started += 5;
    preemptiveStats.kept += 3;
    preemptiveStats.discarded.mismatch += 2;
    preemptiveStats.discardedWorkMs += 1500;
    const text = await (await fetch(`${t.url}/metrics`)).text();
    assert.match(text, new RegExp(`^presence_answers_prepared_total ${preemptiveStats.started}$`, 'm'));
    assert.match(text, new RegExp(`^presence_answers_prepared_kept_total ${preemptiveStats.kept}$`, 'm'));
    assert.match(text, new RegExp(`^presence_answers_prepared_discarded_total\\{reason="mismatch"\\} ${preemptiveStats.discarded.mismatch}$`, 'm'));
    assert.match(text, /^presence_answers_prepared_discarded_total\{reason="resumed"\} \d+$/m);
    assert.match(text, new RegExp(`^presence_answers_prepared_discarded_work_seconds_total ${preemptiveStats.discardedWorkMs / 1000}$`, 'm'));
  });

  it('with METRICS_TOKEN, answers only the bearer of that token', async () => {
    const t = await startTestApp('pglite', { METRICS_TOKEN: 'scrape-secret' });
    apps.push(t);
    assert.equal((await fetch(`${t.url}/metrics`)).status, 404, 'loopback alone is not enough once a token is set');
    assert.equal((await fetch(`${t.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status, 404);
    const ok = await fetch(`${t.url}/metrics`, { headers: { authorization: 'Bearer scrape-secret' } });
    assert.equal(ok.status, 200);
    assert.match(await ok.text(), /^presence_live_sessions 0$/m);
  });
});

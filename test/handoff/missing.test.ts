/**
 * missingDetails: what the answering engine is told to ask for while a conversation runs: the
 * required details of the agent's enabled, unpaused rules that the visitor has not given yet.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { makeAgent } from './support.js';

forEachEngine('handoff missing details', (engine) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(engine, { WEBHOOK_ALLOW_PRIVATE: '1' });
  });
  after(() => t.close());

  test('required details not yet given are missing; given ones, optional ones and disabled rules are not', async () => {
    const agent = await makeAgent(t);
    const rule = (name: string, details: unknown[], enabled = true) =>
      t.request('POST', `/v1/agent/${agent}/v2/rules`, { body: { name, details, destination: { type: 'inbox' }, enabled } });
    assert.equal(
      (
        await rule('Lead', [
          { name: 'email', description: "the visitor's email address", required: true },
          { name: 'phone', description: 'phone number', required: true },
          { name: 'notes', description: 'notes' },
        ])
      ).status,
      200,
    );
    assert.equal((await rule('Also email', [{ name: 'email', description: 'email', required: true }])).status, 200);
    assert.equal((await rule('Off', [{ name: 'budget', description: 'the budget', required: true }], false)).status, 200);
    const ask = (transcript: Array<{ role: 'visitor' | 'agent'; text: string }>) =>
      t.context.handoff.missingDetails({ accountId: t.accountId, agentId: agent, transcript });
    assert.deepEqual(await ask([{ role: 'visitor', text: 'Hi, do you do kitchens?' }]), [
      { name: 'email', description: "the visitor's email address" },
      { name: 'phone', description: 'phone number' },
    ]);
    assert.deepEqual(await ask([{ role: 'visitor', text: 'Hi, mail me at jo@example.com' }]), [{ name: 'phone', description: 'phone number' }]);
    assert.deepEqual(await ask([{ role: 'visitor', text: 'jo@example.com, or call +1 415 555 2671' }]), []);
    // Another account asking about this agent learns nothing.
    assert.deepEqual(await t.context.handoff.missingDetails({ accountId: t.accountId + 1000, agentId: agent, transcript: [] }), []);
  });
});

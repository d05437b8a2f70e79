/**
 * Issue 25's end-to-end flow, with both answering engines (offline, and the LLM engine against the
 * local OpenAI-compatible fake) on both database engines: a website on 127.0.0.1 → probe → schema →
 * extract → completion shows what is missing → the owner answers one → a visitor (`visitor.message`
 * in a conversation session) gets it; a correction changes what the agent says; an unanswered
 * question becomes a gap whose answer is used next time; deleting a page makes orphans, resolving
 * them keeps or drops them. Every edit reaches the next conversation without a rebuild.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { startTestSite, type TestSite } from '../knowledge/support/site.js';
import { agentWithWebsite, awaitBuild } from '../knowledge/support/brain.js';
import { startFakeLlm, type FakeLlm } from '../brain/support/fake-llm.js';
import { startConversation, waitForTurns } from '../conversation/support.js';

/** The fake model: a schema, facts from the passages it is shown, corrections, and answers from its prompt. */
function scriptModel(llm: FakeLlm): void {
  llm.respond = (body) => {
    const prompt: string = body.messages.map((m: any) => m.content).join('\n');
    const json = (value: unknown) => ({ kind: 'json' as const, content: JSON.stringify(value) });
    if (!body.stream && prompt.includes('design the questions')) {
      return json({ business_type: 'artisan bakery', questions: [{ question: 'Do you sell sourdough starter?', topic: 'services' }] });
    }
    if (!body.stream && prompt.includes('numbered passages')) {
      const facts: any[] = [];
      let question: number | undefined;
      for (const line of prompt.split('\n')) {
        const q = /^Question (\d+):/.exec(line);
        // The website does not say whether it sells its starter: the model leaves that question out.
        if (q) question = /starter/.test(line) ? undefined : Number(q[1]);
        const p = /^\[(\d+)\] (.*)$/.exec(line);
        if (p && question !== undefined && (!facts.some((f) => f.question_id === question) || /Saturday/.test(p[2]!)))
          facts.push({ question_id: question, text: p[2], passage: Number(p[1]) });
      }
      return json({ facts });
    }
    if (!body.stream && prompt.includes('corrects what their website assistant knows')) {
      const fact = /^\[(\d+)\] .*Saturday.*$/m.exec(prompt);
      return json({ changes: [{ fact_id: fact ? Number(fact[1]) : null, after: 'On Saturdays we are open from 7 am and close at 4 pm.' }] });
    }
    if (body.stream) {
      // Says the first passage it was given that speaks of the question (it, or the heading it is
      // filed under, shares one of the question's longer words), as a model grounded in its prompt
      // would; else it does not know. Retrieval may hand a model loosely related passages: judging
      // them is the model's part.
      const system: string = body.messages[0].content;
      const asked: string = String(body.messages[body.messages.length - 1].content).toLowerCase();
      const words = asked.match(/[a-z]{5,}/g) ?? [];
      const block = /Knowledge that may answer the question:\n((?:- .*\n?)*)/.exec(system)?.[1] ?? '';
      const passages = [...block.matchAll(/^- (.*?) \[(.*)\]$/gm)].map((m) => ({ text: m[1]!, filed: `${m[1]} ${m[2]}`.toLowerCase() }));
      const first = passages.find((p) => words.some((w) => p.filed.includes(w.replace(/s$/, ''))))?.text;
      return { kind: 'stream', steps: [{ text: first ?? '[NO_ANSWER] I do not know that, I will pass it on.' }] };
    }
    return undefined;
  };
}

forEachEngine('knowledge v2 end to end', (engine) => {
  for (const brain of ['offline', 'llm'] as const) {
    describe(`${brain} brain`, () => {
      let t: TestApp;
      let site: TestSite;
      let llm: FakeLlm | undefined;
      before(async () => {
        site = await startTestSite();
        if (brain === 'llm') {
          llm = await startFakeLlm();
          scriptModel(llm);
        }
        t = await startTestApp(engine, { CRAWL_ALLOW_PRIVATE: '1', ...(llm ? { LLM_URL: llm.url, LLM_MODEL: 'test-model' } : {}) });
      });
      after(async () => {
        await t.close();
        await site.close();
        await llm?.close();
      });

      /** One visitor turn in a new conversation session; the agent's reply. */
      async function visitorAsks(agent: number, text: string): Promise<string> {
        const { id } = await startConversation(t, agent);
        const sent = await t.request('POST', `/v1/sessions/${id}/commands`, { body: { type: 'visitor.message', text } });
        assert.equal(sent.status, 202, JSON.stringify(sent.body));
        const turns = await waitForTurns(t, id, 2);
        await t.request('POST', `/v1/sessions/${id}/stop`);
        return turns.filter((x) => x.role === 'agent').at(-1)!.text;
      }

      test('website → probe → schema → extract → completion → the owner answers → a visitor hears it; correction; gap; orphans', async () => {
        const agent = await agentWithWebsite(t, `${site.url}/`);
        const v2 = (path: string) => `/v1/agent/${agent}/v2${path}`;

        const probe = await t.request('POST', v2('/probe'), { body: {} });
        assert.equal(probe.body.reachable, true);
        assert.equal(probe.body.business_type, 'bakery');
        assert.equal((await t.request('POST', v2('/schema/generate'))).status, 200);
        assert.equal((await awaitBuild(t, agent)).last.brain_status, 'complete');
        let view = (await t.request('GET', v2('/brain'))).body;
        if (brain === 'llm') {
          assert.equal(view.business_type, 'artisan bakery');
          assert.ok(view.questions.some((q: any) => q.question === 'Do you sell sourdough starter?'));
        }
        for (const key of ['hours', 'prices', 'services', 'contact', 'booking', 'cancellation'])
          assert.ok(
            view.questions.some((q: any) => q.key === key),
            key,
          );

        const pages = ['/', '/contact', '/faq', '/prices'].map((p) => ({ url: `${site.url}${p}`, is_primary: true }));
        assert.equal((await t.request('POST', v2('/extract'), { body: { pages } })).status, 200);
        assert.equal((await awaitBuild(t, agent)).last.brain_status, 'complete');
        view = (await t.request('GET', v2('/brain'))).body;
        const hoursId = view.questions.find((q: any) => q.key === 'hours').id;
        assert.ok(
          view.facts.some((f: any) => f.question_id === hoursId && f.sources[0].kind === 'page'),
          'the hours were extracted from a page',
        );
        if (brain === 'llm')
          assert.ok(
            view.facts.every((f: any) => f.confidence === 0.9),
            'the model extracted the facts',
          );
        const completion = (await t.request('GET', v2('/completion'))).body;
        assert.ok(completion.missing.length > 0 && completion.percent < 100);
        const missing = completion.missing[0];
        const answered = await t.request('POST', v2('/answer'), {
          body: { question_id: missing.question_id, answer: 'Ask for Rosalind, our head baker, who handles this personally.' },
        });
        assert.equal(answered.body.answered, completion.answered + 1);
        assert.match(await visitorAsks(agent, missing.question), /Rosalind/);

        // A correction: previewed, applied, and said from the next conversation on.
        const preview = await t.request('POST', v2('/correction'), { body: { text: 'on Saturdays we now close at 4 pm' } });
        assert.equal(preview.status, 200, JSON.stringify(preview.body));
        assert.equal(preview.body.engine, brain);
        assert.match(preview.body.changes[0].before ?? '', /Saturday/);
        assert.equal((await t.request('POST', v2('/correction/apply'), { body: { preview_id: preview.body.preview_id } })).status, 200);
        const saturday = await visitorAsks(agent, 'What time do you close on Saturday?');
        assert.match(saturday, /4 pm/);
        assert.doesNotMatch(saturday, /3(:00)? pm/);

        // A question nobody answered becomes a gap; its answer is used next time.
        const unknown = await visitorAsks(agent, 'Can I bring my parrot inside?');
        assert.doesNotMatch(unknown, /parrots? (are|is) welcome/i);
        const gaps = (await t.request('GET', v2('/gaps?status=open'))).body.gaps;
        const gap = gaps.find((g: any) => /parrot/i.test(g.question));
        assert.ok(gap, JSON.stringify(gaps));
        assert.equal((await t.request('POST', v2(`/gaps/${gap.id}/answer`), { body: { answer: 'Parrots are welcome on the patio only.' } })).status, 200);
        assert.match(await visitorAsks(agent, 'Can I bring my parrot inside?'), /Parrots are welcome on the patio/);
        const gapFact = (await t.request('GET', v2('/brain'))).body.facts.find((f: any) => /Parrots/.test(f.text));
        assert.deepEqual(gapFact.sources, [{ kind: 'gap', ref: gap.id }]);

        // Deleting a page makes orphans; keep makes one the owner's, drop deletes the rest.
        view = (await t.request('GET', v2('/brain'))).body;
        const listed = (await t.request('GET', `/v1/agent/${agent}/pages/list`)).body;
        const faq = listed.find((p: any) => p.url.endsWith('/faq'));
        const fromFaq = view.facts.filter((f: any) => f.sources.length === 1 && f.sources[0].kind === 'page' && f.sources[0].ref === faq.id);
        assert.ok(fromFaq.length >= 1);
        await t.request('DELETE', `/v1/agent/${agent}/pages/${faq.id}?confirm=true`);
        const orphans = (await t.request('GET', v2('/orphans'))).body.orphans;
        assert.deepEqual(orphans.map((f: any) => f.id).sort(), fromFaq.map((f: any) => f.id).sort());
        const [keep, ...rest] = orphans;
        await t.request('POST', v2('/orphans/resolve'), { body: { fact_ids: [keep.id], action: 'keep' } });
        const left = await t.request('POST', v2('/orphans/resolve'), { body: { fact_ids: rest.map((f: any) => f.id), action: 'drop' } });
        assert.deepEqual(left.body.orphans, []);
        const after = (await t.request('GET', v2('/brain'))).body.facts;
        assert.ok(after.find((f: any) => f.id === keep.id).owner);
        for (const f of rest) assert.ok(!after.some((x: any) => x.id === f.id));
      });

      test('behavior and dynamic instructions reach the next conversation: unknown_answer is said, visitor values fill the instructions', async () => {
        const agent = await agentWithWebsite(t, `${site.url}/`, undefined, 'Ava');
        const v2 = (path: string) => `/v1/agent/${agent}/v2${path}`;
        assert.equal(
          (await t.request('PATCH', v2('/behavior'), { body: { unknown_answer: 'Please ask Rosalind at the counter.', tone: 'formal' } })).status,
          200,
        );
        assert.equal(
          (await t.request('PATCH', v2('/dynamic-instructions'), { body: { instructions: 'Call the visitor {{visitor.first_name}}; plan {{visitor.plan}}.' } }))
            .status,
          200,
        );
        const { row } = await t.context.sessions.start(
          t.accountId,
          { agent_id: agent, mode: 'conversation' },
          { id: 'visitor-7', values: { first_name: 'Maria' } },
        );
        await t.request('POST', `/v1/sessions/${row.id}/commands`, { body: { type: 'visitor.message', text: 'Do you repair motorbikes?' } });
        const turns = await waitForTurns(t, row.id, 2);
        await t.request('POST', `/v1/sessions/${row.id}/stop`);
        assert.match(turns.filter((x) => x.role === 'agent').at(-1)!.text, /Please ask Rosalind at the counter\./);
        if (llm) {
          const system: string = llm.requests.filter((r) => r.body.stream).at(-1)!.body.messages[0].content;
          assert.match(system, /Call the visitor Maria; plan \./);
          assert.match(system, /Your tone is formal\./);
        }
      });
    });
  }
});

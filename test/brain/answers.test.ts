/**
 * Answers that are right, or honestly unknown (issue 25), on both database engines, through the real
 * paths: the agent's identity (its name field, its system prompt's business and town) answers
 * questions; FAQ pages read by add-page in each common shape (dt/dd, details/summary, a question
 * heading with its paragraphs, a bold question before its answer, schema.org FAQPage JSON-LD)
 * become question → answer pairs, so the offline engine answers with the answer and never echoes
 * a question; an outdated background page yields to the newer page.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { agentWithWebsite, ask, until } from '../knowledge/support/brain.js';
import { echoes } from '../../bench/answers/score.js';

const LAYOUT = (
  title: string,
  main: string,
  head = '',
) => `<!doctype html><html><head><meta charset="utf-8"><title>${title} | Rapid Flow Plumbing</title>${head}</head>
<body><div class="cookie-banner"><p>We use cookies to improve your experience.</p><button>OK</button></div>
<header><nav><a href="/">Home</a> <a href="/faq">FAQ</a></nav></header>
<main>${main}</main>
<footer><p>Rapid Flow Plumbing Ltd, Unit 4, Canal Road, Brookfield</p></footer></body></html>`;

const JSON_LD = JSON.stringify({
  '@context': 'https://schema.org',
  '@type': 'FAQPage',
  mainEntity: [
    {
      '@type': 'Question',
      name: 'Do you offer a guarantee?',
      acceptedAnswer: { '@type': 'Answer', text: 'Yes: all our work is <b>guaranteed for 24 months</b>, parts and labour.' },
    },
  ],
});

/** One page per FAQ shape; each question is asked below in other words than the page's. */
const PAGES: Record<string, string> = {
  '/faq-dl': LAYOUT(
    'Payment questions',
    `<h1>Payment questions</h1><dl><dt>Can I pay in instalments?</dt><dd>Yes. Jobs over $500 can be paid in six monthly instalments through our finance partner FlexiPay.</dd><dt>Do you take cash?</dt><dd>We accept cash, cards and bank transfer.</dd></dl>`,
  ),
  '/faq-details': LAYOUT(
    'Insurance questions',
    `<h1>Insurance questions</h1><details><summary>Are your engineers insured?</summary><p>Every engineer carries £5 million public liability cover.</p></details><details><summary><h3>Do you work on Sundays?</h3></summary>Only for emergencies, at double the weekday rate.</details>`,
  ),
  '/faq-headings': LAYOUT(
    'Drain questions',
    `<h1>Drain questions</h1><h2>Can you unblock a drain?</h2><p>Yes, we clear drains with high-pressure water jetting.</p><p>We can also film the pipe with a CCTV camera to find the cause.</p><h2>Do you clean up afterwards?</h2><p>Always: we leave the site as we found it.</p>`,
  ),
  '/faq-bold': LAYOUT(
    'New customers',
    `<h1>New customers</h1><p>Here is what new customers ask us.</p><p><strong>Do I need to be home for the visit?</strong> Someone over 18 must be there to let the engineer in.</p><p><b>How do I book?</b></p><p>Book online or call the office; we confirm within two hours.</p>`,
  ),
  '/faq-jsonld': LAYOUT(
    'Guarantee',
    `<h1>Guarantee</h1><p>Answers to the questions customers ask most.</p><div id="faq-widget"></div>`,
    `<script type="application/ld+json">${JSON_LD}</script>`,
  ),
  '/news/prices-2019': LAYOUT('Our 2019 prices', `<article><h1>Our 2019 prices</h1><p>Published 3 March 2019</p><p>A boiler service costs £65.</p></article>`),
  '/radiators': LAYOUT(
    'Radiators',
    `<h1>Radiators</h1><p>We fit new radiators in a morning, with thermostatic valves.</p><p>Old radiators are taken away for recycling.</p><h2>Showers</h2><p>We repair leaking showers.</p><p>Shower pumps are serviced yearly.</p><p>An electric shower is checked for safety.</p>`,
  ),
  '/prices': LAYOUT(
    'Prices',
    `<h1>Prices</h1><p>Prices updated January 2025.</p><table><thead><tr><th>Service</th><th>Price</th></tr></thead><tbody><tr><td>Boiler service</td><td>£95</td></tr><tr><td>Drain unblocking</td><td>£150</td></tr></tbody></table>`,
  ),
};

async function startSite(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const html = PAGES[req.url ?? ''];
    if (req.url === '/robots.txt') res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
    else if (html) res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    else res.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function addPage(t: TestApp, agent: number, url: string, isPrimary = true): Promise<string> {
  const res = await t.request('POST', `/v1/agent/${agent}/add-page`, { body: { url, is_primary: isPrimary } });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  const page = await until(async () => {
    const one = await t.request('GET', `/v1/agent/${agent}/pages/${res.body.id}`);
    return one.body.status === 'read' || one.body.status === 'failed' ? one.body : undefined;
  });
  assert.equal(page.status, 'read', JSON.stringify(page));
  return page.content as string;
}

/** The reply is an answer (not "I don't know") that says every fact and asks nothing back. */
async function assertAnswers(t: TestApp, agent: number, question: string, facts: RegExp[]): Promise<string> {
  const { text, done } = await ask(t, agent, question);
  assert.equal(done.answered, true, `${question} → ${text}`);
  for (const fact of facts) assert.match(text, fact, `${question} → ${text}`);
  assert.equal(echoes(question, text), false, `${question} → ${text} echoes a question`);
  return text;
}

forEachEngine('answers: identity and FAQ shapes', (engine) => {
  let t: TestApp;
  let site: { url: string; close(): Promise<void> };
  before(async () => {
    site = await startSite();
    t = await startTestApp(engine, { CRAWL_ALLOW_PRIVATE: '1' });
  });
  after(async () => {
    await t.close();
    await site.close();
  });

  test("the system prompt's business and town and the agent's name are knowledge (no page at all)", async () => {
    const created = await t.request('POST', '/v1/agent/create', {
      body: { name: 'Ava', system_prompt: "You are Ava, the assistant of Bella's Bakery in Springfield." },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const agent = created.body.id as number;
    await assertAnswers(t, agent, 'What is the name of the bakery?', [/Bella's Bakery/]);
    await assertAnswers(t, agent, 'What is this place called?', [/Bella's Bakery/]);
    await assertAnswers(t, agent, 'Which town are you in?', [/Springfield/]);
    await assertAnswers(t, agent, 'Where are you?', [/Springfield/]);
    const who = await assertAnswers(t, agent, 'Who are you?', [/Ava/, /Bella's Bakery/]);
    assert.doesNotMatch(who, /this website/);
    // What the prompt does not say stays unknown: the identity is not an answer to everything.
    const unknown = await ask(t, agent, 'Do you sell gluten-free bread?');
    assert.equal(unknown.done.answered, false, unknown.text);
    assert.doesNotMatch(unknown.text, /Bella|Springfield/);

    // The agent's name field is its name; renaming it is known from the next answer on.
    await assertAnswers(t, agent, "What's your name?", [/Ava/]);
    const renamed = await t.request('PATCH', `/v1/agent/${agent}`, { body: { name: 'Bea' } });
    assert.equal(renamed.status, 200);
    await assertAnswers(t, agent, 'What is your name?', [/Bea/]);
    const asked = await ask(t, agent, 'What is the name of the bakery?');
    assert.match(asked.text, /Bella's Bakery/);
    assert.doesNotMatch(asked.text, /\bAva\b/);
  });

  test('a dt/dd FAQ read by add-page: "Can I pay in instalments?" is answered with the answer, never the question', async () => {
    const agent = await agentWithWebsite(t, null, undefined, 'Sam');
    const content = await addPage(t, agent, `${site.url}/faq-dl`);
    assert.match(content, /#+ Can I pay in instalments\?\n\nYes\. Jobs over \$500/);
    const said = await assertAnswers(t, agent, 'Can I pay in instalments?', [/FlexiPay/, /six monthly instalments/]);
    assert.doesNotMatch(said, /Can I pay/);
    await assertAnswers(t, agent, 'Is it possible to pay in instalments?', [/FlexiPay/]);
    await assertAnswers(t, agent, 'Do you accept cash?', [/cash, cards and bank transfer/]);
  });

  test('details/summary accordions, question headings, bold questions and FAQPage JSON-LD each become question → answer pairs', async () => {
    const agent = await agentWithWebsite(t, null, undefined, 'Sam');
    const details = await addPage(t, agent, `${site.url}/faq-details`);
    assert.match(details, /#+ Are your engineers insured\?\n\nEvery engineer carries/);
    assert.match(details, /#+ Do you work on Sundays\?\n\nOnly for emergencies/);
    await addPage(t, agent, `${site.url}/faq-headings`);
    const bold = await addPage(t, agent, `${site.url}/faq-bold`);
    assert.match(bold, /#+ Do I need to be home for the visit\?\n\nSomeone over 18/);
    assert.match(bold, /#+ How do I book\?\n\nBook online/);
    const jsonLd = await addPage(t, agent, `${site.url}/faq-jsonld`);
    assert.match(jsonLd, /#+ Do you offer a guarantee\?\n\nYes: all our work is guaranteed for 24 months, parts and labour\./);

    await assertAnswers(t, agent, 'Are you insured?', [/£5 million/]);
    await assertAnswers(t, agent, 'Can you come out on a Sunday?', [/emergencies/]);
    await assertAnswers(t, agent, 'Do you unblock drains?', [/jetting/]);
    await assertAnswers(t, agent, 'Will you clean up afterwards?', [/as we found it/]);
    await assertAnswers(t, agent, 'Does someone have to be at home?', [/over 18/]);
    await assertAnswers(t, agent, 'Is the work guaranteed?', [/24 months/]);
    // The question asked exactly as the page asks it is answered, not repeated.
    for (const question of ['Are your engineers insured?', 'Do you work on Sundays?', 'Do I need to be home for the visit?', 'Do you offer a guarantee?']) {
      const text = await assertAnswers(t, agent, question, []);
      assert.ok(!text.includes(question), `${question} → ${text}`);
    }
  });

  test('an outdated background page yields to the newer page: the current price, never the old one', async () => {
    const agent = await agentWithWebsite(t, null, undefined, 'Sam');
    await addPage(t, agent, `${site.url}/prices`);
    await addPage(t, agent, `${site.url}/news/prices-2019`, false);
    const text = await assertAnswers(t, agent, 'How much is a boiler service?', [/£95/]);
    assert.doesNotMatch(text, /£65/);
  });

  test('a sentence that shares the question\'s verb but not its object does not answer it: "I don\'t know"', async () => {
    const agent = await agentWithWebsite(t, null, undefined, 'Sam');
    await addPage(t, agent, `${site.url}/radiators`);
    await assertAnswers(t, agent, 'Can you fit a new radiator?', [/in a morning/]);
    // Only the radiator sentence says "fit" and "new"; the showers are only repaired and serviced.
    const unknown = await ask(t, agent, 'Can you fit a new shower?');
    assert.equal(unknown.done.answered, false, unknown.text);
    assert.doesNotMatch(unknown.text, /radiator/i);
  });
});

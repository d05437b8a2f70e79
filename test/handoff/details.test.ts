/**
 * Finding details in what the visitor said: each offline extractor (e-mail, phone with
 * libphonenumber-js, names, dates and times with chrono-node, numbers and amounts, yes/no, free
 * text matched to the description), written forms, spoken forms, corrections; and the language
 * model through a local fake of the OpenAI chat wire format, its answers checked, with the
 * offline extractors when it fails or finds nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { extractOffline } from '../../src/handoff/details/offline.js';
import { DetailFinder } from '../../src/handoff/details/finder.js';
import { unverifiedDetails } from '../../src/handoff/details/kinds.js';
import { kindOf, type DetailSpec } from '../../src/handoff/details/spec.js';
import { llmClient } from '../../src/brain/llm.js';
import { startFakeLlm, type FakeLlm } from '../brain/support/fake-llm.js';

const reference = new Date('2026-11-23T12:00:00Z'); // a Monday
const d = (name: string, description = '', required = false): DetailSpec => ({ name, description, required });
type Turns = Array<{ role: 'visitor' | 'agent'; text: string }>;
const v = (text: string) => ({ role: 'visitor' as const, text });
const a = (text: string) => ({ role: 'agent' as const, text });
const find = (turns: Turns, details: DetailSpec[]) => extractOffline(turns, details, { reference });

describe('detail kinds', () => {
  test('the kind comes from the type, else the name and description', () => {
    assert.equal(kindOf(d('email')), 'email');
    assert.equal(kindOf(d('contact', "the visitor's e-mail")), 'email');
    assert.equal(kindOf(d('mobile')), 'phone');
    assert.equal(kindOf(d('full_name', "the visitor's name")), 'name');
    assert.equal(kindOf(d('company_name', 'the business name')), 'text');
    assert.equal(kindOf(d('appointment', 'when they want to come')), 'date');
    assert.equal(kindOf(d('guests', 'how many guests')), 'number');
    assert.equal(kindOf(d('budget', 'the budget')), 'number');
    assert.equal(kindOf(d('wants_callback', 'whether they want a call back')), 'yes_no');
    assert.equal(kindOf(d('issue', 'what went wrong')), 'text');
    assert.equal(kindOf({ name: 'x', description: '', type: 'phone' }), 'phone');
  });
});

describe('offline extractors', () => {
  test('e-mail: written, spoken ("dot", "at"), the latest correction wins', () => {
    assert.deepEqual(find([v('Reach me at Jane.Doe+quotes@Example.co.uk please.')], [d('email')]), { email: 'jane.doe+quotes@example.co.uk' });
    assert.deepEqual(find([a('What is your email?'), v('jane dot doe at example dot com')], [d('email')]), { email: 'jane.doe@example.com' });
    assert.deepEqual(find([v('my email is old@example.com'), v('sorry, it is new@example.org')], [d('email')]), { email: 'new@example.org' });
    assert.deepEqual(find([v('I am at home, not sure about email')], [d('email')]), {});
  });

  test('phone numbers in E.164 (libphonenumber-js): national, international, spoken digits', () => {
    assert.deepEqual(find([v('Call me on (415) 555-2671 tomorrow')], [d('phone')]), { phone: '+14155552671' });
    assert.deepEqual(find([v('my number is +44 20 7946 0958')], [d('phone')]), { phone: '+442079460958' });
    assert.deepEqual(find([a('What number can we reach you on?'), v('four one five, five five five, two six seven one')], [d('phone')]), {
      phone: '+14155552671',
    });
    assert.deepEqual(find([v('we are 4 people and it costs 300')], [d('phone')]), {});
  });

  test('a number that looks like the phone asked for but is not a possible one is kept as said, marked unverified', () => {
    const details = [d('phone')];
    const said = find([v('my phone is +1 555 0100')], details);
    assert.deepEqual(said, { phone: '+1 555 0100' });
    assert.deepEqual(unverifiedDetails(details, said), ['phone']);
    const checked = find([v('Call me on (415) 555-2671 tomorrow')], details);
    assert.deepEqual(unverifiedDetails(details, checked), [], 'a possible number is verified');
    assert.deepEqual(find([v('We are open 9 to 5, table for 4')], details), {}, 'numbers that are not a phone are not taken');
  });

  test('names: stated, or a short answer to the agent asking', () => {
    assert.deepEqual(find([v("Hi, I'm Jane Doe and I need help")], [d('name', "the visitor's name")]), { name: 'Jane Doe' });
    assert.deepEqual(find([v('my name is peter van dyke and I want a table')], [d('name', "visitor's name")]), { name: 'Peter Van Dyke' });
    assert.deepEqual(find([a('May I have your name, please?'), v('Sure, María José.')], [d('name', 'their name')]), { name: 'María José' });
    assert.deepEqual(find([v("I'm looking for a table for two")], [d('name', 'their name')]), {});
  });

  test('dates and times (chrono-node), relative to when the conversation took place', () => {
    assert.deepEqual(find([v('Could we do tomorrow at 3pm?')], [d('appointment', 'when they want to come')]), { appointment: '2026-11-24 15:00' });
    assert.deepEqual(find([v('Any day around December 3rd works')], [d('date', 'preferred date')]), { date: '2026-12-03' });
    assert.deepEqual(find([v('no idea yet')], [d('date', 'preferred date')]), {});
  });

  test("numbers and amounts near the detail's words, digits or words", () => {
    assert.deepEqual(find([v('We are four people, budget is about $5,000.')], [d('guests', 'how many guests'), d('budget', 'the budget')]), {
      guests: '4',
      budget: '5000',
    });
    assert.deepEqual(find([a('How many guests will there be?'), v('twenty five')], [d('guests', 'how many guests')]), { guests: '25' });
    assert.deepEqual(find([v('our budget is 2.5k')], [d('budget', 'the budget')]), { budget: '2500' });
    assert.deepEqual(find([v('the budget is two hundred and fifty dollars')], [d('budget', 'the budget')]), { budget: '250' });
  });

  test('yes/no: the answer to the agent asking, or a sentence about it', () => {
    const detail = d('newsletter', 'whether they want the newsletter');
    assert.deepEqual(find([a('Would you like our newsletter?'), v('Yes please!')], [detail]), { newsletter: 'yes' });
    assert.deepEqual(find([a('Would you like our newsletter?'), v('No thanks.')], [detail]), { newsletter: 'no' });
    assert.deepEqual(find([v("please don't send me any newsletter")], [detail]), { newsletter: 'no' });
    assert.deepEqual(find([v('what are your hours?')], [detail]), {});
  });

  test('free text: the answer to the agent asking, or the sentence matching the description', () => {
    const issue = d('issue', 'what is wrong with the order');
    assert.deepEqual(find([a('What seems to be the problem with the order?'), v('It arrived broken, the box was crushed.')], [issue]), {
      issue: 'It arrived broken, the box was crushed.',
    });
    assert.deepEqual(find([v('Hello. My order came without the charger. Can you help?')], [issue]), { issue: 'My order came without the charger.' });
    assert.deepEqual(find([v('Hello there.')], [issue]), {});
  });
});

describe('the language model finder (OpenAI chat wire format)', () => {
  let fake: FakeLlm;
  let finder: DetailFinder;
  before(async () => {
    fake = await startFakeLlm();
    finder = new DetailFinder({ client: await llmClient({ url: fake.url, firstTokenTimeoutMs: 5000 }), model: 'test-model', timeoutMs: 5000 });
  });
  after(() => fake.close());
  const transcript: Turns = [a('How can I help?'), v('I am Jane, call me on (415) 555-2671, my mail is jane at example dot com. Budget five grand.')];
  const details = [
    d('name', 'their name'),
    d('phone', 'phone number'),
    d('email', 'email'),
    d('budget', 'the budget'),
    d('company', 'the company they work for'),
  ];

  test("the model's answers are checked and written per kind; what it misses comes from the offline extractors", async () => {
    fake.plain = {
      kind: 'json',
      content: '```json\n{"name": "jane", "phone": "415-555-2671", "email": "not an email", "budget": "$5,000", "company": ""}\n```',
    };
    const found = await finder.find({ transcript, details, reference });
    assert.equal(found.engine, 'llm');
    assert.deepEqual(found.values, { name: 'Jane', phone: '+14155552671', email: 'jane@example.com', budget: '5000' });
    const request = fake.requests.at(-1)!;
    assert.equal(request.body.model, 'test-model');
    assert.deepEqual(request.body.response_format, { type: 'json_object' });
    assert.match(request.body.messages[1].content, /"phone" \(phone\): phone number/);
    assert.match(request.body.messages[1].content, /Visitor: I am Jane/);
  });

  test('a failing model: the offline extractors answer', async () => {
    fake.plain = { kind: 'error', status: 500 };
    const found = await finder.find({ transcript, details, reference });
    assert.equal(found.engine, 'offline');
    assert.deepEqual(found.values, { name: 'Jane', phone: '+14155552671', email: 'jane@example.com', budget: '5000' });
  });

  test('an answer that is not a JSON object: the offline extractors answer', async () => {
    fake.plain = { kind: 'json', content: 'Sorry, I cannot help with that.' };
    const found = await finder.find({ transcript, details, reference });
    assert.equal(found.engine, 'offline');
    assert.equal(found.values.email, 'jane@example.com');
  });
});

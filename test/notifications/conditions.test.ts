/** Alert-rule conditions, quiet hours and the offline rule builder (no server needed). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evaluate, findKeyword, type ConversationFacts, type DetailFinder } from '../../src/notifications/conditions.js';
import { quietUntil } from '../../src/notifications/quiet-hours.js';
import { parseRequest } from '../../src/notifications/builder.js';

/** Stands in for handoff's extractors (tested in test/handoff): an email address the visitor said. */
const findEmail: DetailFinder = async (conversation, name) =>
  name === 'email'
    ? conversation.transcript
        .filter((t) => t.role === 'visitor')
        .map((t) => /\S+@\S+\.\w+/.exec(t.text)?.[0])
        .find(Boolean)
    : undefined;

function facts(visitor: string[], extra: Partial<ConversationFacts> = {}): ConversationFacts {
  const transcript = visitor.flatMap((text, i) => [
    { role: 'visitor' as const, text, at: new Date(i * 2000).toISOString() },
    { role: 'agent' as const, text: 'I can help with refunds and prices.', at: new Date(i * 2000 + 1000).toISOString() },
  ]);
  return { transcript, durationSeconds: 120, visitorTurns: visitor.length, visitor: {}, ...extra };
}

test('keywords match whole words of what the visitor said, in any case or accents, with common endings', () => {
  const said = (text: string, keywords: string[]) => findKeyword(facts([text]).transcript, keywords)?.keyword;
  assert.equal(said('I want a REFUND please', ['refund']), 'refund');
  assert.equal(said('Can I get my money refunded?', ['refund']), 'refund');
  assert.equal(said('Two refunds, please', ['refund']), 'refund');
  assert.equal(said('Ich möchte eine Rückerstattung', ['ruckerstattung']), 'ruckerstattung');
  assert.equal(said('Is there a cancellation fee?', ['cancel']), undefined, 'not inside a longer word');
  assert.equal(said('I love this artist', ['art']), undefined);
  assert.equal(said('I want to speak to a  human   agent', ['human agent']), 'human agent', 'phrases across spaces');
  // Only the visitor's words count: the agent said "refunds" in every facts() conversation.
  assert.equal(said('What are your opening hours?', ['refund']), undefined);
});

test('every condition given must hold, and each says why', async () => {
  const conversation = facts(['Hi', 'I need a refund for order 42', 'My email is jo@example.com'], { durationSeconds: 95 });
  const all = await evaluate({ keywords: ['refund'], min_duration_seconds: 90, min_visitor_turns: 3, detail_collected: 'email' }, conversation, findEmail);
  assert.equal(all.fires, true);
  assert.deepEqual(
    all.checks.map((c) => [c.condition, c.passed]),
    [
      ['keywords', true],
      ['min_duration_seconds', true],
      ['min_visitor_turns', true],
      ['detail_collected', true],
    ],
  );
  assert.equal(all.detail?.value, 'jo@example.com');
  assert.match(all.matched!.excerpt, /refund for order 42/);

  const tooShort = await evaluate({ keywords: ['refund'], min_duration_seconds: 96 }, conversation, findEmail);
  assert.equal(tooShort.fires, false);
  assert.deepEqual(
    tooShort.checks.map((c) => c.passed),
    [true, false],
  );
  assert.match(tooShort.checks[1]!.explanation, /1 min 35 s/);

  assert.equal((await evaluate({ min_visitor_turns: 4 }, conversation, findEmail)).fires, false);
  assert.equal((await evaluate({ detail_collected: 'phone' }, conversation, findEmail)).fires, false);
  assert.equal((await evaluate({}, conversation, findEmail)).fires, true, 'no condition: every conversation');
});

test("quiet hours hold sends until the window ends, across midnight and in the owner's time zone", () => {
  const quiet = { start: '22:00', end: '07:00', timezone: 'UTC' };
  assert.equal(quietUntil(quiet, new Date('2026-11-23T21:59:00Z')), undefined);
  assert.equal(quietUntil(quiet, new Date('2026-11-23T22:00:00Z'))?.toISOString(), '2026-11-24T07:00:00.000Z');
  assert.equal(quietUntil(quiet, new Date('2026-11-24T03:30:20Z'))?.toISOString(), '2026-11-24T07:00:00.000Z');
  assert.equal(quietUntil(quiet, new Date('2026-11-24T07:00:00Z')), undefined);
  // 22:00 in Berlin (UTC+1 in November) is 21:00 UTC.
  const berlin = { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' };
  assert.equal(quietUntil(berlin, new Date('2026-11-23T20:59:00Z')), undefined);
  assert.equal(quietUntil(berlin, new Date('2026-11-23T21:30:00Z'))?.toISOString(), '2026-11-24T06:00:00.000Z');
  // A daytime window, and an empty one.
  assert.equal(quietUntil({ start: '12:00', end: '13:00', timezone: 'UTC' }, new Date('2026-11-23T12:15:00Z'))?.toISOString(), '2026-11-23T13:00:00.000Z');
  assert.equal(quietUntil({ start: '12:00', end: '12:00', timezone: 'UTC' }, new Date('2026-11-23T12:15:00Z')), undefined);
  assert.equal(quietUntil(null, new Date()), undefined);
});

test('the offline builder turns plain requests into rules', () => {
  const refunds = parseRequest('tell me when someone asks about refunds');
  assert.equal(refunds.understood, true);
  assert.deepEqual(refunds.rule.when, { keywords: ['refunds'] });
  assert.equal(refunds.rule.category, 'support');
  assert.match(refunds.reply, /refunds/);

  const lead = parseRequest('Notify me when a visitor asks about pricing or a demo and leaves their email');
  assert.deepEqual(lead.rule.when, { keywords: ['pricing', 'demo'], detail_collected: 'email' });
  assert.equal(lead.rule.category, 'lead');

  const long = parseRequest('conversations longer than 5 minutes with more than 3 messages');
  assert.deepEqual(long.rule.when, { min_duration_seconds: 300, min_visitor_turns: 4 });

  // Number words, read by the same parser as the handoff's details (core/numbers.ts).
  const words = parseRequest('calls lasting over twenty minutes with at least three messages');
  assert.deepEqual(words.rule.when, { min_duration_seconds: 1200, min_visitor_turns: 3 });

  const quoted = parseRequest('alert me if they say "speak to a human" or "manager", category urgent');
  assert.deepEqual(quoted.rule.when.keywords, ['speak to a human', 'manager']);
  assert.equal(quoted.rule.category, 'urgent');
  // What follows a quoted keyword is the rest of the sentence, not more keyword.
  const cake = parseRequest('mentions "cake" in a call longer than 2 minutes');
  assert.deepEqual(cake.rule.when, { keywords: ['cake'], min_duration_seconds: 120 });

  const phone = parseRequest('when a visitor gives a phone number');
  assert.deepEqual(phone.rule.when, { detail_collected: 'phone' });

  const nonsense = parseRequest('blue sky thinking');
  assert.equal(nonsense.understood, false);
  assert.deepEqual(nonsense.rule.when, {});
  assert.match(nonsense.reply, /could not/);

  // A draft is refined: earlier conditions stay, new ones are added.
  const refined = parseRequest('only if it lasts over 2 minutes', refunds.rule);
  assert.deepEqual(refined.rule.when, { keywords: ['refunds'], min_duration_seconds: 120 });
  assert.equal(refined.rule.category, 'support');
});

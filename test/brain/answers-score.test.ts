/**
 * The answers benchmark's scorer (bench/answers/score.ts) on known replies, so the benchmark's
 * figures cannot silently change meaning: a right answer, a wrong fact, an outdated fact, an echoed
 * question, an honest "I don't know", and an answer to a question the site does not answer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addVerdict, echoes, emptyTally, judgeAnswerable, judgeUnanswerable, tallyRow } from '../../bench/answers/score.js';

const instalments = { question: 'Can I pay in instalments?', expect: ['FlexiPay', 'six monthly'], not: ['twelve monthly'] };
const dontKnow = "I'm sorry, I don't know that. I'll pass your question on to the team.";

test('a question the site answers: right, honest unknown, wrong fact, outdated fact, echoed question', () => {
  assert.equal(
    judgeAnswerable(instalments, { answered: true, text: 'Yes. Jobs over $500 can be paid in six monthly instalments through FlexiPay.' }).verdict,
    'right',
  );
  // Case and spacing aside ("8am" is "8 am").
  assert.equal(judgeAnswerable({ question: 'When do you open?', expect: ['8 am'] }, { answered: true, text: 'We open at 8AM.' }).verdict, 'right');
  assert.equal(judgeAnswerable(instalments, { answered: false, text: dontKnow }).verdict, 'unknown');
  const missing = judgeAnswerable(instalments, { answered: true, text: 'We accept card, bank transfer and cash.' });
  assert.deepEqual(missing, { verdict: 'wrong', why: 'missing FlexiPay, six monthly' });
  assert.equal(judgeAnswerable(instalments, { answered: true, text: 'Yes, in six monthly or twelve monthly instalments through FlexiPay.' }).verdict, 'wrong');
  const echoed = judgeAnswerable(instalments, { answered: true, text: 'Can I pay in instalments?' });
  assert.deepEqual(echoed, { verdict: 'wrong', why: 'echoed a question' });
  // Another question from the knowledge said as the answer is an echo too, even with the facts.
  assert.equal(judgeAnswerable(instalments, { answered: true, text: 'Do you offer FlexiPay? Six monthly instalments.' }).verdict, 'wrong');
});

test("the agent's own questions back (offers to help, asking for a detail) are not echoes", () => {
  assert.equal(echoes('Who are you?', "I'm Ava, the virtual assistant of Bella's Bakery. What would you like to know?"), false);
  assert.equal(echoes('Thanks', "You're welcome! Is there anything else I can help you with?"), false);
  assert.equal(echoes('Do you deliver?', 'We deliver within 10 miles. By the way, may I have your e-mail address?'), false);
  assert.equal(echoes('Do you deliver?', 'Do you deliver? Yes.'), true);
});

test('a question the site does not answer: honest or wrong; the tally counts both kinds', () => {
  assert.equal(judgeUnanswerable('Do you install solar panels?', { answered: false, text: dontKnow }).verdict, 'honest');
  assert.equal(judgeUnanswerable('Do you install solar panels?', { answered: true, text: 'We install Worcester Bosch boilers.' }).verdict, 'wrong');
  const tally = emptyTally();
  addVerdict(tally, 'answerable', 'right');
  addVerdict(tally, 'answerable', 'unknown');
  addVerdict(tally, 'answerable', 'wrong');
  addVerdict(tally, 'unanswerable', 'honest');
  addVerdict(tally, 'unanswerable', 'wrong');
  assert.deepEqual(tally, { answerable: 3, right: 1, unknown: 1, wrongAnswerable: 1, unanswerable: 2, honest: 1, wrongUnanswerable: 1 });
  assert.equal(tallyRow('site', tally), '| site | 3 | 1 (33.3%) | 1 | 1 | 2 | 1 (50.0%) | 1 | 2 (40.0%) |');
});

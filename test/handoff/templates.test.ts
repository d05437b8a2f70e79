/** Templates and formats: each value escaped for its format, and the checks made when a rule is saved. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { XMLParser } from 'fast-xml-parser';
import { checkTemplate, renderTemplate, type TemplateValues } from '../../src/handoff/templates.js';

const HOSTILE = 'a "b" & <c>\nd\te é 日本 \u0001 ]]> {{x}} 100%+1=2';
const values: TemplateValues = {
  details: { note: HOSTILE, email: 'j@x.io' },
  visitor: { page: HOSTILE },
  agentName: 'Ava & "Co"',
  ruleName: 'R<1>',
  conversationTime: new Date('2026-11-23T10:11:12.345Z'),
  visitorTurns: 4,
};

test('json: string escaping keeps the document valid and the value exact', () => {
  const out = renderTemplate(
    '{"note": "{{note}}", "page": "{{visitor.page}}", "n": {{visitor_turns}}, "at": "{{conversation_time}}", "missing": "{{visitor.none}}"}',
    'json',
    values,
  );
  assert.deepEqual(JSON.parse(out), { note: HOSTILE, page: HOSTILE, n: 4, at: '2026-11-23T10:11:12Z', missing: '' });
});

test('xml: entities, and characters XML forbids dropped', () => {
  const out = renderTemplate('<r a="{{note}}"><n>{{note}}</n><agent>{{agent_name}}</agent></r>', 'xml', values);
  const parsed = new XMLParser({ ignoreAttributes: false, parseTagValue: false }).parse(out).r;
  const expected = HOSTILE.replace('\u0001', '');
  assert.equal(parsed.n, expected);
  assert.equal(parsed.agent, 'Ava & "Co"');
  assert.equal(parsed['@_a'].replace(/\s/g, ' '), expected.replace(/\s/g, ' '));
});

test('form and query: one name=value a line, both sides URL-encoded, joined with &', () => {
  const out = renderTemplate('note={{note}}\n\nrule name={{rule_name}}\nturns={{visitor_turns}}', 'form', values);
  assert.equal(out.split('&').length, 3);
  const params = new URLSearchParams(out);
  assert.equal(params.get('note'), HOSTILE);
  assert.equal(params.get('rule name'), 'R<1>');
  assert.equal(params.get('turns'), '4');
  assert.doesNotMatch(out, /[\s"<>]/);
  assert.equal(renderTemplate('e={{email}}', 'query', values), 'e=j%40x.io');
});

test('text: values as they are', () => {
  assert.equal(renderTemplate('Note: {{note}}', 'text', values), `Note: ${HOSTILE}`);
});

test('checks: unknown variables, unbalanced braces, invalid JSON or XML, form lines', () => {
  assert.deepEqual(checkTemplate('{"a": "{{email}}"}', 'json', ['email']), []);
  assert.match(checkTemplate('{"a": "{{mail}}"}', 'json', ['email'])[0]!, /unknown template variable \{\{mail\}\}/);
  assert.match(checkTemplate('{"a": {{email}}}', 'json', ['email'])[0]!, /does not render valid JSON/);
  assert.deepEqual(checkTemplate('{"n": {{visitor_turns}}}', 'json', []), []);
  assert.match(checkTemplate('<a>{{email}}</b>', 'xml', ['email'])[0]!, /does not render valid XML/);
  assert.match(checkTemplate('', 'xml', [])[0]!, /empty/);
  assert.match(checkTemplate('a={{email}}\noops', 'query', ['email'])[0]!, /line 2 of the query template/);
  assert.match(checkTemplate('{{email}', 'text', ['email'])[0]!, /does not form/);
  assert.deepEqual(checkTemplate('{{ visitor.utm_source }} {{visitor.page-id}}', 'text', []), []);
});

/**
 * Handoff templates: `{{variable}}` placeholders (interface: Webhook delivery payload) rendered per
 * conversation, each value escaped for the format. Templates are checked when a rule is saved: an
 * unknown variable, a form/query line that is not `name=value`, or a JSON or XML template that does
 * not render valid output (tried with awkward sample values and with empty ones) is refused, with
 * the problem named.
 */
import { XMLValidator } from 'fast-xml-parser';
import { escapeFor, escapeUrl, type Format } from './formats.js';

export const BUILT_INS = ['agent_name', 'rule_name', 'conversation_time', 'visitor_turns', 'unverified'] as const;
/** Values whose rendering is a bare number (may stand outside quotes in a JSON template). */
const NUMERIC = new Set(['visitor_turns']);
const VARIABLE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const VISITOR_NAME = /^visitor\.([A-Za-z0-9_-]{1,64})$/;

export interface TemplateValues {
  details: Record<string, string>;
  visitor: Record<string, string>;
  agentName: string;
  ruleName: string;
  conversationTime: Date;
  visitorTurns: number;
  /** Details kept as the visitor said them, not checked (a phone number that is not a possible one). */
  unverified?: string[];
}

/** Every problem of a template, each a sentence (empty: the template is good). */
export function checkTemplate(template: string, format: Format | 'message', detailNames: string[]): string[] {
  const problems: string[] = [];
  const known = new Set<string>([...BUILT_INS, ...detailNames]);
  const stripped = template.replace(VARIABLE, '');
  if (stripped.includes('{{') || stripped.includes('}}')) problems.push('the template has a "{{" or "}}" that does not form a {{variable}}');
  for (const match of template.matchAll(VARIABLE)) {
    const name = match[1]!;
    if (known.has(name) || VISITOR_NAME.test(name)) continue;
    problems.push(
      `unknown template variable {{${name}}}: use a detail of this rule (${detailNames.join(', ') || 'none yet'}), visitor.<name>, ${BUILT_INS.join(', ')}`,
    );
  }
  if (problems.length) return problems;
  if (format === 'form' || format === 'query') {
    template.split(/\r?\n/).forEach((line, index) => {
      if (!line.trim()) return;
      const eq = line.indexOf('=');
      if (eq <= 0) problems.push(`line ${index + 1} of the ${format} template is not name=value: "${line.slice(0, 80)}"`);
    });
    return problems;
  }
  if (format === 'json' || format === 'xml') {
    for (const sample of [hostileSample(detailNames), emptySample(detailNames)]) {
      const rendered = renderTemplate(template, format, sample);
      const problem = format === 'json' ? jsonProblem(rendered) : xmlProblem(rendered);
      if (problem) {
        problems.push(
          `the ${format.toUpperCase()} template does not render valid ${format.toUpperCase()}: ${problem}${format === 'json' ? ' (put each {{variable}} inside quotes)' : ''}`,
        );
        break;
      }
    }
  }
  return problems;
}

function jsonProblem(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

function xmlProblem(text: string): string | undefined {
  if (!text.trim()) return 'it is empty';
  const result = XMLValidator.validate(text);
  return result === true ? undefined : `${result.err.msg} (line ${result.err.line})`;
}

/** The template with every variable replaced by its value escaped for the format. */
export function renderTemplate(template: string, format: Format | 'message', values: TemplateValues): string {
  if (format === 'form' || format === 'query') {
    // One name=value a line; both sides filled in then URL-encoded; lines joined with '&'.
    return template
      .split(/\r?\n/)
      .filter((line) => line.trim())
      .map((line) => {
        const eq = line.indexOf('=');
        const name = fill(line.slice(0, eq).trim(), values, (v) => v);
        const value = fill(line.slice(eq + 1), values, (v) => v);
        return `${escapeUrl(name)}=${escapeUrl(value)}`;
      })
      .join('&');
  }
  return fill(template, values, format === 'message' ? (v) => v : escapeFor(format));
}

function fill(template: string, values: TemplateValues, escapeValue: (value: string) => string): string {
  return template.replace(VARIABLE, (_whole, name: string) => {
    const value = variableValue(name, values);
    return NUMERIC.has(name) ? value : escapeValue(value);
  });
}

function variableValue(name: string, values: TemplateValues): string {
  switch (name) {
    case 'agent_name':
      return values.agentName;
    case 'rule_name':
      return values.ruleName;
    case 'conversation_time':
      return values.conversationTime.toISOString().replace(/\.\d{3}Z$/, 'Z');
    case 'visitor_turns':
      return String(values.visitorTurns);
    case 'unverified':
      return (values.unverified ?? []).join(',');
  }
  const visitor = VISITOR_NAME.exec(name);
  if (visitor) return values.visitor[visitor[1]!] ?? '';
  return values.details[name] ?? '';
}

const HOSTILE = 'He said "hi" & <b>bye</b>\n\t\\ é ü 日本 \' ]]> {{x}}';

function hostileSample(detailNames: string[]): TemplateValues {
  return sampleValues(detailNames, () => HOSTILE);
}

function emptySample(detailNames: string[]): TemplateValues {
  return { ...sampleValues(detailNames, () => ''), agentName: '', ruleName: '' };
}

/** Values for a "Send test" and for checking a template. */
export function sampleValues(detailNames: string[], valueFor: (name: string) => string = sampleDetail): TemplateValues {
  return {
    details: Object.fromEntries(detailNames.map((n) => [n, valueFor(n)])),
    visitor: new Proxy({}, { get: (_t, key) => (typeof key === 'string' ? valueFor(`visitor.${key}`) : undefined) }) as Record<string, string>,
    agentName: valueFor('agent_name') === HOSTILE ? HOSTILE : 'Ava',
    ruleName: valueFor('rule_name') === HOSTILE ? HOSTILE : 'Test rule',
    conversationTime: new Date(),
    visitorTurns: 3,
  };
}

function sampleDetail(name: string): string {
  if (/e-?mail/i.test(name)) return 'jane.doe@example.com';
  if (/phone|mobile|tel/i.test(name)) return '+14155552671';
  if (/name/i.test(name)) return 'Jane Doe';
  if (/date|time|when/i.test(name)) return new Date(Date.now() + 86400_000).toISOString().slice(0, 10);
  if (name.startsWith('visitor.')) return `sample ${name.slice(8)}`;
  return `sample ${name}`;
}

/** A template for a destination saved without one: every detail, by name. */
export function defaultTemplate(format: Format | 'message', detailNames: string[]): string {
  switch (format) {
    case 'json':
      return `{${[...detailNames.map((n) => `"${n}": "{{${n}}}"`), '"agent": "{{agent_name}}"', '"rule": "{{rule_name}}"', '"conversation_time": "{{conversation_time}}"', '"visitor_turns": {{visitor_turns}}', '"unverified": "{{unverified}}"'].join(', ')}}`;
    case 'xml':
      return `<handoff>${detailNames.map((n) => `<${n}>{{${n}}}</${n}>`).join('')}<agent>{{agent_name}}</agent><rule>{{rule_name}}</rule><conversation_time>{{conversation_time}}</conversation_time><visitor_turns>{{visitor_turns}}</visitor_turns><unverified>{{unverified}}</unverified></handoff>`;
    case 'form':
    case 'query':
      return [...detailNames.map((n) => `${n}={{${n}}}`), 'agent={{agent_name}}', 'conversation_time={{conversation_time}}', 'unverified={{unverified}}'].join(
        '\n',
      );
    default:
      return [`{{rule_name}} (from {{agent_name}})`, ...detailNames.map((n) => `${n}: {{${n}}}`)].join('\n');
  }
}

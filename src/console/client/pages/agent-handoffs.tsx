/**
 * Agent › Handoffs: the agent's data-handoff rules (`/v1/agent/{id}/v2/rules`). A rule builder
 * (details, destination, format, headers, a template with insertable variables), each rule's
 * state, its `whsec_` secret masked with Reveal and Rotate, Send test, and the delivery log with
 * every attempt and Resend for a failed delivery.
 */
import { useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { errorAt, unplaced, useForm } from '../forms.js';
import { unsaved } from '../router.js';
import { ErrorAlert, Field, Loading, Confirm, Table, useLoad, lacking, fmtDate } from '../ui.js';

/** The built-in template variables (src/handoff/templates.ts BUILT_INS; interface: Webhook delivery payload). */
const BUILT_INS: Array<[string, string]> = [
  ['agent_name', 'the agent’s name'],
  ['rule_name', 'this rule’s name'],
  ['conversation_time', 'when the conversation started (UTC)'],
  ['visitor_turns', 'how many times the visitor spoke'],
  ['unverified', 'details kept as said, not checked'],
];
const FORMATS: Array<[string, string]> = [
  ['json', 'JSON'],
  ['xml', 'XML'],
  ['text', 'Plain text'],
  ['form', 'Form fields (POST)'],
  ['query', 'Query parameters (GET)'],
];
const STATES: Record<string, string> = {
  active: 'active',
  needs_attention: 'needs attention: the last delivery was refused; fix the destination or send a test',
  paused: 'paused after 10 failed deliveries in a row: a successful Send test resumes it',
};
const DETAIL_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const URL_CODES = { invalid_url: 'destination.url', private_address: 'destination.url' };

interface Draft {
  name: string;
  details: Array<{ name: string; description: string; required: boolean }>;
  type: string;
  url: string;
  method: string;
  format: string;
  headers: Array<{ name: string; value: string }>;
  template: string;
  destination_id?: number;
}

const emptyDraft = (): Draft => ({
  name: '',
  details: [{ name: 'email', description: 'the visitor’s email address', required: true }],
  type: 'webhook',
  url: '',
  method: 'POST',
  format: 'json',
  headers: [],
  template: '',
});

function draftOf(rule: any): Draft {
  const d = rule.destination;
  return {
    name: rule.name,
    details: rule.details.map((x: any) => ({ name: x.name, description: x.description, required: x.required })),
    type: d.type,
    url: d.url ?? '',
    method: d.method ?? 'POST',
    format: d.format ?? 'json',
    headers: Object.entries(d.headers ?? {}).map(([name, value]) => ({ name, value: String(value) })),
    template: d.template ?? '',
    destination_id: d.destination_id,
  };
}

/** The request body of a draft: only the fields its destination type takes. */
function bodyOf(draft: Draft) {
  const destination: Record<string, unknown> = { type: draft.type };
  if (draft.type === 'webhook') {
    Object.assign(destination, {
      url: draft.url.trim(),
      method: draft.method,
      format: draft.format,
      headers: Object.fromEntries(draft.headers.filter((h) => h.name.trim()).map((h) => [h.name.trim(), h.value])),
    });
  }
  if (draft.type === 'telegram' && draft.destination_id) destination.destination_id = draft.destination_id;
  if (draft.template.trim()) destination.template = draft.template;
  return { name: draft.name.trim(), details: draft.details.filter((d) => d.name.trim()).map((d) => ({ ...d, name: d.name.trim() })), destination };
}

export function Handoffs(props: { agentId: number }) {
  const base = `/v1/agent/${props.agentId}/v2/rules`;
  const rules = useLoad(() => api.get<{ rules: any[] }>(base), [props.agentId]);
  const [editing, setEditing] = useState<'new' | number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<any>(null);

  const saved = (list: any[], message: string) => {
    rules.setData({ rules: list });
    setEditing(null);
    setDone(message);
    setError(null);
    unsaved.value = false;
  };
  const remove = async () => {
    const rule = deleting;
    setDeleting(null);
    try {
      saved((await api.del<{ rules: any[] }>(`${base}/${rule.id}`)).rules, `Deleted “${rule.name}” and its delivery log.`);
    } catch (e) {
      setError(e);
    }
  };

  if (rules.error) return <ErrorAlert error={rules.error} />;
  if (!rules.data) return <Loading what="handoff rules" />;
  const list = rules.data.rules;
  const denied = lacking('setup');
  return (
    <>
      <p>
        After each conversation, a handoff rule finds the details you name in what the visitor said and sends them to your webhook, or to your console inbox.
      </p>
      <ErrorAlert error={error} />
      {done && <p role="status">{done}</p>}
      <Table
        caption="Handoff rules"
        columns={['Rule', 'Sends to', 'State', 'Enabled']}
        rows={list.map((r) => ({
          key: r.id,
          cells: [
            r.name,
            r.destination.type === 'webhook'
              ? `${r.destination.method} ${r.destination.url} (${r.destination.format})`
              : r.destination.type === 'inbox'
                ? 'Console inbox'
                : 'Telegram',
            r.state.replace('_', ' '),
            r.enabled ? 'yes' : 'no',
          ],
        }))}
        empty="No handoff rules yet."
      />
      {editing === null && (
        <button
          type="button"
          disabled={!!denied}
          title={denied}
          onClick={() => {
            setEditing('new');
            setDone(null);
          }}
        >
          New handoff rule
        </button>
      )}
      {editing === 'new' && (
        <RuleForm
          key="new"
          base={base}
          onSaved={(rule) => saved([...list, rule], `Created “${rule.name}”.`)}
          onCancel={() => {
            setEditing(null);
            unsaved.value = false;
          }}
        />
      )}
      {list.map((r) => (
        <RuleCard
          key={r.id}
          rule={r}
          base={base}
          editing={editing === r.id}
          onEdit={() => {
            setEditing(r.id);
            setDone(null);
          }}
          onCancel={() => {
            setEditing(null);
            unsaved.value = false;
          }}
          onRules={(next, message) => saved(next, message)}
          onDelete={() => setDeleting(r)}
        />
      ))}
      <Confirm
        title={`Delete handoff rule “${deleting?.name ?? ''}”?`}
        open={!!deleting}
        action="Delete rule"
        onConfirm={remove}
        onClose={() => setDeleting(null)}
      >
        The rule and its delivery log are deleted. Conversations that end from now on send nothing for it.
      </Confirm>
    </>
  );
}

function RuleCard(props: {
  rule: any;
  base: string;
  editing: boolean;
  onEdit: () => void;
  onCancel: () => void;
  onRules: (rules: any[], message: string) => void;
  onDelete: () => void;
}) {
  const r = props.rule;
  const url = `${props.base}/${r.id}`;
  const [revealed, setRevealed] = useState(false);
  const [rotating, setRotating] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [test, setTest] = useState<any>(null);
  const [testing, setTesting] = useState(false);
  const [showLog, setShowLog] = useState(false);
  const [logVersion, setLogVersion] = useState(0);
  const titleId = `rule-${r.id}`;
  const setup = lacking('setup');

  const toggle = async () => {
    try {
      props.onRules((await api.patch<{ rules: any[] }>(url, { enabled: !r.enabled })).rules, `${r.enabled ? 'Disabled' : 'Enabled'} “${r.name}”.`);
    } catch (e) {
      setError(e);
    }
  };
  const rotate = async () => {
    setRotating(false);
    try {
      props.onRules(
        (await api.patch<{ rules: any[] }>(url, { rotate_secret: true })).rules,
        `Rotated the secret of “${r.name}”: give your receiver the new one.`,
      );
      setRevealed(true);
    } catch (e) {
      setError(e);
    }
  };
  const sendTest = async () => {
    setTesting(true);
    setTest(null);
    try {
      setTest(await api.post(`${url}/test`));
      setError(null);
      setLogVersion((v) => v + 1);
    } catch (e) {
      setError(e);
    } finally {
      setTesting(false);
    }
  };
  const d = r.destination;
  return (
    <section aria-labelledby={titleId} class="rule">
      <h2 id={titleId}>{r.name}</h2>
      <ErrorAlert error={error} />
      <dl>
        <dt>State</dt>
        <dd>
          {r.enabled ? (STATES[r.state] ?? r.state) : `disabled (${r.state.replace('_', ' ')})`}
          {r.consecutive_failures > 0 && `, ${r.consecutive_failures} failed deliveries in a row`}
        </dd>
        <dt>Details collected</dt>
        <dd>{r.details.length ? r.details.map((x: any) => `${x.name}${x.required ? ' (required)' : ''}`).join(', ') : 'none'}</dd>
        <dt>Sends to</dt>
        <dd>
          {d.type === 'webhook' ? (
            <>
              <code>
                {d.method} {d.url}
              </code>{' '}
              as {FORMATS.find(([f]) => f === d.format)?.[1] ?? d.format}
            </>
          ) : d.type === 'inbox' ? (
            'your console inbox'
          ) : (
            'a Telegram chat'
          )}
        </dd>
        {d.type === 'webhook' && (
          <>
            <dt>
              <label for={`secret-${r.id}`}>Signing secret</label>
            </dt>
            <dd>
              <input
                id={`secret-${r.id}`}
                readOnly
                size={44}
                value={revealed ? r.secret : mask(r.secret)}
                onFocus={(e) => revealed && e.currentTarget.select()}
              />{' '}
              <button type="button" aria-pressed={revealed} disabled={!!setup} title={setup} onClick={() => setRevealed(!revealed)}>
                {revealed ? 'Hide' : 'Reveal'}
              </button>{' '}
              <button type="button" disabled={!!setup} title={setup} onClick={() => setRotating(true)}>
                Rotate
              </button>
            </dd>
          </>
        )}
      </dl>
      <div>
        <button type="button" disabled={!!setup} title={setup} onClick={props.onEdit}>
          Edit
        </button>{' '}
        <button type="button" disabled={!!setup} title={setup} onClick={toggle}>
          {r.enabled ? 'Disable' : 'Enable'}
        </button>{' '}
        <button type="button" disabled={!!setup || testing} title={setup} onClick={sendTest}>
          Send test
        </button>{' '}
        <button type="button" aria-expanded={showLog} onClick={() => setShowLog(!showLog)}>
          Delivery log
        </button>{' '}
        <button type="button" class="danger" disabled={!!lacking('delete')} title={lacking('delete')} onClick={props.onDelete}>
          Delete
        </button>
      </div>
      {testing && <p aria-live="polite">Sending a test with sample values…</p>}
      {test && (
        <p role="status" class={test.delivered ? undefined : 'error'}>
          Test {test.delivered ? 'delivered' : 'not delivered'}
          {test.status_code !== null ? `: HTTP ${test.status_code}` : ''}
          {test.error ? ` (${test.error})` : ''}, {test.duration_ms} ms.
        </p>
      )}
      {props.editing && (
        <RuleForm key={r.id} base={props.base} rule={r} onSaved={(_rule, list) => props.onRules(list!, `Saved “${r.name}”.`)} onCancel={props.onCancel} />
      )}
      {showLog && <Deliveries key={logVersion} url={url} ruleName={r.name} />}
      <Confirm title={`Rotate the secret of “${r.name}”?`} open={rotating} action="Rotate secret" onConfirm={rotate} onClose={() => setRotating(false)}>
        Deliveries are signed with the new secret at once: a receiver still checking the old one refuses them.
      </Confirm>
    </section>
  );
}

/** whsec_ and the last four characters; the API masks it itself for a sign-in without setup. */
function mask(secret: string | undefined): string {
  if (!secret) return '—';
  return `whsec_${'•'.repeat(12)}${secret.slice(-4)}`;
}

function Deliveries(props: { url: string; ruleName: string }) {
  const log = useLoad(() => api.get<{ deliveries: any[] }>(`${props.url}/deliveries`), [props.url]);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const resend = async (delivery: any) => {
    try {
      const { delivery: next } = await api.post(`${props.url}/deliveries/${delivery.delivery_id}/replay`);
      log.setData({ deliveries: log.data!.deliveries.map((x) => (x.delivery_id === next.delivery_id ? next : x)) });
      setDone('Sent again from the start of the retry schedule.');
      setError(null);
    } catch (e) {
      setError(e);
    }
  };
  if (log.error) return <ErrorAlert error={log.error} />;
  if (!log.data) return <Loading what="deliveries" />;
  const setup = lacking('setup');
  return (
    <>
      <ErrorAlert error={error} />
      {done && <p role="status">{done}</p>}
      <button type="button" onClick={() => log.reload()}>
        Refresh log
      </button>
      <table>
        <caption>Deliveries of “{props.ruleName}”, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Made</th>
            <th scope="col">Kind</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Next attempt</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {log.data.deliveries.map((x) => (
            <tr key={x.delivery_id}>
              <td>
                {fmtDate(x.created_at)}
                <br />
                <small>{x.delivery_id}</small>
              </td>
              <td>
                {x.kind}
                {x.conversation_id ? (
                  <>
                    <br />
                    <small>conversation {x.conversation_id}</small>
                  </>
                ) : null}
              </td>
              <td>{x.status}</td>
              <td>
                <ol>
                  {x.attempts.map((a: any, i: number) => (
                    <li key={i}>
                      {fmtDate(a.at)}: {a.status_code !== null ? `HTTP ${a.status_code}` : 'no answer'}
                      {a.error ? `, ${a.error}` : ''}, {a.duration_ms} ms
                      {a.response_excerpt && (
                        <>
                          <br />
                          <small>
                            Response: <code>{a.response_excerpt}</code>
                          </small>
                        </>
                      )}
                    </li>
                  ))}
                </ol>
                {x.attempts.length === 0 && 'none yet'}
              </td>
              <td>{x.next_attempt_at ? fmtDate(x.next_attempt_at) : '—'}</td>
              <td>
                {x.status === 'failed' && (
                  <button type="button" disabled={!!setup} title={setup} aria-label={`Resend delivery of ${fmtDate(x.created_at)}`} onClick={() => resend(x)}>
                    Resend
                  </button>
                )}
              </td>
            </tr>
          ))}
          {log.data.deliveries.length === 0 && (
            <tr>
              <td colSpan={6}>No deliveries yet: one is made after each conversation the rule applies to, or with Send test.</td>
            </tr>
          )}
        </tbody>
      </table>
    </>
  );
}

function RuleForm(props: { base: string; rule?: any; onSaved: (rule: any, rules?: any[]) => void; onCancel: () => void }) {
  const form = useForm<Draft>(() => (props.rule ? draftOf(props.rule) : emptyDraft()));
  const { value: draft, set, error, saving } = form;
  const [visitorName, setVisitorName] = useState('');
  const template = useRef<HTMLTextAreaElement>(null);
  const setDetail = (i: number, patch: Partial<Draft['details'][number]>) => set({ details: draft.details.map((d, j) => (j === i ? { ...d, ...patch } : d)) });
  const setHeader = (i: number, patch: Partial<Draft['headers'][number]>) => set({ headers: draft.headers.map((h, j) => (j === i ? { ...h, ...patch } : h)) });
  const insert = (variable: string) => {
    const area = template.current;
    const text = `{{${variable}}}`;
    const start = area?.selectionStart ?? draft.template.length;
    const end = area?.selectionEnd ?? start;
    set({ template: draft.template.slice(0, start) + text + draft.template.slice(end) });
    requestAnimationFrame(() => {
      area?.focus();
      area?.setSelectionRange(start + text.length, start + text.length);
    });
  };
  const submit = form.submit(async () => {
    if (props.rule) {
      const body = bodyOf(draft);
      // An unchanged template is not sent back: one the service wrote then follows the details and format.
      if (draft.template === (props.rule.destination.template ?? '')) delete (body.destination as Record<string, unknown>).template;
      const { rules } = await api.patch<{ rules: any[] }>(`${props.base}/${props.rule.id}`, body);
      props.onSaved(
        rules.find((r) => r.id === props.rule.id),
        rules,
      );
    } else {
      props.onSaved((await api.post<{ rule: any }>(props.base, { ...bodyOf(draft), enabled: true })).rule);
    }
  });
  const at = (path: string) => errorAt(error, path, URL_CODES);
  const fieldPaths = [
    'name',
    'details',
    'destination.type',
    'destination.url',
    'destination.method',
    'destination.format',
    'destination.headers',
    'destination.template',
    'destination.destination_id',
  ];
  const general = unplaced(error, (e) => fieldPaths.some((p) => errorAt(e, p, URL_CODES)));
  const variables = draft.details.map((d) => d.name.trim()).filter((n) => DETAIL_NAME.test(n));
  const title = props.rule ? `Edit “${props.rule.name}”` : 'New handoff rule';
  const webhook = draft.type === 'webhook';
  return (
    <form onSubmit={submit} aria-label={title} noValidate>
      <h2>{title}</h2>
      <ErrorAlert error={general} />
      <Field label="Rule name" error={at('name')}>
        {(id, d) => <input id={id} value={draft.name} maxLength={100} required aria-describedby={d} onInput={(e) => set({ name: e.currentTarget.value })} />}
      </Field>
      <fieldset>
        <legend>Details to collect from the conversation</legend>
        <table>
          <caption>Details</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col">Required</th>
              <th scope="col">Remove</th>
            </tr>
          </thead>
          <tbody>
            {draft.details.map((detail, i) => {
              const problem = errorAt(error, `details.${i}`);
              return (
                <tr key={i}>
                  <td>
                    <input
                      aria-label={`Detail ${i + 1} name`}
                      value={detail.name}
                      maxLength={64}
                      aria-invalid={problem ? true : undefined}
                      onInput={(e) => setDetail(i, { name: e.currentTarget.value })}
                    />
                    {problem && (
                      <span class="error" role="alert">
                        {problem}
                      </span>
                    )}
                  </td>
                  <td>
                    <input
                      aria-label={`Detail ${i + 1} description`}
                      value={detail.description}
                      maxLength={500}
                      onInput={(e) => setDetail(i, { description: e.currentTarget.value })}
                    />
                  </td>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Detail ${i + 1} required`}
                      checked={detail.required}
                      onChange={(e) => setDetail(i, { required: e.currentTarget.checked })}
                    />
                  </td>
                  <td>
                    <button
                      type="button"
                      aria-label={`Remove detail ${i + 1}${detail.name ? ` (${detail.name})` : ''}`}
                      onClick={() => set({ details: draft.details.filter((_, j) => j !== i) })}
                    >
                      Remove
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {errorAt(error, 'details') && !draft.details.some((_, i) => errorAt(error, `details.${i}`)) && (
          <span class="error" role="alert">
            {errorAt(error, 'details')}
          </span>
        )}
        <button
          type="button"
          disabled={draft.details.length >= 20}
          onClick={() => set({ details: [...draft.details, { name: '', description: '', required: false }] })}
        >
          Add detail
        </button>
        <small> A required detail the agent could not find stops the delivery; the agent asks the visitor for it during the conversation.</small>
      </fieldset>
      <fieldset>
        <legend>Destination</legend>
        {[['webhook', 'Your webhook'], ['inbox', 'Console inbox'], ...(draft.type === 'telegram' ? [['telegram', 'Telegram chat']] : [])].map(
          ([value, label]) => (
            <label key={value} class="inline">
              <input type="radio" name="destination-type" value={value} checked={draft.type === value} onChange={() => set({ type: value })} /> {label}
            </label>
          ),
        )}
        {at('destination.type') && (
          <span class="error" role="alert">
            {at('destination.type')}
          </span>
        )}
        {webhook && (
          <>
            <Field
              label="Webhook URL"
              error={at('destination.url')}
              hint="Where each delivery is sent; must be reachable from the internet (https recommended)."
            >
              {(id, d) => (
                <input
                  id={id}
                  type="url"
                  value={draft.url}
                  placeholder="https://example.com/hook"
                  aria-invalid={at('destination.url') ? true : undefined}
                  aria-describedby={d}
                  onInput={(e) => set({ url: e.currentTarget.value })}
                />
              )}
            </Field>
            <Field label="Format" error={at('destination.format')}>
              {(id, d) => (
                <select
                  id={id}
                  value={draft.format}
                  aria-describedby={d}
                  onChange={(e) => {
                    const format = e.currentTarget.value;
                    set({ format, method: format === 'query' ? 'GET' : 'POST' });
                  }}
                >
                  {FORMATS.map(([f, label]) => (
                    <option key={f} value={f}>
                      {label}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field label="Method" error={at('destination.method')} hint="GET sends the details as query parameters; every other format is a POST.">
              {(id, d) => (
                <select
                  id={id}
                  value={draft.method}
                  aria-describedby={d}
                  onChange={(e) => {
                    const method = e.currentTarget.value;
                    set({ method, format: method === 'GET' ? 'query' : draft.format === 'query' ? 'json' : draft.format });
                  }}
                >
                  <option value="POST">POST</option>
                  <option value="GET">GET</option>
                </select>
              )}
            </Field>
            <fieldset>
              <legend>Custom headers</legend>
              {draft.headers.map((h, i) => {
                const problem = h.name.trim() ? errorAt(error, `destination.headers.${h.name.trim()}`) : undefined;
                return (
                  <div key={i} class="row">
                    <input
                      aria-label={`Header ${i + 1} name`}
                      value={h.name}
                      placeholder="X-Api-Key"
                      aria-invalid={problem ? true : undefined}
                      onInput={(e) => setHeader(i, { name: e.currentTarget.value })}
                    />{' '}
                    <input aria-label={`Header ${i + 1} value`} value={h.value} onInput={(e) => setHeader(i, { value: e.currentTarget.value })} />{' '}
                    <button
                      type="button"
                      aria-label={`Remove header ${i + 1}${h.name ? ` (${h.name})` : ''}`}
                      onClick={() => set({ headers: draft.headers.filter((_, j) => j !== i) })}
                    >
                      Remove
                    </button>
                    {problem && (
                      <span class="error" role="alert">
                        {problem}
                      </span>
                    )}
                  </div>
                );
              })}
              {at('destination.headers') && !draft.headers.some((h) => h.name.trim() && errorAt(error, `destination.headers.${h.name.trim()}`)) && (
                <span class="error" role="alert">
                  {at('destination.headers')}
                </span>
              )}
              <button type="button" disabled={draft.headers.length >= 20} onClick={() => set({ headers: [...draft.headers, { name: '', value: '' }] })}>
                Add header
              </button>
            </fieldset>
          </>
        )}
        <Field
          label={webhook ? 'Template (the body, or for form and query one name=value a line)' : 'Message template'}
          error={at('destination.template')}
          hint="Leave it empty for a template with every detail. Each value is escaped for the format."
        >
          {(id, d) => (
            <textarea id={id} ref={template} rows={6} value={draft.template} aria-describedby={d} onInput={(e) => set({ template: e.currentTarget.value })} />
          )}
        </Field>
        <fieldset class="inline-group">
          <legend>Insert a variable into the template</legend>
          {variables.map((v) => (
            <button key={`d-${v}`} type="button" onClick={() => insert(v)}>{`{{${v}}}`}</button>
          ))}
          {BUILT_INS.map(([v, meaning]) => (
            <button key={v} type="button" title={meaning} onClick={() => insert(v)}>{`{{${v}}}`}</button>
          ))}
        </fieldset>
        <div class="row">
          <label for="visitor-value-name">A value your website passes (visitor.&lt;name&gt;)</label>{' '}
          <input id="visitor-value-name" value={visitorName} size={16} placeholder="plan" onInput={(e) => setVisitorName(e.currentTarget.value)} />{' '}
          <button type="button" disabled={!/^[A-Za-z0-9_-]{1,64}$/.test(visitorName)} onClick={() => insert(`visitor.${visitorName}`)}>
            Insert visitor value
          </button>
        </div>
      </fieldset>
      <button type="submit" disabled={saving}>
        {props.rule ? 'Save rule' : 'Create rule'}
      </button>{' '}
      <button type="button" onClick={props.onCancel}>
        Cancel
      </button>
    </form>
  );
}

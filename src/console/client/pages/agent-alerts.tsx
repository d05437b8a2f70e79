/**
 * Agent › Alerts: the agent's notification rules (`/v1/notifications/rules/{agent_id}`): when a
 * conversation ends matching every condition given (keywords, a least duration, a least number of
 * visitor turns, a detail collected), a notification goes to the inbox and to the chosen
 * destinations. Each rule can be tried on a made-up conversation; a sentence can be turned into a
 * rule (the builder); the prefs say which categories go out and the quiet hours.
 */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { href, unsaved } from '../router.js';
import { ErrorAlert, Field, Loading, Confirm, Table, useLoad, lacking } from '../ui.js';
import { errorAt, unplaced, useForm } from '../forms.js';

interface Draft {
  name: string;
  category: string;
  keywords: string;
  min_duration_seconds: string;
  min_visitor_turns: string;
  detail_collected: string;
  destination_ids: number[];
  enabled: boolean;
}

const emptyDraft = (): Draft => ({
  name: '',
  category: 'lead',
  keywords: '',
  min_duration_seconds: '',
  min_visitor_turns: '',
  detail_collected: '',
  destination_ids: [],
  enabled: true,
});

function draftOf(rule: any): Draft {
  const w = rule.when ?? {};
  return {
    name: rule.name,
    category: rule.category,
    keywords: (w.keywords ?? []).join(', '),
    min_duration_seconds: w.min_duration_seconds !== undefined ? String(w.min_duration_seconds) : '',
    min_visitor_turns: w.min_visitor_turns !== undefined ? String(w.min_visitor_turns) : '',
    detail_collected: w.detail_collected ?? '',
    destination_ids: rule.destination_ids ?? [],
    enabled: rule.enabled,
  };
}

/** A whole number as typed, or the text itself (so the API's 422 names it rather than it being lost). */
const numberOf = (text: string) => (/^\d+$/.test(text.trim()) ? Number(text.trim()) : text.trim());

function bodyOf(draft: Draft) {
  const when: Record<string, unknown> = {};
  const keywords = draft.keywords
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  if (keywords.length) when.keywords = keywords;
  if (draft.min_duration_seconds.trim()) when.min_duration_seconds = numberOf(draft.min_duration_seconds);
  if (draft.min_visitor_turns.trim()) when.min_visitor_turns = numberOf(draft.min_visitor_turns);
  if (draft.detail_collected.trim()) when.detail_collected = draft.detail_collected.trim();
  return { name: draft.name.trim(), category: draft.category.trim(), when, destination_ids: draft.destination_ids, enabled: draft.enabled };
}

function describeWhen(when: any): string {
  const parts: string[] = [];
  if (when?.keywords?.length) parts.push(`the visitor says ${when.keywords.map((k: string) => `“${k}”`).join(' or ')}`);
  if (when?.min_duration_seconds !== undefined) parts.push(`it lasts at least ${when.min_duration_seconds} s`);
  if (when?.min_visitor_turns !== undefined) parts.push(`the visitor speaks at least ${when.min_visitor_turns} times`);
  if (when?.detail_collected) parts.push(`the ${when.detail_collected} is collected`);
  return parts.length ? `When ${parts.join(', and ')}.` : 'After every conversation.';
}

export function Alerts(props: { agentId: number }) {
  const base = `/v1/notifications/rules/${props.agentId}`;
  const rules = useLoad(() => api.get<{ rules: any[] }>(base), [props.agentId]);
  const destinations = useLoad(() => api.get<{ destinations: any[] }>('/v1/notifications/destinations'));
  const prefs = useLoad(() => api.get(`/v1/notifications/prefs/${props.agentId}`), [props.agentId]);
  const [editing, setEditing] = useState<'new' | number | null>(null);
  const [proposal, setProposal] = useState<Draft | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<any>(null);

  const finish = (message: string) => {
    setEditing(null);
    setProposal(null);
    setDone(message);
    setError(null);
    unsaved.value = false;
    void prefs.reload(); // a new category appears in the prefs
  };
  const remove = async () => {
    const rule = deleting;
    setDeleting(null);
    try {
      rules.setData(await api.del(`${base}/${rule.id}`));
      finish(`Deleted “${rule.name}”.`);
    } catch (e) {
      setError(e);
    }
  };
  const toggle = async (rule: any) => {
    try {
      const { rule: next } = await api.put(`${base}/${rule.id}`, { ...bodyOf(draftOf(rule)), enabled: !rule.enabled });
      rules.setData({ rules: rules.data!.rules.map((r) => (r.id === next.id ? next : r)) });
      finish(`${next.enabled ? 'Enabled' : 'Disabled'} “${next.name}”.`);
    } catch (e) {
      setError(e);
    }
  };

  if (rules.error) return <ErrorAlert error={rules.error} />;
  if (!rules.data || !destinations.data)
    return (
      <>
        <ErrorAlert error={destinations.error} />
        <Loading what="alert rules" />
      </>
    );
  const list = rules.data.rules;
  const dests = destinations.data.destinations;
  const setup = lacking('setup');
  return (
    <>
      <p>
        An alert rule puts a notification in your <a href={href('/inbox')}>inbox</a> when a conversation ends matching every condition you give, and sends it to
        the destinations you tick.
      </p>
      <ErrorAlert error={error} />
      {done && <p role="status">{done}</p>}
      <Table
        caption="Alert rules"
        columns={['Rule', 'Category', 'When', 'Sent to', 'Enabled']}
        rows={list.map((r) => ({
          key: r.id,
          cells: [
            r.name,
            r.category,
            describeWhen(r.when),
            ['inbox', ...r.destination_ids.map((id: number) => dests.find((d) => d.id === id)?.name ?? `destination ${id}`)].join(', '),
            r.enabled ? 'yes' : 'no',
          ],
        }))}
        empty="No alert rules yet."
      />
      {editing === null && (
        <button
          type="button"
          disabled={!!setup}
          title={setup}
          onClick={() => {
            setEditing('new');
            setDone(null);
          }}
        >
          New alert rule
        </button>
      )}
      {editing === null && (
        <Builder
          base={base}
          onProposal={(draft) => {
            setProposal(draft);
            setEditing('new');
            setDone(null);
          }}
        />
      )}
      {editing === 'new' && (
        <AlertForm
          key={proposal ? JSON.stringify(proposal) : 'new'}
          initial={proposal ?? emptyDraft()}
          destinations={dests}
          categories={Object.keys(prefs.data?.categories ?? {})}
          onSubmit={async (body) => {
            const { rule } = await api.post(base, body);
            rules.setData({ rules: [...list, rule] });
            finish(`Created “${rule.name}”.`);
          }}
          onCancel={() => {
            setEditing(null);
            setProposal(null);
            unsaved.value = false;
          }}
        />
      )}
      {list.map((r) => (
        <section key={r.id} aria-labelledby={`alert-${r.id}`}>
          <h2 id={`alert-${r.id}`}>{r.name}</h2>
          <p>
            {describeWhen(r.when)} Category: {r.category}. {r.enabled ? 'Enabled.' : 'Disabled.'}
          </p>
          <button
            type="button"
            disabled={!!setup}
            title={setup}
            onClick={() => {
              setEditing(r.id);
              setDone(null);
            }}
          >
            Edit
          </button>{' '}
          <button type="button" disabled={!!setup} title={setup} onClick={() => toggle(r)}>
            {r.enabled ? 'Disable' : 'Enable'}
          </button>{' '}
          <button type="button" class="danger" disabled={!!lacking('delete')} title={lacking('delete')} onClick={() => setDeleting(r)}>
            Delete
          </button>
          {editing === r.id && (
            <AlertForm
              key={r.id}
              rule={r}
              initial={draftOf(r)}
              destinations={dests}
              categories={Object.keys(prefs.data?.categories ?? {})}
              onSubmit={async (body) => {
                const { rule } = await api.put(`${base}/${r.id}`, body);
                rules.setData({ rules: list.map((x) => (x.id === rule.id ? rule : x)) });
                finish(`Saved “${rule.name}”.`);
              }}
              onCancel={() => {
                setEditing(null);
                unsaved.value = false;
              }}
            />
          )}
          <TryRule base={base} rule={r} />
        </section>
      ))}
      {prefs.error ? (
        <ErrorAlert error={prefs.error} />
      ) : prefs.data ? (
        <Prefs
          key={Object.keys(prefs.data.categories ?? {})
            .sort()
            .join()}
          agentId={props.agentId}
          prefs={prefs.data}
          onSaved={(p) => prefs.setData(p)}
        />
      ) : (
        <Loading what="preferences" />
      )}
      <Confirm
        title={`Delete alert rule “${deleting?.name ?? ''}”?`}
        open={!!deleting}
        action="Delete rule"
        onConfirm={remove}
        onClose={() => setDeleting(null)}
      >
        Notifications already in the inbox stay; no new ones are made for this rule.
      </Confirm>
    </>
  );
}

const FIELDS = [
  'name',
  'category',
  'when.keywords',
  'when.min_duration_seconds',
  'when.min_visitor_turns',
  'when.detail_collected',
  'destination_ids',
  'enabled',
];

function AlertForm(props: {
  rule?: any;
  initial: Draft;
  destinations: any[];
  categories: string[];
  onSubmit: (body: unknown) => Promise<void>;
  onCancel: () => void;
}) {
  const form = useForm<Draft>(props.initial);
  const { value: draft, set, error, saving } = form;
  const submit = form.submit(() => props.onSubmit(bodyOf(draft)));
  const at = (path: string) => errorAt(error, path);
  const title = props.rule ? `Edit “${props.rule.name}”` : 'New alert rule';
  const listId = `categories-${props.rule?.id ?? 'new'}`;
  return (
    <form onSubmit={submit} aria-label={title} noValidate>
      <h2>{title}</h2>
      <ErrorAlert error={unplaced(error, (e) => FIELDS.some((p) => errorAt(e, p)))} />
      <Field label="Rule name" error={at('name')}>
        {(id, d) => <input id={id} value={draft.name} maxLength={100} required aria-describedby={d} onInput={(e) => set({ name: e.currentTarget.value })} />}
      </Field>
      <Field label="Category" error={at('category')} hint="One lowercase word, e.g. lead, complaint, booking: the inbox and the prefs group by it.">
        {(id, d) => (
          <>
            <input
              id={id}
              value={draft.category}
              list={listId}
              maxLength={40}
              required
              aria-describedby={d}
              onInput={(e) => set({ category: e.currentTarget.value })}
            />
            <datalist id={listId}>
              {props.categories.map((c) => (
                <option key={c} value={c} />
              ))}
            </datalist>
          </>
        )}
      </Field>
      <fieldset>
        <legend>When (every condition given must hold)</legend>
        <Field label="Keywords (comma-separated)" error={at('when.keywords')} hint="Any of these words or phrases in what the visitor said, in any case.">
          {(id, d) => <input id={id} value={draft.keywords} aria-describedby={d} onInput={(e) => set({ keywords: e.currentTarget.value })} />}
        </Field>
        <Field label="Lasted at least (seconds)" error={at('when.min_duration_seconds')}>
          {(id, d) => (
            <input
              id={id}
              inputMode="numeric"
              value={draft.min_duration_seconds}
              size={8}
              aria-describedby={d}
              onInput={(e) => set({ min_duration_seconds: e.currentTarget.value })}
            />
          )}
        </Field>
        <Field label="Visitor spoke at least (times)" error={at('when.min_visitor_turns')}>
          {(id, d) => (
            <input
              id={id}
              inputMode="numeric"
              value={draft.min_visitor_turns}
              size={8}
              aria-describedby={d}
              onInput={(e) => set({ min_visitor_turns: e.currentTarget.value })}
            />
          )}
        </Field>
        <Field label="Detail collected" error={at('when.detail_collected')} hint="e.g. email, phone, name, or a value your website passes.">
          {(id, d) => (
            <input id={id} value={draft.detail_collected} size={20} aria-describedby={d} onInput={(e) => set({ detail_collected: e.currentTarget.value })} />
          )}
        </Field>
      </fieldset>
      <fieldset>
        <legend>Also send to</legend>
        {props.destinations.length === 0 && (
          <p>
            No destinations yet: add a webhook or connect Telegram on the <a href={href('/inbox')}>Inbox</a> page. The inbox always gets the notification.
          </p>
        )}
        {props.destinations.map((d) => (
          <label key={d.id} class="inline">
            <input
              type="checkbox"
              checked={draft.destination_ids.includes(d.id)}
              onChange={(e) =>
                set({ destination_ids: e.currentTarget.checked ? [...draft.destination_ids, d.id] : draft.destination_ids.filter((x) => x !== d.id) })
              }
            />{' '}
            {d.name} ({d.type}
            {d.enabled ? '' : ', disabled'})
          </label>
        ))}
        {at('destination_ids') && (
          <span class="error" role="alert">
            {at('destination_ids')}
          </span>
        )}
      </fieldset>
      <label class="inline">
        <input type="checkbox" checked={draft.enabled} onChange={(e) => set({ enabled: e.currentTarget.checked })} /> Enabled
      </label>
      <div>
        <button type="submit" disabled={saving}>
          {props.rule ? 'Save alert rule' : 'Create alert rule'}
        </button>{' '}
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** "Test this rule": would it fire for a made-up conversation? */
function TryRule(props: { base: string; rule: any }) {
  const [said, setSaid] = useState('');
  const [seconds, setSeconds] = useState('120');
  const [result, setResult] = useState<any>(null);
  const [error, setError] = useState<unknown>(null);
  const run = async (event: Event) => {
    event.preventDefault();
    try {
      const transcript = said
        .split('\n')
        .map((text) => text.trim())
        .filter(Boolean)
        .map((text) => ({ role: 'visitor', text }));
      setResult(await api.post(`${props.base}/test`, { rule_id: props.rule.id, sample: { transcript, duration_seconds: numberOf(seconds || '0') } }));
      setError(null);
    } catch (e) {
      setError(e);
      setResult(null);
    }
  };
  const setup = lacking('setup');
  return (
    <details>
      <summary>Test “{props.rule.name}” on a sample conversation</summary>
      <form onSubmit={run} aria-label={`Test ${props.rule.name}`}>
        <ErrorAlert error={unplaced(error, (e) => !!errorAt(e, 'sample'))} />
        <Field label="What the visitor said (one line a turn)" error={errorAt(error, 'sample')}>
          {(id, d) => <textarea id={id} rows={3} value={said} aria-describedby={d} onInput={(e) => setSaid(e.currentTarget.value)} />}
        </Field>
        <Field label="Conversation length (seconds)">
          {(id) => <input id={id} inputMode="numeric" size={8} value={seconds} onInput={(e) => setSeconds(e.currentTarget.value)} />}
        </Field>
        <button type="submit" disabled={!!setup} title={setup}>
          Test this rule
        </button>
      </form>
      {result && (
        <div role="status">
          <p>
            <strong>{result.would_fire ? 'It would fire.' : 'It would not fire.'}</strong>
          </p>
          <ul>
            {result.conditions.map((c: any, i: number) => (
              <li key={i}>
                {c.passed ? '✓' : '✗'} {c.explanation}
              </li>
            ))}
          </ul>
          {result.notification && (
            <p>
              Notification: <strong>{result.notification.title}</strong> — {result.notification.body}
            </p>
          )}
        </div>
      )}
    </details>
  );
}

/** The builder: a sentence becomes a proposed rule, shown in the form to check before saving. */
function Builder(props: { base: string; onProposal: (draft: Draft) => void }) {
  const [message, setMessage] = useState('');
  const [reply, setReply] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const ask = async (event: Event) => {
    event.preventDefault();
    try {
      const answer = await api.post(`${props.base}/builder`, { message });
      setError(null);
      if (!answer.understood) return setReply(answer.reply);
      setReply(null);
      props.onProposal(draftOf(answer.rule));
    } catch (e) {
      setError(e);
    }
  };
  const setup = lacking('setup');
  return (
    <form onSubmit={ask} aria-label="Describe an alert">
      <ErrorAlert error={unplaced(error, (e) => !!errorAt(e, 'message'))} />
      <Field
        label="Or describe the alert in your words"
        error={errorAt(error, 'message')}
        hint="e.g. Tell me when someone asks about a refund, longer than 2 minutes."
      >
        {(id, d) => <input id={id} value={message} maxLength={1000} aria-describedby={d} onInput={(e) => setMessage(e.currentTarget.value)} />}
      </Field>
      <button type="submit" disabled={!!setup || !message.trim()} title={setup}>
        Propose a rule
      </button>
      {reply && <p role="status">{reply}</p>}
    </form>
  );
}

function Prefs(props: { agentId: number; prefs: any; onSaved: (prefs: any) => void }) {
  const [categories, setCategories] = useState<Record<string, boolean>>(props.prefs.categories ?? {});
  const [quiet, setQuiet] = useState<boolean>(!!props.prefs.quiet_hours);
  const [start, setStart] = useState(props.prefs.quiet_hours?.start ?? '22:00');
  const [end, setEnd] = useState(props.prefs.quiet_hours?.end ?? '07:00');
  const [timezone, setTimezone] = useState(props.prefs.quiet_hours?.timezone ?? (Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'));
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const touch = () => {
    setSaved(false);
    unsaved.value = true;
  };
  const save = async (event: Event) => {
    event.preventDefault();
    try {
      const next = await api.put(`/v1/notifications/prefs/${props.agentId}`, { categories, quiet_hours: quiet ? { start, end, timezone } : null });
      setError(null);
      setSaved(true);
      unsaved.value = false;
      props.onSaved(next);
    } catch (e) {
      setError(e);
    }
  };
  const setup = lacking('setup');
  return (
    <section aria-labelledby="alert-prefs">
      <h2 id="alert-prefs">Preferences</h2>
      <form onSubmit={save} aria-label="Alert preferences">
        <ErrorAlert error={unplaced(error, (e) => ['categories', 'quiet_hours'].some((p) => errorAt(e, p)))} />
        <fieldset>
          <legend>Categories sent to destinations (the inbox always gets every one)</legend>
          {Object.entries(categories).map(([name, on]) => (
            <label key={name} class="inline">
              <input
                type="checkbox"
                checked={on}
                onChange={(e) => {
                  setCategories({ ...categories, [name]: e.currentTarget.checked });
                  touch();
                }}
              />{' '}
              {name}
            </label>
          ))}
          {errorAt(error, 'categories') && (
            <span class="error" role="alert">
              {errorAt(error, 'categories')}
            </span>
          )}
        </fieldset>
        <fieldset>
          <legend>Quiet hours</legend>
          <label class="inline">
            <input
              type="checkbox"
              checked={quiet}
              onChange={(e) => {
                setQuiet(e.currentTarget.checked);
                touch();
              }}
            />{' '}
            Hold sends during quiet hours (they go out when the window ends)
          </label>
          {quiet && (
            <>
              <Field label="From" error={errorAt(error, 'quiet_hours.start')}>
                {(id, d) => (
                  <input
                    id={id}
                    type="time"
                    value={start}
                    aria-describedby={d}
                    onInput={(e) => {
                      setStart(e.currentTarget.value);
                      touch();
                    }}
                  />
                )}
              </Field>
              <Field label="Until" error={errorAt(error, 'quiet_hours.end')}>
                {(id, d) => (
                  <input
                    id={id}
                    type="time"
                    value={end}
                    aria-describedby={d}
                    onInput={(e) => {
                      setEnd(e.currentTarget.value);
                      touch();
                    }}
                  />
                )}
              </Field>
              <Field label="Time zone" error={errorAt(error, 'quiet_hours.timezone')} hint="An IANA time zone, e.g. Europe/Berlin.">
                {(id, d) => (
                  <input
                    id={id}
                    value={timezone}
                    aria-describedby={d}
                    onInput={(e) => {
                      setTimezone(e.currentTarget.value);
                      touch();
                    }}
                  />
                )}
              </Field>
            </>
          )}
        </fieldset>
        <button type="submit" disabled={!!setup} title={setup}>
          Save preferences
        </button>
        {saved && <span role="status"> Saved.</span>}
      </form>
    </section>
  );
}

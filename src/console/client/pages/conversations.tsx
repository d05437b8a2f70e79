/**
 * Conversations: filters, a paged table (running ones refreshed every 2 s), CSV export; one
 * conversation's transcript turn by turn (a live log while it runs) with each answer's latency
 * waterfall drawn in SVG, and Stop while it runs.
 */
import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { href, search } from '../router.js';
import { Page, ErrorAlert, Field, Loading, useLoad, usePoll, fieldError, lacking, fmtDate } from '../ui.js';

const PAGE = 25;

export function Conversations() {
  const initial = Object.fromEntries(new URLSearchParams(search.value));
  const [filters, setFilters] = useState<Record<string, string>>({
    date_from: '',
    date_to: '',
    agent_id: '',
    visitor_id: '',
    min_duration_seconds: '',
    q: '',
    ...initial,
  });
  const [applied, setApplied] = useState(filters);
  const [offset, setOffset] = useState(0);
  const agents = useLoad(() => api.get<any[]>('/v1/agent/list'));
  const list = useLoad(() => api.get(`/v1/reports/conversations${query({ ...applied, running: undefined, limit: PAGE, offset })}`), [applied, offset]);
  const running = list.data?.items.some((c: any) => c.ended_at === null);
  usePoll(() => list.reload(), 2000, !!running);
  const set = (name: string) => (e: Event) => setFilters({ ...filters, [name]: (e.currentTarget as HTMLInputElement).value });
  const apply = (e: Event) => {
    e.preventDefault();
    setOffset(0);
    setApplied({ ...filters });
  };
  const error = list.error;
  const total = list.data?.total ?? 0;
  return (
    <Page title="Conversations">
      <form onSubmit={apply} class="filters" aria-label="Filters">
        <Field label="From date" error={fieldError(error, 'date_from')}>
          {(id, d) => <input id={id} type="date" value={filters.date_from} aria-describedby={d} onInput={set('date_from')} />}
        </Field>
        <Field label="To date" error={fieldError(error, 'date_to')}>
          {(id, d) => <input id={id} type="date" value={filters.date_to} aria-describedby={d} onInput={set('date_to')} />}
        </Field>
        <Field label="Agent">
          {(id) => (
            <select id={id} value={filters.agent_id} onChange={set('agent_id')}>
              <option value="">All agents</option>
              {(agents.data ?? []).map((a) => (
                <option key={a.id} value={String(a.id)}>
                  {a.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Visitor" error={fieldError(error, 'visitor_id')}>
          {(id, d) => <input id={id} value={filters.visitor_id} aria-describedby={d} onInput={set('visitor_id')} />}
        </Field>
        <Field label="At least (seconds)" error={fieldError(error, 'min_duration_seconds')}>
          {(id, d) => <input id={id} type="number" min={0} value={filters.min_duration_seconds} aria-describedby={d} onInput={set('min_duration_seconds')} />}
        </Field>
        <Field label="Words" error={fieldError(error, 'q')}>
          {(id, d) => <input id={id} type="search" value={filters.q} aria-describedby={d} onInput={set('q')} />}
        </Field>
        <button type="submit">Apply filters</button>
        <a class="button" href={`/v1/reports/export/conversations${query({ ...applied, running: undefined })}`} download>
          Export CSV
        </a>
      </form>
      <ErrorAlert error={error} />
      {!list.data ? (
        <Loading />
      ) : (
        <>
          <table>
            <caption>Conversations {total ? `${offset + 1}–${Math.min(offset + PAGE, total)} of ${total}` : '(none match)'}</caption>
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Agent</th>
                <th scope="col">Visitor</th>
                <th scope="col">Length</th>
                <th scope="col">Turns</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((c: any) => (
                <tr key={c.conversation_id}>
                  <td>
                    <a href={href(`/conversations/${c.conversation_id}`)}>{fmtDate(c.started_at)}</a>
                  </td>
                  <td>{c.agent_name}</td>
                  <td>{c.visitor_id ?? '—'}</td>
                  <td>{Math.round(c.duration_seconds)} s</td>
                  <td>{c.visitor_turns}</td>
                  <td>{c.ended_at ? (c.end_reason ?? 'ended') : <strong>live</strong>}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav aria-label="Pages of conversations" class="pager">
            <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
              Previous page
            </button>
            <button type="button" disabled={offset + PAGE >= total} onClick={() => setOffset(offset + PAGE)}>
              Next page
            </button>
          </nav>
        </>
      )}
    </Page>
  );
}

const STEPS: Array<[string, string]> = [
  ['recognised', 'Heard'],
  ['first_text', 'First words written'],
  ['first_audio', 'First audio'],
  ['heard', 'Heard by visitor'],
];

/** One answer's latency as horizontal bars from the end of the visitor's turn (SVG, with the numbers as text). */
export function Waterfall(props: { latency: Record<string, number | null> }) {
  const steps = STEPS.filter(([k]) => typeof props.latency[k] === 'number');
  if (steps.length === 0) return null;
  const max = Math.max(...steps.map(([k]) => props.latency[k] as number), 1);
  const width = 320;
  const row = 16;
  const summary = steps.map(([k, label]) => `${label} ${Math.round(props.latency[k] as number)} ms`).join(', ');
  return (
    <svg
      class="waterfall"
      role="img"
      aria-label={`Latency: ${summary}`}
      width={width + 150}
      height={steps.length * row + 4}
      viewBox={`0 0 ${width + 150} ${steps.length * row + 4}`}
    >
      {steps.map(([k, label], i) => {
        const ms = props.latency[k] as number;
        const w = Math.max(2, (Math.max(0, ms) / max) * width);
        return (
          <g key={k} transform={`translate(0 ${i * row + 2})`}>
            <rect x={0} y={2} width={w} height={row - 6} class={`bar bar-${k}`} />
            <text x={w + 4} y={row - 5}>
              {label}: {Math.round(ms)} ms
            </text>
          </g>
        );
      })}
    </svg>
  );
}

export function Conversation(props: { id: string }) {
  const detail = useLoad(() => api.get(`/v1/reports/conversations/${encodeURIComponent(props.id)}`), [props.id]);
  const [error, setError] = useState<unknown>(null);
  const live = detail.data && detail.data.ended_at === null;
  usePoll(() => detail.reload(), 2000, !!live);
  if (detail.error)
    return (
      <Page title="Conversation">
        <ErrorAlert error={detail.error} />
        <a href={href('/conversations')}>All conversations</a>
      </Page>
    );
  if (!detail.data)
    return (
      <Page title="Conversation">
        <Loading />
      </Page>
    );
  const c = detail.data;
  const stop = async () => {
    try {
      await api.post(`/v1/sessions/${c.session_id}/stop`);
      setError(null);
      await detail.reload();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <Page title={`Conversation with ${c.agent_name}`}>
      <p>
        Started {fmtDate(c.started_at)} · {Math.round(c.duration_seconds)} s · visitor {c.visitor_id ?? 'unknown'} ·{' '}
        {live ? <strong>live now</strong> : `ended (${c.end_reason ?? 'ended'})`}
      </p>
      <ErrorAlert error={error} />
      {live && (
        <button type="button" class="danger" disabled={!!lacking('sessions')} title={lacking('sessions')} onClick={stop}>
          Stop this conversation
        </button>
      )}
      <p>
        <a href={`/v1/reports/export/conversations/${encodeURIComponent(c.conversation_id)}`} download>
          Download transcript
        </a>{' '}
        · <a href={href('/conversations')}>All conversations</a>
      </p>
      {c.latency?.answers > 0 && (
        <p>
          Answers: first audio median {c.latency.first_audio_ms.median ?? '—'} ms, p95 {c.latency.first_audio_ms.p95 ?? '—'} ms.
        </p>
      )}
      {/* biome-ignore lint/a11y/useAriaPropsSupportedByRole: aria-live is set only while the role is log */}
      <div role={live ? 'log' : 'region'} aria-label="Transcript" aria-live={live ? 'polite' : undefined}>
        <ol class="transcript">
          {c.transcript.map((t: any, i: number) => (
            <li key={i} class={t.role}>
              <span class="who">{t.role === 'visitor' ? 'Visitor' : c.agent_name}</span> <time dateTime={t.at}>{new Date(t.at).toLocaleTimeString()}</time>
              <p>{t.text}</p>
              {t.answered === false && <small>Not answered: a knowledge gap.</small>}
              {t.latency_ms && <Waterfall latency={t.latency_ms} />}
            </li>
          ))}
          {c.transcript.length === 0 && <li>No turns yet.</li>}
        </ol>
      </div>
      {c.transcript_truncated && <p>The transcript is longer than shown; download it for every turn.</p>}
    </Page>
  );
}

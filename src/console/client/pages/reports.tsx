/**
 * Reports (its own chunk, with uPlot): date range and agent; totals; conversations, minutes,
 * answer rate and voice-to-voice p50/p95 per day; a table per agent. Every plot has a "show data
 * table" toggle with the numbers behind it (the API's figures, a missing one shown as a dash).
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { api, query } from '../api.js';
import { Page, ErrorAlert, Field, Loading, useLoad, fieldError } from '../ui.js';

type Value = number | null;
interface Series {
  label: string;
  values: Value[];
}

/** A share (0..1) as a percentage to two decimals (the API gives four decimals, so this is exact). */
const percent = (rate: Value) => (rate === null ? null : Math.round(rate * 10_000) / 100);
const shown = (v: Value, unit = '') => (v === null ? '—' : `${v}${unit}`);

function Plot(props: { title: string; days: string[]; series: Series[]; unit?: string; note?: string; max?: number }) {
  const ref = useRef<HTMLDivElement>(null);
  const [table, setTable] = useState(false);
  useEffect(() => {
    if (!ref.current || props.days.length === 0) return;
    const xs = props.days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const colors = ['#2457c5', '#b3541e', '#2e7d32'];
    const unit = props.unit ?? '';
    const plot = new uPlot(
      {
        width: Math.min(720, ref.current.clientWidth || 720),
        height: 220,
        // Days without a figure (no answer measured) are gaps in the line; points keep a lone day visible.
        // The y axis starts at zero (a rate to 100 %), so a small change does not look like a large one.
        scales: { y: { range: (_: uPlot, _min: number, max: number): uPlot.Range.MinMax => [0, props.max ?? (max > 0 ? max * 1.1 : 1)] } },
        series: [
          { label: 'Day', value: (_: uPlot, v: number) => (v === null ? '—' : new Date(v * 1000).toISOString().slice(0, 10)) },
          ...props.series.map((s, i) => ({
            label: s.label,
            stroke: colors[i % colors.length],
            width: 2,
            points: { show: true, size: 7 },
            value: (_: uPlot, v: Value) => shown(v, unit),
          })),
        ],
        axes: [
          // Days (UTC, as the API counts them), not hours of the browser's zone.
          {
            incrs: [86_400, 2 * 86_400, 7 * 86_400, 14 * 86_400, 28 * 86_400],
            values: (_: uPlot, ticks: number[]) => ticks.map((v) => new Date(v * 1000).toISOString().slice(5, 10)),
          },
          { values: (_: uPlot, ticks: number[]) => ticks.map((v) => `${v}${unit}`), size: unit ? 70 : 50 },
        ],
      },
      [xs, ...props.series.map((s) => s.values)] as uPlot.AlignedData,
      ref.current,
    );
    return () => plot.destroy();
  }, [props.days, props.series]);
  const id = props.title.replace(/\W+/g, '-').toLowerCase();
  const tableId = `${id}-table`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{props.title}</h2>
      {props.note && <p>{props.note}</p>}
      <div ref={ref} role="img" aria-label={`${props.title}: a plot; the data table has the numbers`} />
      <button type="button" aria-expanded={table} aria-controls={table ? tableId : undefined} onClick={() => setTable(!table)}>
        {table ? 'Hide data table' : 'Show data table'}
      </button>
      {table && (
        <table id={tableId}>
          <caption>{props.title}: the numbers</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              {props.series.map((s) => (
                <th scope="col" key={s.label}>
                  {s.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.days.map((d, i) => (
              <tr key={d}>
                <th scope="row">{d}</th>
                {props.series.map((s) => (
                  <td key={s.label}>{shown(s.values[i] ?? null, props.unit)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function Reports() {
  const today = new Date().toISOString().slice(0, 10);
  const monthAgo = new Date(Date.now() - 29 * 86400_000).toISOString().slice(0, 10);
  const [filters, setFilters] = useState({ date_from: monthAgo, date_to: today, agent_id: '' });
  const [applied, setApplied] = useState(filters);
  const agents = useLoad(() => api.get<any[]>('/v1/agent/list'));
  const stats = useLoad(() => api.get(`/v1/reports/stats${query(applied)}`), [applied]);
  const perAgent = useLoad(() => api.get(`/v1/reports/agents`));
  const s = stats.data;
  // Built once per answer, so the plots are drawn again only when the figures change.
  const { days, series } = useMemo(() => {
    const perDay: any[] = s?.per_day ?? [];
    return {
      days: perDay.map((d) => d.date as string),
      series: {
        conversations: [{ label: 'Conversations', values: perDay.map((d) => d.conversations) }],
        minutes: [{ label: 'Minutes', values: perDay.map((d) => d.minutes) }],
        answerRate: [{ label: 'Answer rate', values: perDay.map((d) => percent(d.answer_rate)) }],
        latency: [
          { label: 'p50', values: perDay.map((d) => d.voice_to_voice_ms?.p50 ?? null) },
          { label: 'p95', values: perDay.map((d) => d.voice_to_voice_ms?.p95 ?? null) },
        ],
      } satisfies Record<string, Series[]>,
    };
  }, [s]);
  return (
    <Page title="Reports">
      <form
        class="filters"
        aria-label="Report range"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied({ ...filters });
        }}
      >
        <Field label="From date" error={fieldError(stats.error, 'date_from')}>
          {(id, d) => (
            <input
              id={id}
              type="date"
              value={filters.date_from}
              aria-describedby={d}
              onInput={(e) => setFilters({ ...filters, date_from: e.currentTarget.value })}
            />
          )}
        </Field>
        <Field label="To date" error={fieldError(stats.error, 'date_to')}>
          {(id, d) => (
            <input
              id={id}
              type="date"
              value={filters.date_to}
              aria-describedby={d}
              onInput={(e) => setFilters({ ...filters, date_to: e.currentTarget.value })}
            />
          )}
        </Field>
        <Field label="Agent">
          {(id) => (
            <select id={id} value={filters.agent_id} onChange={(e) => setFilters({ ...filters, agent_id: e.currentTarget.value })}>
              <option value="">All agents</option>
              {(agents.data ?? []).map((a) => (
                <option key={a.id} value={String(a.id)}>
                  {a.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit">Show</button>
      </form>
      <ErrorAlert error={stats.error || perAgent.error} />
      {!s ? (
        <Loading />
      ) : (
        <>
          <ul class="cards" aria-label="Totals">
            <li>
              <strong>{s.conversations}</strong> conversations
            </li>
            <li>
              <strong>{s.minutes}</strong> minutes
            </li>
            <li>
              <strong>{Math.round(s.average_duration_seconds)} s</strong> average length
            </li>
            <li>
              <strong>{shown(percent(s.answer_rate), ' %')}</strong> answer rate ({s.answered} of {s.answers} answers known)
            </li>
            <li>
              <strong>{s.voice_to_voice_ms ? `${s.voice_to_voice_ms.p50} ms` : '—'}</strong> voice-to-voice, median (p95{' '}
              {shown(s.voice_to_voice_ms?.p95 ?? null, ' ms')})
            </li>
            <li>
              <strong>{s.gaps_found}</strong> unanswered questions
            </li>
          </ul>
          {days.length === 0 ? (
            <p>No conversations in this range.</p>
          ) : (
            <>
              <Plot title="Conversations per day" days={days} series={series.conversations} />
              <Plot title="Minutes per day" days={days} series={series.minutes} />
              <Plot
                title="Answer rate per day"
                days={days}
                unit=" %"
                max={100}
                series={series.answerRate}
                note="Of the answers the agents gave, the share they knew (the others said they did not know and raised a knowledge gap)."
              />
              <Plot
                title="Voice-to-voice per day"
                days={days}
                unit=" ms"
                series={series.latency}
                note="From the end of the visitor's speech to the first audio of the answer: the median (p50) and the slowest 5 % (p95) of the day's answers."
              />
            </>
          )}
        </>
      )}
      {perAgent.data && (
        <table>
          <caption>By agent (all time and this month)</caption>
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Conversations</th>
              <th scope="col">Minutes</th>
              <th scope="col">Answer rate</th>
              <th scope="col">This month</th>
              <th scope="col">Running</th>
            </tr>
          </thead>
          <tbody>
            {perAgent.data.agents.map((a: any) => (
              <tr key={a.agent_id}>
                <th scope="row">
                  {a.agent_name}
                  {a.exists ? '' : ' (deleted)'}
                </th>
                <td>{a.conversations}</td>
                <td>{a.minutes}</td>
                <td>{shown(percent(a.answer_rate), ' %')}</td>
                <td>{a.this_month.conversations}</td>
                <td>{a.running}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}

/**
 * Reports (its own chunk, with uPlot): date range and agent; conversations and minutes per day;
 * a table per agent. Every plot has a "show data table" toggle with the numbers behind it.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { api, query } from '../api.js';
import { Page, ErrorAlert, Field, Loading, useLoad, fieldError } from '../ui.js';

function Plot(props: { title: string; days: string[]; series: Array<{ label: string; values: number[] }> }) {
  const ref = useRef<HTMLDivElement>(null);
  const [table, setTable] = useState(false);
  useEffect(() => {
    if (!ref.current || props.days.length === 0) return;
    const xs = props.days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const colors = ['#2457c5', '#b3541e', '#2e7d32'];
    const plot = new uPlot({
      width: Math.min(720, ref.current.clientWidth || 720),
      height: 220,
      series: [{}, ...props.series.map((s, i) => ({ label: s.label, stroke: colors[i % colors.length], width: 2 }))],
      axes: [{}, {}],
    }, [xs, ...props.series.map((s) => s.values)] as uPlot.AlignedData, ref.current);
    return () => plot.destroy();
  }, [props.days, props.series]);
  const id = props.title.replace(/\W+/g, '-').toLowerCase();
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{props.title}</h2>
      <div ref={ref} role="img" aria-label={`${props.title}: a plot; the data table has the numbers`} />
      <button type="button" aria-expanded={table} onClick={() => setTable(!table)}>{table ? 'Hide data table' : 'Show data table'}</button>
      {table && (
        <table>
          <caption>{props.title}: the numbers</caption>
          <thead><tr><th scope="col">Day</th>{props.series.map((s) => <th scope="col" key={s.label}>{s.label}</th>)}</tr></thead>
          <tbody>
            {props.days.map((d, i) => <tr key={d}><td>{d}</td>{props.series.map((s) => <td key={s.label}>{s.values[i]}</td>)}</tr>)}
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
  const days: string[] = stats.data?.per_day.map((d: any) => d.date) ?? [];
  return (
    <Page title="Reports">
      <form class="filters" aria-label="Report range" onSubmit={(e) => { e.preventDefault(); setApplied({ ...filters }); }}>
        <Field label="From date" error={fieldError(stats.error, 'date_from')}>{(id, d) => <input id={id} type="date" value={filters.date_from} aria-describedby={d} onInput={(e) => setFilters({ ...filters, date_from: e.currentTarget.value })} />}</Field>
        <Field label="To date" error={fieldError(stats.error, 'date_to')}>{(id, d) => <input id={id} type="date" value={filters.date_to} aria-describedby={d} onInput={(e) => setFilters({ ...filters, date_to: e.currentTarget.value })} />}</Field>
        <Field label="Agent">
          {(id) => (
            <select id={id} value={filters.agent_id} onChange={(e) => setFilters({ ...filters, agent_id: e.currentTarget.value })}>
              <option value="">All agents</option>
              {(agents.data ?? []).map((a) => <option key={a.id} value={String(a.id)}>{a.name}</option>)}
            </select>
          )}
        </Field>
        <button type="submit">Show</button>
      </form>
      <ErrorAlert error={stats.error || perAgent.error} />
      {!stats.data ? <Loading /> : (
        <>
          <ul class="cards" aria-label="Totals">
            <li><strong>{stats.data.conversations}</strong> conversations</li>
            <li><strong>{stats.data.minutes}</strong> minutes</li>
            <li><strong>{Math.round(stats.data.average_duration_seconds)} s</strong> average length</li>
            <li><strong>{stats.data.gaps_found}</strong> unanswered questions</li>
          </ul>
          {days.length === 0 ? <p>No conversations in this range.</p> : (
            <>
              <Plot title="Conversations per day" days={days} series={[{ label: 'Conversations', values: stats.data.per_day.map((d: any) => d.conversations) }]} />
              <Plot title="Minutes per day" days={days} series={[{ label: 'Minutes', values: stats.data.per_day.map((d: any) => d.minutes) }]} />
            </>
          )}
        </>
      )}
      {perAgent.data && (
        <table>
          <caption>By agent (all time and this month)</caption>
          <thead><tr><th scope="col">Agent</th><th scope="col">Conversations</th><th scope="col">Minutes</th><th scope="col">This month</th><th scope="col">Running</th></tr></thead>
          <tbody>
            {perAgent.data.agents.map((a: any) => (
              <tr key={a.agent_id}><td>{a.agent_name}{a.exists ? '' : ' (deleted)'}</td><td>{a.conversations}</td><td>{a.minutes}</td><td>{a.this_month.conversations}</td><td>{a.running}</td></tr>
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}

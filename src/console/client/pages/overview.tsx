/**
 * Overview: what a business owner checks first. With no agent yet, "create your first agent";
 * otherwise sessions live now (against SESSION_CAPACITY and the plan's limit, every 2 s), minutes
 * this month, balance, open gaps and unread notifications.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { href } from '../router.js';
import { Page, ErrorAlert, Loading, useLoad, usePoll, me, can } from '../ui.js';
import { CreateAgentForm } from './agents.js';

interface Summary {
  agents: any[];
  usage: any;
  plan: any;
  unread: number;
  gaps: number;
}

export function Overview() {
  const { data, error, reload } = useLoad<Summary>(async () => {
    const [agents, usage, plan, unread] = await Promise.all([
      api.get<any[]>('/v1/agent/list'),
      api.get('/v1/usage/summary').catch(() => null),
      api.get('/v1/billing/plan').catch(() => null),
      api.get<{ unread: number }>('/v1/notifications/unread-count').catch(() => ({ unread: 0 })),
    ]);
    const gapLists = await Promise.all(agents.map((a) => api.get<{ gaps: any[] }>(`/v1/agent/${a.id}/v2/gaps?status=open`).catch(() => ({ gaps: [] }))));
    return { agents, usage, plan, unread: unread.unread, gaps: gapLists.reduce((n, g) => n + g.gaps.length, 0) };
  });
  const [live, setLive] = useState<number | null>(null);
  const refreshLive = async () => {
    if (!can('sessions')) return;
    const sessions = await api.get<any>('/v1/sessions?status=active&limit=200').catch(() => null);
    if (sessions) setLive(Array.isArray(sessions) ? sessions.length : (sessions.items ?? sessions.sessions ?? []).length);
  };
  usePoll(refreshLive, 2000);
  useEffect(() => void refreshLive(), []);

  if (error)
    return (
      <Page title="Overview">
        <ErrorAlert error={error} />
      </Page>
    );
  if (!data)
    return (
      <Page title="Overview">
        <Loading />
      </Page>
    );
  if (data.agents.length === 0) {
    return (
      <Page title="Welcome to Presence" intro="Create your first agent: a face and a voice that answers your website's visitors from what your website says.">
        <section aria-labelledby="first-agent">
          <h2 id="first-agent">Create your first agent</h2>
          <CreateAgentForm onCreated={() => reload()} />
        </section>
      </Page>
    );
  }
  const capacity = me.value?.session_capacity;
  const planLimit = data.plan?.limits?.running_sessions;
  return (
    <Page title="Overview">
      <ul class="cards" aria-label="At a glance">
        <li>
          <strong>{live ?? '—'}</strong> live sessions now
          <small>
            {capacity ? ` of ${capacity} this server takes` : ''}
            {planLimit ? `; your plan allows ${planLimit} at once` : ''}
          </small>
          {live !== null && (
            <div>
              <a href={href('/conversations')}>Conversations</a>
            </div>
          )}
        </li>
        <li>
          <strong>{data.usage ? data.usage.session_minutes : '—'}</strong> minutes this month
        </li>
        <li>
          <strong>{data.usage ? `$${data.usage.balance}` : '—'}</strong> balance <a href={href('/billing')}>Billing</a>
        </li>
        <li>
          <strong>{data.gaps}</strong> open questions your agents could not answer
        </li>
        <li>
          <strong>{data.unread}</strong> unread notifications <a href={href('/inbox')}>Inbox</a>
        </li>
      </ul>
      <table>
        <caption>Your agents</caption>
        <thead>
          <tr>
            <th scope="col">Agent</th>
            <th scope="col">Status</th>
            <th scope="col">Default</th>
          </tr>
        </thead>
        <tbody>
          {data.agents.map((a) => (
            <tr key={a.id}>
              <td>
                <a href={href(`/agents/${a.id}`)}>{a.name}</a>
              </td>
              <td>{a.status}</td>
              <td>{a.is_default ? 'yes' : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Page>
  );
}

/** Inbox: notifications with read/unread, mark all read; the destinations they are also sent to. */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Page, ErrorAlert, Loading, useLoad, lacking, fmtDate } from '../ui.js';

export function Inbox() {
  const inbox = useLoad(() => api.get('/v1/notifications?limit=50'));
  const destinations = useLoad(() => api.get('/v1/notifications/destinations').catch(() => null));
  const [error, setError] = useState<unknown>(null);
  const markAll = async () => {
    try {
      await api.post('/v1/notifications/read', { all: true });
      setError(null);
      await inbox.reload();
    } catch (e) {
      setError(e);
    }
  };
  const dests: any[] = Array.isArray(destinations.data) ? destinations.data : (destinations.data?.destinations ?? []);
  return (
    <Page title="Inbox">
      <ErrorAlert error={error || inbox.error} />
      {!inbox.data ? (
        <Loading />
      ) : (
        <>
          <p>
            {inbox.data.unread} unread of {inbox.data.total}.{' '}
            <button type="button" disabled={!inbox.data.unread || !!lacking('setup')} onClick={markAll}>
              Mark all read
            </button>
          </p>
          <ul class="inbox">
            {inbox.data.items.map((n: any) => (
              <li key={n.id} class={n.read_at ? 'read' : 'unread'}>
                <h2>
                  {n.read_at ? '' : <span class="badge">new</span>} {n.title}
                </h2>
                <p>{n.body}</p>
                <small>
                  {n.agent_name ?? ''} · {n.category} · {fmtDate(n.created_at)}
                </small>
              </li>
            ))}
            {inbox.data.items.length === 0 && <li>No notifications yet.</li>}
          </ul>
        </>
      )}
      <table>
        <caption>Destinations notifications are also sent to</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Kind</th>
            <th scope="col">Enabled</th>
          </tr>
        </thead>
        <tbody>
          {dests.map((d) => (
            <tr key={d.id}>
              <td>{d.name ?? d.url}</td>
              <td>{d.kind ?? d.type}</td>
              <td>{d.enabled ? 'yes' : 'no'}</td>
            </tr>
          ))}
          {dests.length === 0 && (
            <tr>
              <td colSpan={3}>None: notifications stay in this inbox.</td>
            </tr>
          )}
        </tbody>
      </table>
    </Page>
  );
}

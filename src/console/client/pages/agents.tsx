/** Agents: the list with each one's brain state; create, duplicate, make default, delete (typing the name to confirm). */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { href, navigate, unsaved } from '../router.js';
import { Page, ErrorAlert, Field, Loading, Dialog, useLoad, fieldError, lacking } from '../ui.js';

export function CreateAgentForm(props: { onCreated: (agent: any) => void }) {
  const [name, setName] = useState('');
  const [website, setWebsite] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const agent = await api.post('/v1/agent/create', { name, ...(website.trim() && { website_url: website.trim() }) });
      setError(null);
      setName('');
      setWebsite('');
      unsaved.value = false;
      props.onCreated(agent);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const denied = lacking('setup');
  return (
    <form onSubmit={submit} onInput={() => (unsaved.value = true)}>
      <ErrorAlert error={error} />
      <Field label="Agent name" error={fieldError(error, 'name')}>
        {(id, d) => <input id={id} name="name" value={name} maxLength={100} required aria-describedby={d} onInput={(e) => setName(e.currentTarget.value)} />}
      </Field>
      <Field label="Your website (optional)" hint="The agent learns from it: Knowledge › Find pages." error={fieldError(error, 'website_url')}>
        {(id, d) => (
          <input
            id={id}
            name="website_url"
            type="url"
            placeholder="https://example.com"
            value={website}
            aria-describedby={d}
            onInput={(e) => setWebsite(e.currentTarget.value)}
          />
        )}
      </Field>
      <button type="submit" disabled={busy || !!denied} title={denied}>
        Create agent
      </button>
      {denied && <small>{denied}</small>}
    </form>
  );
}

const BRAIN_LABEL: Record<string, string> = {
  none: 'not built',
  pending: 'waiting to build',
  processing: 'building',
  complete: 'ready',
  failed: 'build failed',
};

export function Agents() {
  const { data, error, loading, reload } = useLoad(async () => {
    const agents = await api.get<any[]>('/v1/agent/list');
    const brains = await Promise.all(agents.map((a) => api.get(`/v1/agent/${a.id}/brain-status`).catch(() => null)));
    return agents.map((a, i) => ({ ...a, brain: brains[i]?.brain_status ?? 'none' }));
  });
  const [actionError, setActionError] = useState<unknown>(null);
  const [deleting, setDeleting] = useState<any>(null);
  const [typed, setTyped] = useState('');

  const act = async (run: () => Promise<unknown>) => {
    try {
      await run();
      setActionError(null);
      await reload();
    } catch (e) {
      setActionError(e);
    }
  };

  return (
    <Page title="Agents">
      <ErrorAlert error={error || actionError} />
      {loading && !data ? (
        <Loading />
      ) : (
        <table>
          <caption>Your agents and what they know</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Knowledge</th>
              <th scope="col">Default</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(data ?? []).map((a) => (
              <tr key={a.id}>
                <td>
                  <a href={href(`/agents/${a.id}`)}>{a.name}</a>
                </td>
                <td>{a.status}</td>
                <td>{BRAIN_LABEL[a.brain] ?? a.brain}</td>
                <td>
                  {a.is_default ? (
                    'Default'
                  ) : (
                    <button
                      type="button"
                      disabled={!!lacking('setup')}
                      title={lacking('setup')}
                      onClick={() => act(() => api.post(`/v1/agent/${a.id}/set-default`))}
                      aria-label={`Make ${a.name} the default`}
                    >
                      Make default
                    </button>
                  )}
                </td>
                <td class="actions">
                  <button
                    type="button"
                    disabled={!!lacking('setup')}
                    title={lacking('setup')}
                    onClick={() => act(() => api.post(`/v1/agent/${a.id}/duplicate`))}
                    aria-label={`Duplicate ${a.name}`}
                  >
                    Duplicate
                  </button>
                  <button
                    type="button"
                    class="danger"
                    disabled={!!lacking('delete')}
                    title={lacking('delete')}
                    onClick={() => {
                      setTyped('');
                      setDeleting(a);
                    }}
                    aria-label={`Delete ${a.name}`}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
            {data?.length === 0 && (
              <tr>
                <td colSpan={5}>No agents yet.</td>
              </tr>
            )}
          </tbody>
        </table>
      )}
      <section aria-labelledby="new-agent">
        <h2 id="new-agent">New agent</h2>
        <CreateAgentForm onCreated={(agent) => navigate(href(`/agents/${agent.id}`))} />
      </section>
      <Dialog title={deleting ? `Delete ${deleting.name}?` : 'Delete agent'} open={!!deleting} onClose={() => setDeleting(null)}>
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            const target = deleting;
            setDeleting(null);
            await act(() => api.del(`/v1/agent/${target.id}`));
          }}
        >
          <p>This deletes the agent, its knowledge and its settings, and ends its running sessions. It cannot be undone.</p>
          <Field label={`Type the agent's name (${deleting?.name}) to confirm`}>
            {(id) => <input id={id} value={typed} onInput={(e) => setTyped(e.currentTarget.value)} autoComplete="off" />}
          </Field>
          <button type="submit" class="danger" disabled={typed !== deleting?.name}>
            Delete for good
          </button>
          <button type="button" onClick={() => setDeleting(null)}>
            Cancel
          </button>
        </form>
      </Dialog>
    </Page>
  );
}

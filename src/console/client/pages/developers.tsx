/**
 * Developers: API keys (create with permissions, the secret shown once, list with prefix and last
 * use, revoke), the reference links, and every webhook of the account at a glance (each agent's
 * handoff rules that send to a webhook, and the notification destinations), with its state.
 */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { href } from '../router.js';
import { Page, ErrorAlert, Field, Loading, Confirm, Dialog, Table, useLoad, fieldError, lacking, fmtDate, me } from '../ui.js';

const ALL = ['read', 'setup', 'sessions', 'delete'];

export function Developers() {
  const keys = useLoad(() => api.get<{ keys: any[] }>('/v1/keys'));
  const [name, setName] = useState('');
  const [perms, setPerms] = useState<string[]>(['read']);
  const [error, setError] = useState<unknown>(null);
  const [secret, setSecret] = useState<any>(null);
  const [revoking, setRevoking] = useState<any>(null);
  const mine = me.value?.permissions ?? [];

  const create = async (event: Event) => {
    event.preventDefault();
    try {
      const created = await api.post('/v1/keys', { ...(name.trim() && { name: name.trim() }), permissions: perms });
      setSecret(created);
      setError(null);
      setName('');
      await keys.reload();
    } catch (e) {
      setError(e);
    }
  };
  const revoke = async () => {
    const key = revoking;
    setRevoking(null);
    try {
      await api.del(`/v1/keys/${key.id}`);
      setError(null);
      await keys.reload();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <Page title="Developers">
      <p>
        The HTTP API does everything this console does. Reference: <a href="/docs">API reference</a> · <a href="/docs/render-protocol">Render protocol</a> ·{' '}
        <a href="/openapi.json">OpenAPI document</a>
      </p>
      <ErrorAlert error={error || keys.error} />
      {keys.data ? (
        <Table
          caption="API keys"
          columns={['Name', 'Key', 'Permissions', 'Created', 'Last used', 'Actions']}
          empty="No API keys."
          rows={keys.data.keys.map((k) => ({
            key: k.id,
            cells: [
              k.name ?? <em>unnamed</em>,
              <code key="prefix">{k.prefix}…</code>,
              k.permissions.join(', '),
              fmtDate(k.created_at),
              k.last_used_at ? fmtDate(k.last_used_at) : 'never',
              <button
                key="revoke"
                type="button"
                class="danger"
                disabled={!!lacking('delete')}
                title={lacking('delete')}
                aria-label={`Revoke ${k.name ?? k.prefix}`}
                onClick={() => setRevoking(k)}
              >
                Revoke
              </button>,
            ],
          }))}
        />
      ) : (
        <Loading what="keys" />
      )}
      <section aria-labelledby="new-key">
        <h2 id="new-key">Create a key</h2>
        <form onSubmit={create}>
          <Field label="Key name" error={fieldError(error, 'name')}>
            {(id, d) => <input id={id} value={name} maxLength={100} aria-describedby={d} onInput={(e) => setName(e.currentTarget.value)} />}
          </Field>
          <fieldset>
            <legend>Permissions</legend>
            {ALL.map((p) => (
              <label key={p} class="inline" title={mine.includes(p) ? undefined : `Your sign-in lacks "${p}", so a key you make cannot have it`}>
                <input
                  type="checkbox"
                  checked={perms.includes(p)}
                  disabled={!mine.includes(p)}
                  onChange={(e) => setPerms(e.currentTarget.checked ? [...perms, p] : perms.filter((x) => x !== p))}
                />{' '}
                {p}
              </label>
            ))}
            {fieldError(error, 'permissions') && (
              <span class="error" role="alert">
                {fieldError(error, 'permissions')}
              </span>
            )}
          </fieldset>
          <button type="submit" disabled={!!lacking('setup')} title={lacking('setup')}>
            Create key
          </button>
        </form>
      </section>
      <Webhooks />
      <Dialog title="Your new API key" open={!!secret} onClose={() => setSecret(null)}>
        <p>Copy it now: it is shown this once.</p>
        <Field label="API key">{(id) => <input id={id} readOnly value={secret?.key ?? ''} size={60} onFocus={(e) => e.currentTarget.select()} />}</Field>
        <button type="button" onClick={() => setSecret(null)}>
          Done
        </button>
      </Dialog>
      <Confirm
        title={`Revoke ${revoking?.name ?? revoking?.prefix ?? 'key'}?`}
        open={!!revoking}
        action="Revoke key"
        onConfirm={revoke}
        onClose={() => setRevoking(null)}
      >
        Anything using this key stops working at once.
      </Confirm>
    </Page>
  );
}

const STATE_TEXT: Record<string, string> = { active: 'active', needs_attention: 'needs attention', paused: 'paused', failing: 'failing' };

/** Every webhook the account sends to: handoff rules (per agent) and notification destinations. */
function Webhooks() {
  const hooks = useLoad(async () => {
    const agents = await api.get<any[]>('/v1/agent/list');
    const rules = await Promise.all(
      agents.map(async (agent) =>
        ((await api.get<{ rules: any[] }>(`/v1/agent/${agent.id}/v2/rules`)).rules ?? [])
          .filter((rule) => rule.destination?.type === 'webhook')
          .map((rule) => ({
            kind: 'Handoff',
            name: `${agent.name} › ${rule.name}`,
            url: rule.destination.url as string,
            state: rule.enabled ? rule.state : 'disabled',
            link: `/agents/${agent.id}/handoffs`,
          })),
      ),
    );
    const destinations = (await api.get<{ destinations: any[] }>('/v1/notifications/destinations')).destinations
      .filter((d) => d.type === 'webhook')
      .map((d) => ({ kind: 'Notifications', name: d.name ?? 'Webhook', url: d.url as string, state: d.state ?? 'active', link: '/inbox' }));
    return [...rules.flat(), ...destinations];
  });
  return (
    <section aria-labelledby="webhooks-title">
      <h2 id="webhooks-title">Webhooks</h2>
      <ErrorAlert error={hooks.error} />
      {!hooks.data && !hooks.error && <Loading what="webhooks" />}
      {hooks.data && (
        <Table
          caption="Every webhook this account sends to"
          columns={['Sends', 'Name', 'Address', 'State']}
          empty="No webhooks yet: add one to an agent's Handoffs, or as a notification destination in the Inbox."
          rows={hooks.data.map((h, i) => ({
            key: i,
            cells: [
              h.kind,
              <a key="name" href={href(h.link)}>
                {h.name}
              </a>,
              <code key="url">{h.url}</code>,
              STATE_TEXT[h.state] ?? h.state,
            ],
          }))}
        />
      )}
    </section>
  );
}

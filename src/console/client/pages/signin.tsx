/**
 * Signing in: a link from `npx presence console-link` (its token is taken out of the address bar
 * at once and exchanged once), or an API key pasted once. Either way the browser ends up holding
 * only the HttpOnly session cookie.
 */
import { useEffect, useState } from 'preact/hooks';
import { call } from '../api.js';
import { Page, ErrorAlert, Field, type SignedIn } from '../ui.js';

export function SignIn(props: { onSignedIn: (who: SignedIn) => void }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [key, setKey] = useState('');

  useEffect(() => {
    const token = new URLSearchParams(location.search).get('token');
    if (!token) return;
    // The link works once: it leaves the address bar (and the history) before it is used.
    history.replaceState(null, '', '/console/login');
    setBusy(true);
    call<SignedIn>('POST', '/console/session', { token })
      .then(props.onSignedIn)
      .catch(setError)
      .finally(() => setBusy(false));
  }, []);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const who = await call<SignedIn>('POST', '/console/session', { key: key.trim() });
      setKey('');
      props.onSignedIn(who);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Page title="Sign in to Presence">
      {busy && <p aria-live="polite">Signing in…</p>}
      <ErrorAlert error={error} />
      <p>
        Open the link that <code>npm start</code> printed, or run <code>npx presence console-link</code> on the server for a new one (it signs you in once,
        within ten minutes).
      </p>
      <form onSubmit={submit}>
        <Field label="Or paste an API key" hint="Used once to sign you in; the page never keeps it.">
          {(id, describedBy) => (
            <input
              id={id}
              name="key"
              type="password"
              autoComplete="off"
              spellcheck={false}
              aria-describedby={describedBy}
              value={key}
              onInput={(e) => setKey(e.currentTarget.value)}
              required
            />
          )}
        </Field>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </Page>
  );
}

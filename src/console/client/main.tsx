/**
 * The console's entry: checks the sign-in (the cookie, through GET /console/session), shows the
 * sign-in page or the app frame (a labelled navigation, one main), and picks the page for the path.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { signal, useSignalEffect } from '@preact/signals';
import './style.css';
import { api, call, signedOut } from './api.js';
import { href, match, navigate, path } from './router.js';
import { me, usePoll, focusTitle, type SignedIn, Page } from './ui.js';
import { SignIn } from './pages/signin.js';
import { Overview } from './pages/overview.js';
import { Agents } from './pages/agents.js';
import { AgentPages } from './pages/agent.js';
import { Developers } from './pages/developers.js';
import { Conversations, Conversation } from './pages/conversations.js';
import { Billing } from './pages/billing.js';
import { Inbox } from './pages/inbox.js';
import { lazy } from './lazy.js';

const Reports = lazy(() => import('./pages/reports.js').then((m) => m.Reports));

const checked = signal(false);
/** Unread notifications and open gaps, for the navigation's badges (every 30 s). */
const unread = signal(0);

async function checkSession() {
  try {
    me.value = await call<SignedIn>('GET', '/console/session');
    signedOut.value = false;
  } catch {
    me.value = null;
  } finally {
    checked.value = true;
  }
}

const NAV: Array<[string, string]> = [
  ['/', 'Overview'],
  ['/agents', 'Agents'],
  ['/conversations', 'Conversations'],
  ['/reports', 'Reports'],
  ['/inbox', 'Inbox'],
  ['/billing', 'Billing'],
  ['/developers', 'Developers'],
];

function Nav() {
  const current = path.value;
  return (
    <nav aria-label="Console">
      <a class="brand" href={href('/')}>
        Presence
      </a>
      <ul>
        {NAV.map(([to, label]) => {
          const full = href(to).replace(/\/$/, '');
          const active = to === '/' ? current === full : current === full || current.startsWith(full + '/');
          return (
            <li key={to}>
              <a href={href(to)} aria-current={active ? 'page' : undefined}>
                {label}
                {label === 'Inbox' && unread.value > 0 && (
                  <span class="badge">
                    <span aria-hidden="true">{unread.value}</span>
                    <span class="visually-hidden">{unread.value} unread</span>
                  </span>
                )}
              </a>
            </li>
          );
        })}
      </ul>
      <SignOut />
    </nav>
  );
}

function SignOut() {
  return (
    <div class="who">
      <span>{me.value?.account_name}</span>
      <button
        type="button"
        onClick={async () => {
          await call('DELETE', '/console/session').catch(() => undefined);
          me.value = null;
          navigate(href('/login'), true);
        }}
      >
        Sign out
      </button>
    </div>
  );
}

function NotFound() {
  return (
    <Page title="Page not found">
      <p>
        There is no console page at <code>{path.value}</code>.
      </p>
      <p>
        <a href={href('/')}>Go to the overview</a>
      </p>
    </Page>
  );
}

function Route() {
  const p = path.value;
  let m: Record<string, string> | null;
  if (match('/', p) || match('', p)) return <Overview />;
  if (match('/agents', p)) return <Agents />;
  if ((m = match('/agents/:id', p))) return <AgentPages id={Number(m.id)} tab="look" />;
  if ((m = match('/agents/:id/:tab', p))) return <AgentPages id={Number(m.id)} tab={m.tab} />;
  if (match('/conversations', p)) return <Conversations />;
  if ((m = match('/conversations/:id', p))) return <Conversation id={m.id} />;
  if (match('/reports', p)) return <Reports />;
  if (match('/inbox', p)) return <Inbox />;
  if (match('/billing', p)) return <Billing />;
  if (match('/developers', p)) return <Developers />;
  return <NotFound />;
}

function App() {
  const [first, setFirst] = useState(true);
  useEffect(() => {
    void checkSession();
  }, []);
  useSignalEffect(() => {
    if (signedOut.value) me.value = null;
  });
  // A new page: its title gets the focus (not on the first load).
  useSignalEffect(() => {
    void path.value;
    if (first) setFirst(false);
    else focusTitle();
  });
  usePoll(
    async () => {
      if (!me.value) return;
      const count = await api.get<{ unread: number }>('/v1/notifications/unread-count').catch(() => null);
      if (count) unread.value = count.unread;
    },
    30_000,
    !!me.value,
  );
  useEffect(() => {
    if (me.value)
      void api
        .get<{ unread: number }>('/v1/notifications/unread-count')
        .then((c) => (unread.value = c.unread))
        .catch(() => undefined);
  }, [me.value?.account_id]);

  if (!checked.value)
    return (
      <main id="main">
        <h1>Presence console</h1>
        <p>Loading…</p>
      </main>
    );
  if (!me.value || match('/login')) {
    return (
      <main id="main" class="signin">
        <SignIn
          onSignedIn={(who) => {
            me.value = who;
            signedOut.value = false;
            navigate(href('/'), true);
          }}
        />
      </main>
    );
  }
  return (
    <div class="frame">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Nav />
      <main id="main">
        <Route />
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);

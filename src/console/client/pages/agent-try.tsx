/**
 * Agent › Try it: a real conversation session with the agent, its player in a frame (speak to it
 * through the microphone, or type in the player), beside a "send as visitor" box that sends a
 * visitor turn through `POST /v1/sessions/{id}/commands` (`visitor.message`). The transcript grows
 * live (the conversation's report, polled every 2 s while the tab is visible), a timer runs, Stop
 * ends it, and leaving the page ends it too: a test left running is still a billed session.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiFailure } from '../api.js';
import { ErrorAlert, Field, fieldError, lacking, usePoll } from '../ui.js';

interface Started {
  session_id: string;
  player_url: string;
  max_session_seconds?: number;
}
interface Turn {
  role: 'visitor' | 'agent';
  text: string;
  at: string;
  answered?: boolean;
}

/** Ends a session as the page goes away: `keepalive` lets the request outlive the page. */
function stopOnLeave(sessionId: string): void {
  void fetch(`/v1/sessions/${encodeURIComponent(sessionId)}/stop`, {
    method: 'POST',
    credentials: 'same-origin',
    keepalive: true,
    headers: { 'content-type': 'application/json' },
    body: '{}',
  }).catch(() => undefined);
}

const clock = (seconds: number) => {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(h ? 2 : 1, '0');
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
};

export function TryIt(props: { agent: any }) {
  const a = props.agent;
  const [session, setSession] = useState<Started | null>(null);
  const [startedAt, setStartedAt] = useState<number>(0);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [ended, setEnded] = useState<{ reason: string; seconds: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [sendError, setSendError] = useState<unknown>(null);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [now, setNow] = useState(Date.now());
  const live = !!session && !ended;
  // The session to end when the person leaves, read by the unload handlers below.
  const running = useRef<string | null>(null);
  running.current = live ? session!.session_id : null;

  useEffect(() => {
    const leave = () => {
      if (running.current) stopOnLeave(running.current);
      running.current = null;
    };
    addEventListener('pagehide', leave);
    return () => {
      removeEventListener('pagehide', leave);
      // Leaving the tab (another console page) ends the test too.
      leave();
    };
  }, []);

  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [live]);

  const refresh = async (id: string) => {
    try {
      const c = await api.get(`/v1/reports/conversations/${encodeURIComponent(id)}`);
      setTurns(c.transcript ?? []);
      if (c.ended_at) setEnded({ reason: c.end_reason ?? 'ended', seconds: Number(c.duration_seconds ?? 0) });
      setError(null);
    } catch (e) {
      // The conversation's report may lag its session by a moment; anything else is shown.
      if (!(e instanceof ApiFailure && e.status === 404)) setError(e);
    }
  };
  usePoll(() => session && refresh(session.session_id), 2000, live);

  const start = async () => {
    setBusy(true);
    try {
      const s = await api.post<Started>('/v1/sessions', { agent_id: a.id, mode: 'conversation' });
      setSession(s);
      setTurns([]);
      setEnded(null);
      setError(null);
      setSendError(null);
      // The browser's own clock: the server's may differ by seconds.
      setStartedAt(Date.now());
      setNow(Date.now());
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const stop = async () => {
    if (!session) return;
    setBusy(true);
    try {
      const s = await api.post(`/v1/sessions/${encodeURIComponent(session.session_id)}/stop`);
      setEnded({ reason: s.end_reason ?? 'stopped', seconds: Number(s.duration_seconds ?? (Date.now() - startedAt) / 1000) });
      await refresh(session.session_id);
      setError(null);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const send = async (event: Event) => {
    event.preventDefault();
    if (!session || !text.trim()) return;
    try {
      await api.post(`/v1/sessions/${encodeURIComponent(session.session_id)}/commands`, { type: 'visitor.message', text });
      // Only a sent message leaves the box; a failed one stays for another try.
      setText('');
      setSendError(null);
      await refresh(session.session_id);
    } catch (e) {
      if (e instanceof ApiFailure && e.code === 'session_ended') await refresh(session.session_id);
      setSendError(e);
    }
  };

  const denied = lacking('sessions');
  const elapsed = ended ? ended.seconds : (now - startedAt) / 1000;
  const textError = fieldError(sendError, 'text');
  return (
    <>
      <p>
        Talk to {a.name} as a visitor would: a real conversation, answered from what the agent knows now. It counts as a session (and its minutes) while it
        runs, and ends when you press Stop or leave this page.
      </p>
      <ErrorAlert error={error} />
      {!live && (
        <button type="button" onClick={start} disabled={busy || !!denied} title={denied}>
          {session ? 'Start a new conversation' : 'Start a conversation'}
        </button>
      )}
      {session && (
        <div class="split">
          <section aria-labelledby="try-transcript-title">
            <h2 id="try-transcript-title">Conversation</h2>
            <p>
              {live ? <strong>Live</strong> : <strong>Ended ({ended!.reason})</strong>} ·{' '}
              <span role="timer" aria-label="Time since the conversation started">
                {clock(elapsed)}
              </span>
              {session.max_session_seconds ? ` (ends by itself after ${clock(session.max_session_seconds)})` : ''}
            </p>
            {live && (
              <button type="button" class="danger" onClick={stop} disabled={busy}>
                Stop
              </button>
            )}
            <form onSubmit={send}>
              {sendError && !textError ? <ErrorAlert error={sendError} /> : null}
              <Field label="Send as visitor" hint="Typed text reaches the agent exactly as if a visitor typed it in the player." error={textError}>
                {(id, d) => (
                  <input id={id} value={text} disabled={!live} aria-describedby={d} autoComplete="off" onInput={(e) => setText(e.currentTarget.value)} />
                )}
              </Field>
              <button type="submit" disabled={!live || !text.trim()}>
                Send
              </button>
            </form>
            <div role="log" aria-label="Transcript" aria-live="polite">
              <ol class="transcript">
                {turns.map((t, i) => (
                  <li key={i} class={t.role}>
                    <span class="who">{t.role === 'visitor' ? 'Visitor' : a.name}</span> <time dateTime={t.at}>{new Date(t.at).toLocaleTimeString()}</time>
                    {/* An agent turn cut short before its first word is recorded empty. */}
                    <p>{t.text || '…'}</p>
                    {t.answered === false && <small>Not answered: this became a knowledge gap.</small>}
                  </li>
                ))}
                {turns.length === 0 && <li>No turns yet: speak in the player, or send a message as a visitor.</li>}
              </ol>
            </div>
          </section>
          <section aria-labelledby="try-player-title" class="preview">
            <h2 id="try-player-title">Player</h2>
            {live ? <iframe title={`Conversation with ${a.name}`} src={session.player_url} allow="microphone; autoplay" /> : <p>The conversation has ended.</p>}
          </section>
        </div>
      )}
    </>
  );
}

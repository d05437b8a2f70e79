/**
 * One agent's pages, as tabs: Look (face, voice with a sample, languages, backdrop, cameras,
 * welcome message, live preview), Knowledge (website, find pages, build with progress, pages,
 * pages and sections to edit, system prompt, what it knows), Gaps (answer or dismiss) and Embed (the
 * snippet to paste, visitor values and their signing secret).
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { useForm } from '../forms.js';
import { href, unsaved } from '../router.js';
import { lazy } from '../lazy.js';
import { PagesTable, Sections } from './agent-knowledge-edit.js';
import { VisitorValues } from './agent-visitor-values.js';
import { Page, ErrorAlert, Field, Loading, useLoad, usePoll, fieldError, lacking, fmtDate } from '../ui.js';

// Loaded with their tab, so the console's first load stays small.
const TryIt = lazy(() => import('./agent-try.js').then((m) => m.TryIt));
const Review = lazy(() => import('./agent-review.js').then((m) => m.Review));
const Handoffs = lazy(() => import('./agent-handoffs.js').then((m) => m.Handoffs));
const Alerts = lazy(() => import('./agent-alerts.js').then((m) => m.Alerts));

const TABS: Array<[string, string]> = [
  ['look', 'Look'],
  ['try', 'Try it'],
  ['knowledge', 'Knowledge'],
  ['review', 'Review'],
  ['gaps', 'Gaps'],
  ['embed', 'Embed'],
  ['handoffs', 'Handoffs'],
  ['alerts', 'Alerts'],
];

export function AgentPages(props: { id: number; tab: string }) {
  const { data: agent, error, reload, setData } = useLoad(() => api.get(`/v1/agent/${props.id}`), [props.id]);
  const tab = TABS.find(([t]) => t === props.tab);
  if (error)
    return (
      <Page title="Agent">
        <ErrorAlert error={error} />
        <p>
          <a href={href('/agents')}>Back to agents</a>
        </p>
      </Page>
    );
  if (!agent)
    return (
      <Page title="Agent">
        <Loading />
      </Page>
    );
  if (!tab)
    return (
      <Page title="Page not found">
        <p>This agent has no “{props.tab}” page.</p>
      </Page>
    );
  return (
    <Page title={`${agent.name} › ${tab[1]}`}>
      <nav aria-label="Agent pages" class="tabs">
        <ul>
          {TABS.map(([t, label]) => (
            <li key={t}>
              <a href={href(`/agents/${props.id}/${t}`)} aria-current={t === props.tab ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {props.tab === 'look' && <Look agent={agent} onSaved={setData} />}
      {props.tab === 'knowledge' && <Knowledge agent={agent} onSaved={() => reload()} />}
      {props.tab === 'try' && <TryIt agent={agent} />}
      {props.tab === 'review' && <Review agentId={agent.id} />}
      {props.tab === 'gaps' && <Gaps agentId={agent.id} />}
      {props.tab === 'embed' && <Embed agentId={agent.id} />}
      {props.tab === 'handoffs' && <Handoffs agentId={agent.id} />}
      {props.tab === 'alerts' && <Alerts agentId={agent.id} />}
    </Page>
  );
}

function Look(props: { agent: any; onSaved: (agent: any) => void }) {
  const a = props.agent;
  const catalogs = useLoad(async () => {
    const [faces, backdrops, voices] = await Promise.all([
      api.get<any[]>('/v1/avatars'),
      api.get<any[]>('/v1/backdrops'),
      api.get<any>(`/v1/voices/${a.tts_primary}`).catch(() => []),
    ]);
    return { faces, backdrops, voices: Array.isArray(voices) ? voices : (voices.voices ?? []) };
  });
  const editor = useForm({
    avatar_id: a.avatar_id,
    voice_id: a.voice_id,
    main: a.languages.main,
    also: a.languages.also.join(', '),
    backdrop: a.studio.backdrop ?? '',
    cameras: a.studio.cameras as string[],
    welcome_message: a.welcome_message ?? '',
    fillers_enabled: a.fillers_enabled,
  });
  const { value: form, set, error, setError, saved } = editor;
  const [preview, setPreview] = useState<string | null>(null);
  const save = editor.submit(async () => {
    const agent = await api.patch(`/v1/agent/${a.id}`, {
      avatar_id: form.avatar_id,
      voice_id: form.voice_id,
      languages: {
        main: form.main,
        also: String(form.also)
          .split(',')
          .map((s: string) => s.trim())
          .filter(Boolean),
      },
      studio: { backdrop: form.backdrop || null, cameras: form.cameras },
      welcome_message: form.welcome_message || null,
      fillers_enabled: form.fillers_enabled,
    });
    props.onSaved(agent);
  });
  const showPreview = async () => {
    try {
      setPreview((await api.post(`/v1/agent/${a.id}/preview`)).preview_url);
    } catch (e) {
      setError(e);
    }
  };
  if (catalogs.error) return <ErrorAlert error={catalogs.error} />;
  if (!catalogs.data) return <Loading what="faces and voices" />;
  const { faces, backdrops, voices } = catalogs.data;
  const face = faces.find((f) => f.avatar_id === form.avatar_id);
  const denied = lacking('setup');
  return (
    <div class="split">
      <form onSubmit={save} aria-label="Look">
        <ErrorAlert error={error} />
        <fieldset>
          <legend>Face</legend>
          <div class="faces">
            {faces.map((f) => (
              <label key={f.avatar_id} class="face">
                <input
                  type="radio"
                  name="avatar_id"
                  value={f.avatar_id}
                  checked={form.avatar_id === f.avatar_id}
                  onChange={() => set({ avatar_id: f.avatar_id, voice_id: f.default_voice_id })}
                />
                <span class={`portrait g-${f.gender}`} aria-hidden="true">
                  {f.name.slice(0, 1)}
                </span>
                {f.name}
              </label>
            ))}
          </div>
          {fieldError(error, 'avatar_id') && (
            <span class="error" role="alert">
              {fieldError(error, 'avatar_id')}
            </span>
          )}
          {face && <small>{face.description}</small>}
        </fieldset>
        <Field label="Voice" error={fieldError(error, 'voice_id')}>
          {(id, d) => (
            <select id={id} value={form.voice_id} aria-describedby={d} onChange={(e) => set({ voice_id: e.currentTarget.value })}>
              {voices
                .filter((v: any) => !face || v.gender === face.gender || v.voice_id === form.voice_id)
                .map((v: any) => (
                  <option key={v.voice_id} value={v.voice_id}>
                    {v.name} ({v.language}
                    {v.premium ? ', premium' : ''})
                  </option>
                ))}
            </select>
          )}
        </Field>
        {/* biome-ignore lint/a11y/useMediaCaption: a voice sample; its words are the sentence the voice list shows beside it */}
        <audio controls preload="none" src={`/v1/voices/${a.tts_primary}/${encodeURIComponent(form.voice_id)}/preview`} aria-label="Voice sample" />
        <Field label="Main language (ISO code)" error={fieldError(error, 'main')}>
          {(id, d) => <input id={id} value={form.main} size={4} aria-describedby={d} onInput={(e) => set({ main: e.currentTarget.value })} />}
        </Field>
        <Field label="Also speaks (codes, comma-separated)" error={fieldError(error, 'also')}>
          {(id, d) => <input id={id} value={form.also} aria-describedby={d} onInput={(e) => set({ also: e.currentTarget.value })} />}
        </Field>
        <Field label="Backdrop" error={fieldError(error, 'backdrop')}>
          {(id, d) => (
            <select id={id} value={form.backdrop} aria-describedby={d} onChange={(e) => set({ backdrop: e.currentTarget.value })}>
              <option value="">Plain</option>
              {backdrops.map((b) => (
                <option key={b.backdrop_id} value={b.backdrop_id}>
                  {b.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <fieldset>
          <legend>Cameras</legend>
          {['far', 'mid', 'close'].map((c) => (
            <label key={c} class="inline">
              <input
                type="checkbox"
                checked={form.cameras.includes(c)}
                onChange={(e) => set({ cameras: e.currentTarget.checked ? [...form.cameras, c] : form.cameras.filter((x) => x !== c) })}
              />{' '}
              {c}
            </label>
          ))}
          {fieldError(error, 'cameras') && (
            <span class="error" role="alert">
              {fieldError(error, 'cameras')}
            </span>
          )}
        </fieldset>
        <Field label="Welcome message" hint={`${form.welcome_message.length} / 300 characters`} error={fieldError(error, 'welcome_message')}>
          {(id, d) => (
            <textarea id={id} rows={3} value={form.welcome_message} aria-describedby={d} onInput={(e) => set({ welcome_message: e.currentTarget.value })} />
          )}
        </Field>
        <label class="inline">
          <input type="checkbox" checked={form.fillers_enabled} onChange={(e) => set({ fillers_enabled: e.currentTarget.checked })} /> Short fillers while
          thinking (“let me see…”)
        </label>
        <div>
          <button type="submit" disabled={!!denied} title={denied}>
            Save look
          </button>
          {saved && <span role="status"> Saved.</span>}
        </div>
      </form>
      <section aria-labelledby="preview-title" class="preview">
        <h2 id="preview-title">Preview</h2>
        <p>Shows the agent as saved, without a metered session.</p>
        <button type="button" onClick={showPreview}>
          Show preview
        </button>
        {preview && <iframe title={`Preview of ${a.name}`} src={preview} allow="autoplay" />}
      </section>
    </div>
  );
}

const BUILDING = new Set(['pending', 'processing']);

function Knowledge(props: { agent: any; onSaved: () => void }) {
  const a = props.agent;
  const [website, setWebsite] = useState(a.website_url ?? '');
  const [prompt, setPrompt] = useState(a.system_prompt ?? '');
  const [error, setError] = useState<unknown>(null);
  const [found, setFound] = useState<any[] | null>(null);
  const [chosen, setChosen] = useState<Record<string, 'primary' | 'background' | 'skip'>>({});
  const [finding, setFinding] = useState(false);
  const status = useLoad(() => api.get(`/v1/agent/${a.id}/brain-status`), [a.id]);
  const pages = useLoad(() => api.get<any[]>(`/v1/agent/${a.id}/pages/list`), [a.id]);
  const building = BUILDING.has(status.data?.brain_status);
  // A page added on its own is read by a job too: its row fills in while any page is pending.
  const reading = building || !!pages.data?.some((p) => p.status === 'pending');
  usePoll(
    async () => {
      await status.reload();
      await pages.reload();
    },
    2000,
    reading,
  );
  const denied = lacking('setup');

  const saveWebsite = async (event: Event) => {
    event.preventDefault();
    try {
      await api.patch(`/v1/agent/${a.id}`, { website_url: website.trim() || null });
      setError(null);
      unsaved.value = false;
      setFinding(true);
      const links = await api.get(`/v1/agent/${a.id}/extract-links`);
      setFound(links.links);
      setChosen(Object.fromEntries(links.links.map((l: any) => [l.url, l.default_category === 'primary' ? 'primary' : 'background'])));
    } catch (e) {
      setError(e);
    } finally {
      setFinding(false);
    }
  };
  const build = async () => {
    try {
      const list = found
        ? Object.entries(chosen)
            .filter(([, c]) => c !== 'skip')
            .map(([url, c]) => ({ url, is_primary: c === 'primary' }))
        : undefined;
      status.setData(await api.post(`/v1/agent/${a.id}/generate-brain`, list ? { pages: list } : {}));
      setError(null);
    } catch (e) {
      setError(e);
    }
  };
  const savePrompt = async (event: Event) => {
    event.preventDefault();
    try {
      await api.patch(`/v1/agent/${a.id}`, { system_prompt: prompt.trim() || null });
      setError(null);
      unsaved.value = false;
      props.onSaved();
    } catch (e) {
      setError(e);
    }
  };
  const s = status.data;
  return (
    <>
      <ErrorAlert error={error || status.error || pages.error} />
      <form onSubmit={saveWebsite} aria-label="Website">
        <Field label="Website" error={fieldError(error, 'website_url')}>
          {(id, d) => (
            <input
              id={id}
              type="url"
              value={website}
              placeholder="https://example.com"
              aria-describedby={d}
              onInput={(e) => {
                setWebsite(e.currentTarget.value);
                unsaved.value = true;
              }}
            />
          )}
        </Field>
        <button type="submit" disabled={finding || !!denied} title={denied}>
          Find pages
        </button>
        {finding && <span aria-live="polite"> Looking for pages…</span>}
      </form>
      {found && (
        <fieldset>
          <legend>Pages found ({found.length}): what should the agent read?</legend>
          <table>
            <caption>Pages found on the website</caption>
            <thead>
              <tr>
                <th scope="col">Page</th>
                <th scope="col">Read as</th>
              </tr>
            </thead>
            <tbody>
              {found.map((l) => (
                <tr key={l.url}>
                  <td>
                    {l.anchor || l.path}
                    <br />
                    <small>{l.url}</small>
                  </td>
                  <td>
                    <select
                      aria-label={`Read ${l.path} as`}
                      value={chosen[l.url]}
                      onChange={(e) => setChosen({ ...chosen, [l.url]: e.currentTarget.value as any })}
                    >
                      <option value="primary">Primary (about the business)</option>
                      <option value="background">Background reading</option>
                      <option value="skip">Skip</option>
                    </select>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </fieldset>
      )}
      <section aria-labelledby="build-title">
        <h2 id="build-title">Build</h2>
        <p>
          Knowledge: <strong>{s?.brain_status ?? '…'}</strong>
          {s?.phase ? ` (${s.phase})` : ''}
          {s?.finished_at ? `, last built ${fmtDate(s.finished_at)}` : ''}
        </p>
        {building && (
          <progress aria-label="Knowledge build" max={Math.max(1, s.progress.pages_total)} value={s.progress.pages_done}>
            {s.progress.pages_done} of {s.progress.pages_total} pages
          </progress>
        )}
        {building && (
          <p aria-live="polite">
            {s.progress.pages_done} of {s.progress.pages_total} pages read
          </p>
        )}
        {s?.error && (
          <p role="alert" class="error">
            The build failed: {s.error}
          </p>
        )}
        <button type="button" onClick={build} disabled={building || !!denied} title={denied}>
          Build knowledge
        </button>
      </section>
      <PagesTable agentId={a.id} pages={pages.data} onChanged={pages.reload} />
      {s?.facts && s.facts.length > 0 && (
        <table>
          <caption>What the agent knows, and where it comes from</caption>
          <thead>
            <tr>
              <th scope="col">Topic</th>
              <th scope="col">Fact</th>
              <th scope="col">Source</th>
            </tr>
          </thead>
          <tbody>
            {s.facts.slice(0, 200).map((f: any, i: number) => (
              <tr key={i}>
                <td>{f.topic}</td>
                <td>{f.text}</td>
                <td>
                  {f.source.url ? (
                    <a href={f.source.url} target="_blank" rel="noopener noreferrer">
                      {f.source.title}
                    </a>
                  ) : (
                    f.source.title
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form onSubmit={savePrompt} aria-label="System prompt">
        <Field label="System prompt" hint="Your own instructions on top of what the agent learns from the website." error={fieldError(error, 'system_prompt')}>
          {(id, d) => (
            <textarea
              id={id}
              rows={6}
              value={prompt}
              aria-describedby={d}
              onInput={(e) => {
                setPrompt(e.currentTarget.value);
                unsaved.value = true;
              }}
            />
          )}
        </Field>
        <button type="submit" disabled={!!denied} title={denied}>
          Save system prompt
        </button>
      </form>
      <Sections agentId={a.id} />
    </>
  );
}

function Gaps(props: { agentId: number }) {
  const gaps = useLoad(() => api.get<{ gaps: any[] }>(`/v1/agent/${props.agentId}/v2/gaps?status=open`), [props.agentId]);
  const [answers, setAnswers] = useState<Record<number, string>>({});
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const act = async (gap: any, kind: 'answer' | 'dismiss') => {
    try {
      await api.post(`/v1/agent/${props.agentId}/v2/gaps/${gap.id}/${kind}`, kind === 'answer' ? { answer: answers[gap.id] ?? '' } : {});
      setError(null);
      setDone(kind === 'answer' ? `Answered: “${gap.question}”. The agent knows it from its next turn.` : `Dismissed: “${gap.question}”.`);
      const { [gap.id]: _, ...rest } = answers;
      setAnswers(rest);
      await gaps.reload();
    } catch (e) {
      setError(e);
    }
  };
  if (gaps.error) return <ErrorAlert error={gaps.error} />;
  if (!gaps.data) return <Loading />;
  return (
    <>
      <p>Questions visitors asked that the agent could not answer, most asked first.</p>
      <ErrorAlert error={error} />
      {done && <p role="status">{done}</p>}
      {gaps.data.gaps.length === 0 && <p>No open questions.</p>}
      <ul class="gaps">
        {gaps.data.gaps.map((g) => (
          <li key={g.id}>
            <h2>{g.question}</h2>
            <p>
              Asked {g.times_asked} time{g.times_asked === 1 ? '' : 's'}, last {fmtDate(g.last_asked_at)}.{' '}
              <a href={href(`/conversations?q=${encodeURIComponent(g.question)}`)}>Conversations</a>
            </p>
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void act(g, 'answer');
              }}
            >
              <Field label={`Answer to “${g.question}”`} error={fieldError(error, 'answer')}>
                {(id, d) => (
                  <textarea
                    id={id}
                    rows={2}
                    value={answers[g.id] ?? ''}
                    aria-describedby={d}
                    onInput={(e) => setAnswers({ ...answers, [g.id]: e.currentTarget.value })}
                  />
                )}
              </Field>
              <button type="submit" disabled={!!lacking('setup')}>
                Save answer
              </button>
              <button type="button" disabled={!!lacking('setup')} onClick={() => act(g, 'dismiss')}>
                Dismiss
              </button>
            </form>
          </li>
        ))}
      </ul>
    </>
  );
}

function Embed(props: { agentId: number }) {
  const embed = useLoad(() => api.get(`/v1/agent/${props.agentId}/embed`), [props.agentId]);
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => setCopied(false), [props.agentId]);
  if (embed.error) return <ErrorAlert error={embed.error} />;
  if (!embed.data) return <Loading />;
  const e = embed.data;
  const snippet: string = e.script_snippet;
  return (
    <>
      <ErrorAlert error={error} />
      <Field label="Embed snippet: paste it into your website's pages">{(id) => <textarea id={id} rows={4} readOnly value={snippet} />}</Field>
      <button
        type="button"
        onClick={async () => {
          await navigator.clipboard?.writeText(snippet).catch(() => undefined);
          setCopied(true);
        }}
      >
        Copy snippet
      </button>
      {copied && <span role="status"> Copied.</span>}
      <p>Allowed websites: {(e.allowed_origins ?? []).join(', ') || 'any'}</p>
      <button
        type="button"
        class="danger"
        disabled={!!lacking('setup')}
        onClick={async () => {
          if (!confirm('A new embed key stops the old snippet working. Continue?')) return;
          try {
            embed.setData(await api.post(`/v1/agent/${props.agentId}/embed/regenerate`));
          } catch (err) {
            setError(err);
          }
        }}
      >
        Regenerate embed key
      </button>
      <VisitorValues agentId={props.agentId} />
    </>
  );
}

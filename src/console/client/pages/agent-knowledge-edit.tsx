/**
 * The Knowledge tab's editing: the pages the agent reads (add one, replace a page's text with the
 * owner's own, change primary/background, remove one) and the knowledge-base sections written by
 * hand (add, edit, delete). Each change goes through the documented routes; the agent knows it
 * from its next answer (the server re-indexes).
 */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { unsaved } from '../router.js';
import { Confirm, Dialog, ErrorAlert, Field, Loading, fieldError, lacking, useLoad } from '../ui.js';

export function PagesTable(props: { agentId: number; pages: any[] | undefined; onChanged: () => unknown }) {
  const [editing, setEditing] = useState<any | null>(null);
  const [removing, setRemoving] = useState<any | null>(null);
  const [url, setUrl] = useState('');
  const [primary, setPrimary] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [said, setSaid] = useState<string | null>(null);
  const denied = lacking('setup');
  const addPage = async (event: Event) => {
    event.preventDefault();
    try {
      await api.post(`/v1/agent/${props.agentId}/add-page`, { url: url.trim(), is_primary: primary });
      setSaid(`Reading ${url.trim()}…`);
      setUrl('');
      setError(null);
      unsaved.value = false;
      await props.onChanged();
    } catch (e) {
      setError(e);
    }
  };
  const remove = async () => {
    try {
      await api.del(`/v1/agent/${props.agentId}/pages/${removing.id}`);
      setSaid(`Removed ${removing.title || removing.url}.`);
      setRemoving(null);
      await props.onChanged();
    } catch (e) {
      setError(e);
      setRemoving(null);
    }
  };
  return (
    <section aria-labelledby="pages-title">
      <h2 id="pages-title">Pages</h2>
      <ErrorAlert error={error} />
      {said && <p role="status">{said}</p>}
      <table>
        <caption>Pages the agent reads</caption>
        <thead>
          <tr>
            <th scope="col">Page</th>
            <th scope="col">Kind</th>
            <th scope="col">Status</th>
            <th scope="col">Error</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {(props.pages ?? []).map((p) => (
            <tr key={p.id}>
              <td>
                {p.title || p.url}
                <br />
                <small>{p.url}</small>
                {p.has_override && (
                  <>
                    <br />
                    <small>your own text</small>
                  </>
                )}
              </td>
              <td>{p.is_primary ? 'primary' : 'background'}</td>
              <td>{p.status}</td>
              <td>{p.error ?? ''}</td>
              <td>
                <button type="button" disabled={!!denied} title={denied} onClick={() => setEditing(p)} aria-label={`Edit ${p.title || p.url}`}>
                  Edit
                </button>{' '}
                <button
                  type="button"
                  class="danger"
                  disabled={!!denied}
                  title={denied}
                  onClick={() => setRemoving(p)}
                  aria-label={`Remove ${p.title || p.url}`}
                >
                  Remove
                </button>
              </td>
            </tr>
          ))}
          {props.pages?.length === 0 && (
            <tr>
              <td colSpan={5}>No pages yet: find them from the website above, or add one below.</td>
            </tr>
          )}
        </tbody>
      </table>
      <form onSubmit={addPage} aria-label="Add a page">
        <Field label="Add a page (its address)" error={fieldError(error, 'url')}>
          {(id, d) => (
            <input
              id={id}
              type="url"
              required
              value={url}
              placeholder="https://example.com/opening-hours"
              aria-describedby={d}
              onInput={(e) => {
                setUrl(e.currentTarget.value);
                unsaved.value = true;
              }}
            />
          )}
        </Field>
        <label class="inline">
          <input type="checkbox" checked={primary} onChange={(e) => setPrimary(e.currentTarget.checked)} /> About the business (primary)
        </label>
        <div>
          <button type="submit" disabled={!!denied} title={denied}>
            Add page
          </button>
        </div>
      </form>
      <Dialog title={`Edit ${editing?.title || editing?.url || 'page'}`} open={!!editing} onClose={() => setEditing(null)}>
        {editing && (
          <PageEditor
            agentId={props.agentId}
            pageId={editing.id}
            onDone={async (message) => {
              setEditing(null);
              if (message) setSaid(message);
              await props.onChanged();
            }}
          />
        )}
      </Dialog>
      <Confirm title="Remove this page?" open={!!removing} action="Remove page" onConfirm={remove} onClose={() => setRemoving(null)}>
        The agent stops knowing what {removing?.title || removing?.url} says.
      </Confirm>
    </section>
  );
}

/** One page's text: the owner's own text replaces what was read; empty goes back to the page's text. */
function PageEditor(props: { agentId: number; pageId: number; onDone: (message?: string) => unknown }) {
  const page = useLoad(() => api.get(`/v1/agent/${props.agentId}/pages/${props.pageId}`), [props.pageId]);
  const [content, setContent] = useState<string | null>(null);
  const [primary, setPrimary] = useState<boolean | null>(null);
  const [error, setError] = useState<unknown>(null);
  if (page.error) return <ErrorAlert error={page.error} />;
  if (!page.data) return <Loading what="the page" />;
  const p = page.data;
  const text = content ?? p.content ?? '';
  const save = async (event: Event) => {
    event.preventDefault();
    try {
      const body: Record<string, unknown> = {};
      if (content !== null && content !== (p.content ?? '')) body.content = content.trim() ? content : null;
      if (primary !== null && primary !== p.is_primary) body.is_primary = primary;
      if (Object.keys(body).length) await api.patch(`/v1/agent/${props.agentId}/pages/${props.pageId}`, body);
      unsaved.value = false;
      await props.onDone(Object.keys(body).length ? `Saved ${p.title || p.url}.` : undefined);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <form onSubmit={save}>
      <ErrorAlert error={error} />
      <Field
        label="What the agent knows from this page"
        hint="Write your own text to replace what was read; leave it empty to go back to the page's own text."
        error={fieldError(error, 'content')}
      >
        {(id, d) => (
          <textarea
            id={id}
            rows={12}
            value={text}
            aria-describedby={d}
            onInput={(e) => {
              setContent(e.currentTarget.value);
              unsaved.value = true;
            }}
          />
        )}
      </Field>
      <label class="inline">
        <input type="checkbox" checked={primary ?? p.is_primary} onChange={(e) => setPrimary(e.currentTarget.checked)} /> About the business (primary)
      </label>
      <div>
        <button type="submit">Save page</button>{' '}
        <button type="button" onClick={() => props.onDone()}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Knowledge-base sections: what the owner writes by hand (opening hours, policies, FAQs). */
export function Sections(props: { agentId: number }) {
  const sections = useLoad(() => api.get<{ sections: any[] }>(`/v1/agent/${props.agentId}/kb-sections`), [props.agentId]);
  const [draft, setDraft] = useState({ title: '', content: '' });
  const [editing, setEditing] = useState<any | null>(null);
  const [removing, setRemoving] = useState<any | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [said, setSaid] = useState<string | null>(null);
  const denied = lacking('setup');
  const done = (answer: { sections: any[] }, message: string) => {
    sections.setData(answer);
    setSaid(message);
    setError(null);
    unsaved.value = false;
  };
  const add = async (event: Event) => {
    event.preventDefault();
    try {
      done(await api.post(`/v1/agent/${props.agentId}/kb-sections`, draft), `Added “${draft.title}”.`);
      setDraft({ title: '', content: '' });
    } catch (e) {
      setError(e);
    }
  };
  const saveEdit = async (event: Event) => {
    event.preventDefault();
    try {
      done(
        await api.patch(`/v1/agent/${props.agentId}/kb-sections/${encodeURIComponent(editing.topic)}`, { title: editing.title, content: editing.content }),
        `Saved “${editing.title}”.`,
      );
      setEditing(null);
    } catch (e) {
      setError(e);
    }
  };
  const remove = async () => {
    try {
      done(await api.del(`/v1/agent/${props.agentId}/kb-sections/${encodeURIComponent(removing.topic)}`), `Deleted “${removing.title}”.`);
    } catch (e) {
      setError(e);
    }
    setRemoving(null);
  };
  return (
    <section aria-labelledby="sections-title">
      <h2 id="sections-title">Written by you</h2>
      <ErrorAlert error={error || sections.error} />
      {said && <p role="status">{said}</p>}
      {(sections.data?.sections ?? []).map((s) => (
        <article key={s.topic} aria-labelledby={`section-${s.topic}`}>
          <h3 id={`section-${s.topic}`}>{s.title}</h3>
          <p class="section-text">{s.content}</p>
          <button type="button" disabled={!!denied} title={denied} aria-label={`Edit “${s.title}”`} onClick={() => setEditing({ ...s })}>
            Edit
          </button>{' '}
          <button type="button" class="danger" disabled={!!denied} title={denied} aria-label={`Delete “${s.title}”`} onClick={() => setRemoving(s)}>
            Delete
          </button>
        </article>
      ))}
      {sections.data?.sections.length === 0 && <p>Nothing written yet: add opening hours, policies or answers the website does not give.</p>}
      <form onSubmit={add} aria-label="Add a section">
        <SectionFields labels={['Section title', 'Section text']} rows={5} value={draft} error={error} onChange={setDraft} />
        <button type="submit" disabled={!!denied} title={denied}>
          Add section
        </button>
      </form>
      <Dialog title={`Edit “${editing?.title ?? ''}”`} open={!!editing} onClose={() => setEditing(null)}>
        {editing && (
          <form onSubmit={saveEdit}>
            <SectionFields labels={['Title', 'Text']} rows={8} value={editing} error={error} onChange={setEditing} />
            <button type="submit">Save section</button>{' '}
            <button type="button" onClick={() => setEditing(null)}>
              Cancel
            </button>
          </form>
        )}
      </Dialog>
      <Confirm title="Delete this section?" open={!!removing} action="Delete section" onConfirm={remove} onClose={() => setRemoving(null)}>
        The agent stops knowing “{removing?.title}”.
      </Confirm>
    </section>
  );
}

/** A section's title and text, for adding one and for editing one; a change marks the page unsaved. */
function SectionFields<T extends { title: string; content: string }>(props: {
  labels: [title: string, text: string];
  rows: number;
  value: T;
  error: unknown;
  onChange: (next: T) => void;
}) {
  const set = (patch: Partial<T>) => {
    props.onChange({ ...props.value, ...patch });
    unsaved.value = true;
  };
  return (
    <>
      <Field label={props.labels[0]} error={fieldError(props.error, 'title')}>
        {(id, d) => <input id={id} value={props.value.title} aria-describedby={d} onInput={(e) => set({ title: e.currentTarget.value } as Partial<T>)} />}
      </Field>
      <Field label={props.labels[1]} error={fieldError(props.error, 'content')}>
        {(id, d) => (
          <textarea
            id={id}
            rows={props.rows}
            value={props.value.content}
            aria-describedby={d}
            onInput={(e) => set({ content: e.currentTarget.value } as Partial<T>)}
          />
        )}
      </Field>
    </>
  );
}

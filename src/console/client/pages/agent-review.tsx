/**
 * Agent › Review, over the knowledge v2 routes (`/v1/agent/{id}/v2/…`): how complete the agent's
 * knowledge is, the questions still to answer (answer, or mark not applicable / skip), where its
 * sources disagree, corrections in plain words (preview first, then apply), facts whose source is
 * gone (orphans: keep or drop), how it speaks (behavior) and its dynamic instructions with a
 * preview. Every edit is used from the next conversation on, with no rebuild.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiFailure } from '../api.js';
import { useForm } from '../forms.js';
import { unsaved } from '../router.js';
import { ErrorAlert, Field, Loading, fieldError, lacking, useLoad, usePoll } from '../ui.js';

/** The form-wide alert for an error no field of the form names (a 422 naming a field shows beside it). */
function FormAlert(props: { error: unknown; fields: string[] }) {
  const e = props.error;
  if (!e) return null;
  if (e instanceof ApiFailure && props.fields.some((f) => e.fields[f])) return null;
  return <ErrorAlert error={e} />;
}

function Section(props: { id: string; title: string; children: ComponentChildren }) {
  return (
    <section aria-labelledby={props.id} class="review">
      <h2 id={props.id}>{props.title}</h2>
      {props.children}
    </section>
  );
}

/** A section whose form needs what is saved first: the error loading it, or Loading, until then. */
function LoadedSection<T>(props: { id: string; title: string; loaded: { data?: T | null; error?: unknown }; children: (data: T) => ComponentChildren }) {
  if (props.loaded.error || !props.loaded.data)
    return (
      <Section id={props.id} title={props.title}>
        {props.loaded.error ? <ErrorAlert error={props.loaded.error} /> : <Loading />}
      </Section>
    );
  return <>{props.children(props.loaded.data)}</>;
}

const STATES: Record<string, string> = { needed: 'needed', not_applicable: 'not applicable', skipped: 'skipped' };
const sourceLabel = (s: any) =>
  s.kind === 'page'
    ? `page ${s.url ?? s.ref}`
    : s.kind === 'kb_section'
      ? `section “${s.ref}”`
      : s.kind === 'owner'
        ? 'you'
        : s.kind === 'correction'
          ? 'your correction'
          : s.kind === 'gap'
            ? 'your answer to a gap'
            : s.kind;

export function Review(props: { agentId: number }) {
  const v2 = (p: string) => `/v1/agent/${props.agentId}/v2${p}`;
  const brain = useLoad(() => api.get(v2('/brain')), [props.agentId]);
  const denied = lacking('setup');
  if (brain.error) return <ErrorAlert error={brain.error} />;
  if (!brain.data) return <Loading what="the agent's knowledge" />;
  const b = brain.data;
  const reload = () => brain.reload();
  return (
    <>
      <p>
        What {b.business_type ? `a ${b.business_type}` : 'a business like yours'} should be able to answer, what the agent knows, and how it speaks. Changes
        here are used from the next conversation on.
      </p>
      <Completion v2={v2} agentId={props.agentId} brain={b} denied={denied} onBuilt={reload} />
      <Questions v2={v2} brain={b} denied={denied} onChanged={reload} />
      {b.review.length > 0 && <Disagreements v2={v2} brain={b} denied={denied} onChanged={reload} />}
      <Correction v2={v2} denied={denied} onApplied={reload} />
      <Orphans v2={v2} denied={denied} onChanged={reload} />
      <Behavior v2={v2} denied={denied} />
      <Dynamic v2={v2} denied={denied} />
    </>
  );
}

const BUILDING = new Set(['pending', 'processing']);

/**
 * How complete the knowledge is, and the two build steps behind it: the questions a business like
 * this is asked (from its website), and the facts that answer them (read from its pages and sections).
 */
function Completion(props: { v2: (p: string) => string; agentId: number; brain: any; denied?: string; onBuilt: () => unknown }) {
  const c = props.brain.completion;
  const status = useLoad(() => api.get(`/v1/agent/${props.agentId}/brain-status`), [props.agentId]);
  const [error, setError] = useState<unknown>(null);
  const building = BUILDING.has(status.data?.brain_status);
  usePoll(
    async () => {
      await status.reload();
    },
    2000,
    building,
  );
  // A build that ends changes the questions and facts: load them again.
  const wasBuilding = useRef(false);
  useEffect(() => {
    if (wasBuilding.current && !building) void props.onBuilt();
    wasBuilding.current = building;
  }, [building]);
  const run = async (step: '/schema/generate' | '/extract') => {
    try {
      status.setData(await api.post(props.v2(step)));
      setError(null);
    } catch (e) {
      setError(e);
    }
  };
  const s = status.data;
  const hasQuestions = props.brain.questions.length > 0;
  return (
    <Section id="review-completion" title="Completion">
      {c.total === 0 ? (
        <p>
          {hasQuestions ? 'No question is marked as needed.' : 'No questions yet: generate the questions a business like yours is asked, from its website.'}
        </p>
      ) : (
        <>
          <meter min={0} max={100} low={50} high={90} optimum={100} value={c.percent} aria-label="Questions answered">
            {c.percent}%
          </meter>
          <p>
            {c.answered} of {c.total} questions answered ({c.percent}%).
          </p>
        </>
      )}
      <ErrorAlert error={error || status.error} />
      {building && <progress aria-label="Knowledge build" max={Math.max(1, s.progress?.pages_total ?? 0)} value={s.progress?.pages_done ?? 0} />}
      {building && <p aria-live="polite">Working ({s.phase ?? s.brain_status})…</p>}
      {s?.brain_status === 'failed' && s.error && (
        <p role="alert" class="error">
          The last build failed: {s.error}
        </p>
      )}
      <button type="button" onClick={() => run('/schema/generate')} disabled={building || !!props.denied} title={props.denied}>
        {hasQuestions ? 'Generate the questions again' : 'Generate questions'}
      </button>
      <button
        type="button"
        onClick={() => run('/extract')}
        disabled={building || !hasQuestions || !!props.denied}
        title={props.denied ?? (hasQuestions ? undefined : 'Generate the questions first')}
      >
        Find answers in the pages
      </button>
    </Section>
  );
}

function Questions(props: { v2: (p: string) => string; brain: any; denied?: string; onChanged: () => unknown }) {
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const [errors, setErrors] = useState<Record<string, unknown>>({});
  const [done, setDone] = useState<string | null>(null);
  const missing: any[] = props.brain.completion.missing;
  const aside = (props.brain.questions as any[]).filter((q) => q.state !== 'needed');
  const act = async (q: { question_id: number; question: string }, body: Record<string, unknown>, message: string) => {
    try {
      await api.post(props.v2('answer' in body ? '/answer' : '/questions/state'), { question_id: q.question_id, ...body });
      setErrors({ ...errors, [q.question_id]: null });
      const { [q.question_id]: _, ...rest } = answers;
      setAnswers(rest);
      if (!Object.keys(rest).length) unsaved.value = false;
      setDone(message);
      await props.onChanged();
    } catch (e) {
      setErrors({ ...errors, [q.question_id]: e });
    }
  };
  return (
    <Section id="review-questions" title="Questions to answer">
      {done && <p role="status">{done}</p>}
      {missing.length === 0 && <p>Every needed question has an answer.</p>}
      <ul class="gaps">
        {missing.map((q) => {
          const error = errors[q.question_id];
          return (
            <li key={q.question_id}>
              <h3>{q.question}</h3>
              <p>
                <small>
                  Topic: {q.topic}
                  {q.times_asked ? ` · visitors asked ${q.times_asked} time${q.times_asked === 1 ? '' : 's'}` : ''}
                </small>
              </p>
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  void act(q, { answer: answers[q.question_id] ?? '' }, `Answered: “${q.question}”.`);
                }}
              >
                <FormAlert error={error} fields={['answer']} />
                <Field label={`Answer to “${q.question}”`} error={fieldError(error, 'answer')}>
                  {(id, d) => (
                    <textarea
                      id={id}
                      rows={2}
                      value={answers[q.question_id] ?? ''}
                      aria-describedby={d}
                      onInput={(e) => {
                        setAnswers({ ...answers, [q.question_id]: e.currentTarget.value });
                        unsaved.value = true;
                      }}
                    />
                  )}
                </Field>
                <button type="submit" disabled={!!props.denied} title={props.denied}>
                  Save answer
                </button>
                <button
                  type="button"
                  disabled={!!props.denied}
                  title={props.denied}
                  aria-label={`Not applicable: ${q.question}`}
                  onClick={() => act(q, { state: 'not_applicable' }, `“${q.question}” does not apply to your business.`)}
                >
                  Not applicable
                </button>
                <button
                  type="button"
                  disabled={!!props.denied}
                  title={props.denied}
                  aria-label={`Skip: ${q.question}`}
                  onClick={() => act(q, { state: 'skipped' }, `Skipped “${q.question}”.`)}
                >
                  Skip
                </button>
              </form>
            </li>
          );
        })}
      </ul>
      {aside.length > 0 && (
        <table>
          <caption>Questions set aside</caption>
          <thead>
            <tr>
              <th scope="col">Question</th>
              <th scope="col">State</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {aside.map((q) => (
              <tr key={q.id}>
                <td>
                  {q.question}
                  {errors[q.id] ? (
                    <span class="error" role="alert">
                      {' '}
                      {(errors[q.id] as Error).message}
                    </span>
                  ) : null}
                </td>
                <td>{STATES[q.state] ?? q.state}</td>
                <td>
                  <button
                    type="button"
                    disabled={!!props.denied}
                    title={props.denied}
                    aria-label={`Ask again: ${q.question}`}
                    onClick={() => act({ question_id: q.id, question: q.question }, { state: 'needed' }, `“${q.question}” is needed again.`)}
                  >
                    Ask again
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

/** Where two sources say different things: keep one fact, or write the right answer. */
function Disagreements(props: { v2: (p: string) => string; brain: any; denied?: string; onChanged: () => unknown }) {
  const [error, setError] = useState<unknown>(null);
  const facts = new Map((props.brain.facts as any[]).map((f) => [f.id, f]));
  const questions = new Map((props.brain.questions as any[]).map((q) => [q.id, q]));
  const keep = async (reviewId: number, factId: number) => {
    try {
      await api.post(props.v2('/review/resolve'), { review_id: reviewId, fact_id: factId });
      setError(null);
      await props.onChanged();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <Section id="review-disagreements" title="Where sources disagree">
      <ErrorAlert error={error} />
      {(props.brain.review as any[]).map((r) => (
        <table key={r.id}>
          <caption>{questions.get(r.question_id)?.question ?? 'Other knowledge'}: which is right?</caption>
          <thead>
            <tr>
              <th scope="col">Fact</th>
              <th scope="col">Source</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {r.fact_ids.map((id: number) => {
              const f = facts.get(id);
              return (
                <tr key={id}>
                  <td>{f?.text ?? `fact ${id}`}</td>
                  <td>{(f?.sources ?? []).map(sourceLabel).join(', ')}</td>
                  <td>
                    <button type="button" disabled={!!props.denied} title={props.denied} aria-label={`Keep: ${f?.text ?? id}`} onClick={() => keep(r.id, id)}>
                      Keep this one
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ))}
    </Section>
  );
}

function Correction(props: { v2: (p: string) => string; denied?: string; onApplied: () => unknown }) {
  const [text, setText] = useState('');
  const [preview, setPreview] = useState<any>(null);
  const [error, setError] = useState<unknown>(null);
  const [applied, setApplied] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const ask = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      setPreview(await api.post(props.v2('/correction'), { text }));
      setError(null);
      setApplied(null);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const apply = async () => {
    setBusy(true);
    try {
      const result = await api.post(props.v2('/correction/apply'), { preview_id: preview.preview_id });
      setApplied(`Applied ${result.changes.length} change${result.changes.length === 1 ? '' : 's'}. The agent says it from the next conversation on.`);
      setPreview(null);
      setText('');
      setError(null);
      unsaved.value = false;
      await props.onApplied();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Section id="review-correction" title="Corrections">
      <p>Say what changed in a sentence (“on Saturdays we now close at 4 pm”). You see what it changes before anything does.</p>
      {applied && <p role="status">{applied}</p>}
      <form onSubmit={ask}>
        <FormAlert error={error} fields={['text']} />
        <Field label="Correction" error={fieldError(error, 'text')}>
          {(id, d) => (
            <textarea
              id={id}
              rows={2}
              value={text}
              aria-describedby={d}
              onInput={(e) => {
                setText(e.currentTarget.value);
                setPreview(null);
                unsaved.value = true;
              }}
            />
          )}
        </Field>
        <button type="submit" disabled={busy || !!props.denied} title={props.denied}>
          Preview correction
        </button>
      </form>
      {preview && (
        <>
          <table>
            <caption>What the correction changes</caption>
            <thead>
              <tr>
                <th scope="col">Now</th>
                <th scope="col">After</th>
              </tr>
            </thead>
            <tbody>
              {(preview.changes as any[]).map((c, i) => (
                <tr key={i}>
                  <td>{c.before ?? <em>new fact</em>}</td>
                  <td>{c.after}</td>
                </tr>
              ))}
              {preview.changes.length === 0 && (
                <tr>
                  <td colSpan={2}>Nothing the agent knows matches this sentence.</td>
                </tr>
              )}
            </tbody>
          </table>
          <button type="button" onClick={apply} disabled={busy || preview.changes.length === 0 || !!props.denied} title={props.denied}>
            Apply correction
          </button>
          <button type="button" onClick={() => setPreview(null)} disabled={busy}>
            Discard
          </button>
        </>
      )}
    </Section>
  );
}

function Orphans(props: { v2: (p: string) => string; denied?: string; onChanged: () => unknown }) {
  const orphans = useLoad(() => api.get<{ orphans: any[] }>(props.v2('/orphans')), [props.v2('')]);
  const [error, setError] = useState<unknown>(null);
  const resolve = async (ids: number[], action: 'keep' | 'drop') => {
    try {
      orphans.setData(await api.post(props.v2('/orphans/resolve'), { fact_ids: ids, action }));
      setError(null);
      await props.onChanged();
    } catch (e) {
      setError(e);
    }
  };
  const list = orphans.data?.orphans ?? [];
  return (
    <Section id="review-orphans" title="Facts whose source is gone">
      <ErrorAlert error={error || orphans.error} />
      {!orphans.data && !orphans.error && <Loading />}
      {orphans.data && list.length === 0 && <p>None: every fact still has its page or section.</p>}
      {list.length > 0 && (
        <>
          <p>Their page or section was removed. Keep a fact as your own word, or drop it.</p>
          <table>
            <caption>Orphaned facts</caption>
            <thead>
              <tr>
                <th scope="col">Fact</th>
                <th scope="col">Was from</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {list.map((f) => (
                <tr key={f.id}>
                  <td>{f.text}</td>
                  <td>{f.sources.map(sourceLabel).join(', ')}</td>
                  <td>
                    <button type="button" disabled={!!props.denied} title={props.denied} aria-label={`Keep: ${f.text}`} onClick={() => resolve([f.id], 'keep')}>
                      Keep
                    </button>
                    <button
                      type="button"
                      class="danger"
                      disabled={!!props.denied}
                      title={props.denied}
                      aria-label={`Drop: ${f.text}`}
                      onClick={() => resolve([f.id], 'drop')}
                    >
                      Drop
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <button
            type="button"
            disabled={!!props.denied}
            title={props.denied}
            onClick={() =>
              resolve(
                list.map((f) => f.id),
                'keep',
              )
            }
          >
            Keep all
          </button>
          <button
            type="button"
            class="danger"
            disabled={!!props.denied}
            title={props.denied}
            onClick={() =>
              resolve(
                list.map((f) => f.id),
                'drop',
              )
            }
          >
            Drop all
          </button>
        </>
      )}
    </Section>
  );
}

const BEHAVIOR_FIELDS = ['unknown_answer', 'tone', 'answer_length', 'never_discuss', 'handover'];

function Behavior(props: { v2: (p: string) => string; denied?: string }) {
  const behavior = useLoad(() => api.get(props.v2('/behavior')), [props.v2('')]);
  return (
    <LoadedSection id="review-behavior" title="How the agent speaks" loaded={behavior}>
      {(saved) => <BehaviorForm {...props} saved={saved} onSaved={behavior.setData} />}
    </LoadedSection>
  );
}

function BehaviorForm(props: { v2: (p: string) => string; denied?: string; saved: any; onSaved: (b: any) => void }) {
  const s = props.saved;
  const editor = useForm({
    unknown_answer: s.unknown_answer ?? '',
    tone: s.tone ?? 'friendly',
    answer_length: s.answer_length ?? 'short',
    never_discuss: (s.never_discuss ?? []).join('\n'),
    handover: s.handover ?? '',
  });
  const { value: form, set, error, saved } = editor;
  const save = editor.submit(async () => {
    const b = await api.patch(props.v2('/behavior'), {
      unknown_answer: form.unknown_answer.trim() || null,
      tone: form.tone,
      answer_length: form.answer_length,
      never_discuss: form.never_discuss
        .split('\n')
        .map((l: string) => l.trim())
        .filter(Boolean),
      handover: form.handover.trim() || null,
    });
    props.onSaved(b);
  });
  return (
    <Section id="review-behavior" title="How the agent speaks">
      <form onSubmit={save}>
        <FormAlert error={error} fields={BEHAVIOR_FIELDS} />
        <Field label="Tone" error={fieldError(error, 'tone')}>
          {(id, d) => (
            <select id={id} value={form.tone} aria-describedby={d} onChange={(e) => set({ tone: e.currentTarget.value })}>
              <option value="friendly">Friendly</option>
              <option value="formal">Formal</option>
              <option value="casual">Casual</option>
            </select>
          )}
        </Field>
        <Field label="Answer length" error={fieldError(error, 'answer_length')}>
          {(id, d) => (
            <select id={id} value={form.answer_length} aria-describedby={d} onChange={(e) => set({ answer_length: e.currentTarget.value })}>
              <option value="short">Short</option>
              <option value="medium">Medium</option>
              <option value="long">Long</option>
            </select>
          )}
        </Field>
        <Field
          label="When it does not know"
          hint="Said in its reply to a question it cannot answer (the question still becomes a gap). Empty: its own words."
          error={fieldError(error, 'unknown_answer')}
        >
          {(id, d) => (
            <textarea id={id} rows={2} value={form.unknown_answer} aria-describedby={d} onInput={(e) => set({ unknown_answer: e.currentTarget.value })} />
          )}
        </Field>
        <Field label="Never discusses (one subject a line)" error={fieldError(error, 'never_discuss')}>
          {(id, d) => (
            <textarea id={id} rows={3} value={form.never_discuss} aria-describedby={d} onInput={(e) => set({ never_discuss: e.currentTarget.value })} />
          )}
        </Field>
        <Field label="When it hands over to a person" error={fieldError(error, 'handover')}>
          {(id, d) => <textarea id={id} rows={2} value={form.handover} aria-describedby={d} onInput={(e) => set({ handover: e.currentTarget.value })} />}
        </Field>
        <button type="submit" disabled={!!props.denied} title={props.denied}>
          Save behavior
        </button>
        {saved && <span role="status"> Saved.</span>}
      </form>
    </Section>
  );
}

function Dynamic(props: { v2: (p: string) => string; denied?: string }) {
  const loaded = useLoad(() => api.get(props.v2('/dynamic-instructions')), [props.v2('')]);
  return (
    <LoadedSection id="review-dynamic" title="Dynamic instructions" loaded={loaded}>
      {(saved) => <DynamicForm {...props} saved={saved} onSaved={loaded.setData} />}
    </LoadedSection>
  );
}

/** The `{{visitor.<name>}}` names in a text, once each (what the preview asks values for while typing). */
const variablesIn = (text: string) => [...new Set([...text.matchAll(/\{\{\s*visitor\.([A-Za-z0-9_-]{1,64})\s*\}\}/g)].map((m) => m[1]!))];

function DynamicForm(props: { v2: (p: string) => string; denied?: string; saved: any; onSaved: (d: any) => void }) {
  const [text, setText] = useState<string>(props.saved.instructions ?? '');
  const [values, setValues] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>(null);
  const [previewError, setPreviewError] = useState<unknown>(null);
  const [rendered, setRendered] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const names = variablesIn(text);
  const save = async (event: Event) => {
    event.preventDefault();
    try {
      props.onSaved(await api.patch(props.v2('/dynamic-instructions'), { instructions: text }));
      setError(null);
      setSaved(true);
      unsaved.value = false;
    } catch (e) {
      setError(e);
    }
  };
  const preview = async () => {
    try {
      const values_ = Object.fromEntries(names.map((n) => [n, values[n] ?? '']));
      setRendered((await api.post(props.v2('/dynamic-instructions/preview'), { values: values_, instructions: text })).rendered);
      setPreviewError(null);
    } catch (e) {
      setPreviewError(e);
    }
  };
  return (
    <Section id="review-dynamic" title="Dynamic instructions">
      <p>
        Instructions filled in for each visitor from the values your website passes, with <code>{'{{visitor.name}}'}</code> placeholders.
      </p>
      <form onSubmit={save}>
        <FormAlert error={error} fields={['instructions']} />
        <Field label="Instructions" error={fieldError(error, 'instructions')}>
          {(id, d) => (
            <textarea
              id={id}
              rows={4}
              value={text}
              aria-describedby={d}
              onInput={(e) => {
                setText(e.currentTarget.value);
                setSaved(false);
                setRendered(null);
                unsaved.value = true;
              }}
            />
          )}
        </Field>
        <button type="submit" disabled={!!props.denied} title={props.denied}>
          Save instructions
        </button>
        {saved && <span role="status"> Saved.</span>}
      </form>
      <fieldset>
        <legend>Preview for a visitor</legend>
        <FormAlert error={previewError} fields={names} />
        {names.length === 0 && <p>No placeholders yet.</p>}
        {names.map((n) => (
          <Field key={n} label={`visitor.${n}`} error={fieldError(previewError, n)}>
            {(id, d) => <input id={id} value={values[n] ?? ''} aria-describedby={d} onInput={(e) => setValues({ ...values, [n]: e.currentTarget.value })} />}
          </Field>
        ))}
        <button type="button" onClick={preview} disabled={!!props.denied} title={props.denied}>
          Preview instructions
        </button>
        {rendered !== null && (
          <figure>
            <figcaption>As the agent reads them</figcaption>
            <pre class="rendered">{rendered || '(empty)'}</pre>
          </figure>
        )}
      </fieldset>
    </Section>
  );
}

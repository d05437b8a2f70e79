/**
 * Visitor values, on the Embed tab: what the business's website may tell the agent about the
 * visitor (name, plan, order number…), whether those values must be signed, the signing secret
 * (masked, revealed or rotated with `setup`), and a check of signed sample values that shows what
 * the agent and the handoff templates would receive.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { unsaved } from '../router.js';
import { Confirm, ErrorAlert, Field, Loading, fieldError, lacking, useLoad } from '../ui.js';

interface VisitorField {
  name: string;
  description: string;
  required: boolean;
  max_length: number;
}

export function VisitorValues(props: { agentId: number }) {
  const values = useLoad(() => api.get(`/v1/agent/${props.agentId}/visitor-values`), [props.agentId]);
  const [fields, setFields] = useState<VisitorField[] | null>(null);
  const [requireSignature, setRequireSignature] = useState<boolean | null>(null);
  const [maxAge, setMaxAge] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [said, setSaid] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [rotating, setRotating] = useState(false);
  const denied = lacking('setup');
  useEffect(() => setSecret(null), [props.agentId]);
  if (values.error) return <ErrorAlert error={values.error} />;
  if (!values.data) return <Loading what="visitor values" />;
  const v = values.data;
  const list: VisitorField[] = fields ?? v.fields;
  const edit = (next: VisitorField[]) => {
    setFields(next);
    unsaved.value = true;
  };
  const save = async (event: Event) => {
    event.preventDefault();
    try {
      const body = { fields: list, require_signature: requireSignature ?? v.require_signature, max_age_seconds: Number(maxAge ?? v.max_age_seconds) };
      values.setData(await api.patch(`/v1/agent/${props.agentId}/visitor-values`, body));
      setFields(null);
      setRequireSignature(null);
      setMaxAge(null);
      setError(null);
      setSaid('Visitor values saved.');
      unsaved.value = false;
    } catch (e) {
      setError(e);
    }
  };
  const reveal = async () => {
    try {
      setSecret((await api.get(`/v1/agent/${props.agentId}/visitor-values/secret`)).secret);
    } catch (e) {
      setError(e);
    }
  };
  const rotate = async () => {
    setRotating(false);
    try {
      setSecret((await api.post(`/v1/agent/${props.agentId}/visitor-values/secret`)).secret);
      await values.reload();
      setSaid('A new signing secret is in use; the old one no longer works.');
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section aria-labelledby="visitor-values-title">
      <h2 id="visitor-values-title">Visitor values</h2>
      <p>
        What your website may tell the agent about the visitor, as <code>{'{{visitor.<name>}}'}</code> in its instructions and handoff templates.
      </p>
      <ErrorAlert error={error} />
      {said && <p role="status">{said}</p>}
      <form onSubmit={save} aria-label="Visitor values">
        <table>
          <caption>Values your website may send</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col">Required</th>
              <th scope="col">Longest</th>
              <th scope="col">
                <span class="visually-hidden">Remove</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((f, i) => (
              <tr key={i}>
                <td>
                  <input
                    aria-label={`Name of value ${i + 1}`}
                    value={f.name}
                    onInput={(e) => edit(list.map((x, j) => (j === i ? { ...x, name: e.currentTarget.value } : x)))}
                  />
                </td>
                <td>
                  <input
                    aria-label={`Description of value ${i + 1}`}
                    value={f.description}
                    onInput={(e) => edit(list.map((x, j) => (j === i ? { ...x, description: e.currentTarget.value } : x)))}
                  />
                </td>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Value ${i + 1} is required`}
                    checked={f.required}
                    onChange={(e) => edit(list.map((x, j) => (j === i ? { ...x, required: e.currentTarget.checked } : x)))}
                  />
                </td>
                <td>
                  <input
                    type="number"
                    min={1}
                    max={2000}
                    aria-label={`Longest value ${i + 1} (characters)`}
                    value={f.max_length}
                    onInput={(e) => edit(list.map((x, j) => (j === i ? { ...x, max_length: Number(e.currentTarget.value) } : x)))}
                  />
                </td>
                <td>
                  <button type="button" aria-label={`Remove value ${i + 1}`} onClick={() => edit(list.filter((_, j) => j !== i))}>
                    Remove
                  </button>
                </td>
              </tr>
            ))}
            {list.length === 0 && (
              <tr>
                <td colSpan={5}>No visitor values: the agent knows nothing about visitors beyond what they say.</td>
              </tr>
            )}
          </tbody>
        </table>
        {fieldError(error, 'name') && (
          <p class="error" role="alert">
            {fieldError(error, 'name')}
          </p>
        )}
        <button type="button" onClick={() => edit([...list, { name: '', description: '', required: false, max_length: 256 }])}>
          Add a value
        </button>
        <label class="inline">
          <input
            type="checkbox"
            checked={requireSignature ?? v.require_signature}
            onChange={(e) => {
              setRequireSignature(e.currentTarget.checked);
              unsaved.value = true;
            }}
          />{' '}
          Values must be signed by your server (HMAC-SHA256)
        </label>
        <Field label="Signed values expire after (seconds)" error={fieldError(error, 'max_age_seconds')}>
          {(id, d) => (
            <input
              id={id}
              type="number"
              min={30}
              max={86400}
              value={maxAge ?? v.max_age_seconds}
              aria-describedby={d}
              onInput={(e) => {
                setMaxAge(e.currentTarget.value);
                unsaved.value = true;
              }}
            />
          )}
        </Field>
        <button type="submit" disabled={!!denied} title={denied}>
          Save visitor values
        </button>
      </form>
      <h3>Signing secret</h3>
      <p>
        <output aria-label="Signing secret">
          <code>{secret ?? v.secret_hint}</code>
        </output>{' '}
        <button type="button" disabled={!!denied} title={denied} onClick={reveal}>
          Reveal secret
        </button>{' '}
        <button type="button" class="danger" disabled={!!denied} title={denied} onClick={() => setRotating(true)}>
          Rotate secret
        </button>
      </p>
      <p>
        Sign <code>{v.signing.canonical_form}</code>, for example: <code>{v.signing.example}</code>
      </p>
      <Confirm title="Rotate the signing secret?" open={rotating} action="Rotate secret" onConfirm={rotate} onClose={() => setRotating(false)}>
        Values signed with the old secret stop working at once: update your website's server first.
      </Confirm>
      <SignedPreview agentId={props.agentId} />
    </section>
  );
}

/** Checks sample values (and a signature) the way a session start would, and shows the result. */
function SignedPreview(props: { agentId: number }) {
  const [text, setText] = useState('{"name": "Ada"}');
  const [timestamp, setTimestamp] = useState('');
  const [signature, setSignature] = useState('');
  const [result, setResult] = useState<any>(null);
  const [error, setError] = useState<unknown>(null);
  const check = async (event: Event) => {
    event.preventDefault();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      setError(new Error('The sample values are not JSON: write them as {"name": "value"}.'));
      return;
    }
    try {
      setResult(
        await api.post(`/v1/agent/${props.agentId}/visitor-values/preview`, {
          values: parsed,
          ...(timestamp ? { timestamp: Number(timestamp) } : {}),
          ...(signature ? { signature } : {}),
        }),
      );
      setError(null);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <form onSubmit={check} aria-label="Check sample values">
      <h3>Check sample values</h3>
      <ErrorAlert error={error} />
      <Field label="Sample values (JSON)" error={fieldError(error, 'values')}>
        {(id, d) => <textarea id={id} rows={3} value={text} aria-describedby={d} onInput={(e) => setText(e.currentTarget.value)} />}
      </Field>
      <Field label="Signed at (Unix seconds, optional)">
        {(id) => <input id={id} inputMode="numeric" value={timestamp} onInput={(e) => setTimestamp(e.currentTarget.value)} />}
      </Field>
      <Field label="Signature (optional)">{(id) => <input id={id} value={signature} onInput={(e) => setSignature(e.currentTarget.value)} />}</Field>
      <button type="submit">Check values</button>
      {result && (
        <div role="status">
          <p>
            {result.valid ? 'Accepted.' : 'Refused.'}{' '}
            {result.signature_checked ? (result.signature_valid ? 'The signature is valid.' : 'The signature is not valid.') : 'No signature checked.'}
          </p>
          {result.problems.length > 0 && (
            <ul>
              {result.problems.map((p: any, i: number) => (
                <li key={i}>
                  {p.name ? `${p.name}: ` : ''}
                  {p.message}
                </li>
              ))}
            </ul>
          )}
          {Object.keys(result.variables).length > 0 && (
            <table>
              <caption>What the agent would receive</caption>
              <thead>
                <tr>
                  <th scope="col">Variable</th>
                  <th scope="col">Value</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(result.variables).map(([k, val]) => (
                  <tr key={k}>
                    <td>
                      <code>{`{{${k}}}`}</code>
                    </td>
                    <td>{String(val)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </form>
  );
}

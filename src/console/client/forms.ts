/**
 * What every editing form of the console does the same way: a draft the fields change (marking the
 * page as having unsaved changes, so leaving it asks first), one submit that shows the API's
 * refusal beside the form or its fields and, once saved, says so and clears the unsaved mark.
 */
import { useState } from 'preact/hooks';
import { ApiFailure } from './api.js';
import { unsaved } from './router.js';

export function useForm<T extends object>(initial: T | (() => T)) {
  const [value, setValue] = useState<T>(initial);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const [saving, setSaving] = useState(false);
  return {
    value,
    error,
    setError,
    saved,
    saving,
    /** Changes some fields of the draft. */
    set(patch: Partial<T>) {
      setValue({ ...value, ...patch });
      setSaved(false);
      unsaved.value = true;
    },
    /** An onSubmit handler running `send`: on success the form is saved, on failure its error shown. */
    submit(send: () => Promise<unknown>) {
      return async (event: Event) => {
        event.preventDefault();
        setSaving(true);
        try {
          await send();
          setError(null);
          setSaved(true);
          unsaved.value = false;
        } catch (e) {
          setError(e);
        } finally {
          setSaving(false);
        }
      };
    },
  };
}

/**
 * The 422 messages whose `loc` (after `body`) is `path` or starts with it, e.g. "destination.url"
 * or "details.0.name" (ApiFailure.paths: `fields` keys a message by the last part alone, which
 * cannot tell a detail's `name` from the rule's). Domain 422s that name no field are put on the
 * field they are about through `codes`.
 */
export function errorAt(error: unknown, path: string, codes: Record<string, string> = {}): string | undefined {
  if (!(error instanceof ApiFailure) || error.status !== 422) return undefined;
  if (error.code && error.code !== 'validation') return codes[error.code] === path ? error.message : undefined;
  const found = Object.entries(error.paths)
    .filter(([at]) => at === path || at.startsWith(`${path}.`))
    .flatMap(([, messages]) => messages);
  return found.length ? found.join('; ') : undefined;
}

/** A 422 that none of the form's fields shows (so it is shown above the form instead). */
export function unplaced(error: unknown, shown: (error: unknown) => boolean): unknown {
  return shown(error) ? null : error;
}

/**
 * Shared pieces of the console's pages: the signed-in account and its permissions, page frame
 * (one h1), errors (role="alert", a 403 naming the permission), labelled fields that show a 422
 * beside themselves, loading and polling (paused while the tab is hidden), and named dialogs.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState, useCallback } from 'preact/hooks';
import { signal } from '@preact/signals';
import { ApiFailure } from './api.js';

export interface SignedIn {
  account_id: number;
  account_name: string;
  plan: string;
  permissions: string[];
  expires_at: string;
  via: 'link' | 'key';
  session_capacity: number;
}

export const me = signal<SignedIn | null>(null);

export const can = (permission: string) => !!me.value?.permissions.includes(permission);
/** Why a control is disabled, for a sign-in without the permission it needs. */
export const lacking = (permission: string) => (can(permission) ? undefined : `Your sign-in lacks the "${permission}" permission.`);

export function Page(props: { title: string; children: ComponentChildren; intro?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${props.title} · Presence console`;
  }, [props.title]);
  return (
    <>
      <h1 tabIndex={-1} id="page-title">
        {props.title}
      </h1>
      {props.intro && <p class="intro">{props.intro}</p>}
      {props.children}
    </>
  );
}

export function describeError(error: unknown): string {
  if (error instanceof ApiFailure) {
    if (error.status === 403 && error.code === 'missing_permission') {
      const named = /"(\w+)"/.exec(error.message)?.[1];
      return named ? `Not allowed: your sign-in lacks the "${named}" permission. ${error.message}` : `Not allowed: ${error.message}`;
    }
    return error.message;
  }
  return (error as Error)?.message ?? String(error);
}

export function ErrorAlert(props: { error: unknown }) {
  if (!props.error) return null;
  return (
    <p role="alert" class="error">
      {describeError(props.error)}
    </p>
  );
}

/** The 422 message for one field, if the error names it. */
export const fieldError = (error: unknown, name: string) => (error instanceof ApiFailure ? error.fields[name] : undefined);

let fieldIds = 0;
export function Field(props: {
  label: string;
  error?: string;
  hint?: ComponentChildren;
  children: (id: string, describedBy: string | undefined) => ComponentChildren;
}) {
  const id = useRef(`f${++fieldIds}`).current;
  const describedBy = [props.hint ? `${id}-hint` : '', props.error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.children(id, describedBy)}
      {props.hint && <small id={`${id}-hint`}>{props.hint}</small>}
      {props.error && (
        <span id={`${id}-error`} class="error" role="alert">
          {props.error}
        </span>
      )}
    </div>
  );
}

/** Loads once (and on `reload`); keeps the last good data while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const run = useCallback(async () => {
    setLoading(true);
    try {
      setData(await load());
      setError(null);
    } catch (e) {
      setError(e);
    } finally {
      setLoading(false);
    }
  }, deps);
  useEffect(() => {
    void run();
  }, [run]);
  return { data, error, loading, reload: run, setData };
}

/** Calls `tick` every `ms` while the tab is visible (and at once when it comes back); `active` false stops it. */
export function usePoll(tick: () => unknown, ms: number, active = true) {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (!active) return;
    let timer: number | undefined;
    const schedule = () => {
      clearInterval(timer);
      if (!document.hidden) timer = setInterval(() => void latest.current(), ms) as unknown as number;
    };
    const onVisibility = () => {
      if (!document.hidden) void latest.current();
      schedule();
    };
    schedule();
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [ms, active]);
}

/** A modal dialog named by its title; Escape or Cancel closes it. */
export function Dialog(props: { title: string; open: boolean; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useRef(`d${++fieldIds}`).current;
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={props.onClose} onCancel={props.onClose}>
      <h2 id={titleId}>{props.title}</h2>
      {props.open && props.children}
    </dialog>
  );
}

/**
 * A question before something that cannot be undone: what it does, one danger button naming the
 * action, and Cancel (which, like Escape, closes without doing anything, and has the focus first).
 */
export function Confirm(props: { title: string; open: boolean; action: string; onConfirm: () => void; onClose: () => void; children: ComponentChildren }) {
  return (
    <Dialog title={props.title} open={props.open} onClose={props.onClose}>
      <p>{props.children}</p>
      <button type="button" class="danger" onClick={props.onConfirm}>
        {props.action}
      </button>{' '}
      {/* biome-ignore lint/a11y/noAutofocus: a modal dialog's first focus (WAI-ARIA dialog pattern): on Cancel, so Enter right after opening does nothing that cannot be undone. */}
      <button type="button" onClick={props.onClose} autoFocus>
        Cancel
      </button>
    </Dialog>
  );
}

/** A table of records with a caption, column headings and a row saying so when there are none. */
export function Table(props: { caption: string; columns: string[]; rows: Array<{ key: string | number; cells: ComponentChildren[] }>; empty: string }) {
  return (
    <table>
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th scope="col" key={c}>
              {c}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr key={row.key}>
            {row.cells.map((cell, i) => (
              <td key={i}>{cell}</td>
            ))}
          </tr>
        ))}
        {props.rows.length === 0 && (
          <tr>
            <td colSpan={props.columns.length}>{props.empty}</td>
          </tr>
        )}
      </tbody>
    </table>
  );
}

export const fmtDate = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');
export const fmtDay = (iso: string) => iso.slice(0, 10);

export function Loading(props: { what?: string }) {
  return <p aria-live="polite">Loading{props.what ? ` ${props.what}` : ''}…</p>;
}

/** Every h1 gets focus after a client-side navigation, so screen readers announce the new page. */
export function focusTitle() {
  requestAnimationFrame(() => document.getElementById('page-title')?.focus({ preventScroll: true }));
}

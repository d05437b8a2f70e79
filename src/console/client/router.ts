/**
 * A small router over the History API: `path` is a signal, links navigate without reloading, and
 * a page with unsaved changes is asked about before it is left (in the app and on unload).
 */
import { signal } from '@preact/signals';

export const BASE = '/console';
export const path = signal(location.pathname.replace(/\/+$/, '') || BASE);
export const search = signal(location.search);

/** Set by a form that holds unsaved changes. */
export const unsaved = signal(false);

export function navigate(to: string, replace = false): void {
  if (unsaved.value && !confirm('You have unsaved changes. Leave this page and lose them?')) return;
  unsaved.value = false;
  const url = new URL(to, location.origin);
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  path.value = url.pathname.replace(/\/+$/, '') || BASE;
  search.value = url.search;
  window.scrollTo(0, 0);
}

addEventListener('popstate', () => {
  path.value = location.pathname.replace(/\/+$/, '') || BASE;
  search.value = location.search;
});
addEventListener('beforeunload', (event) => {
  if (unsaved.value) event.preventDefault();
});

/** Same-origin console links navigate in place; modified clicks open as the browser would. */
addEventListener('click', (event) => {
  const a = (event.target as Element | null)?.closest?.('a');
  if (!a || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith(BASE)) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
});

/** Matches `pattern` (`/agents/:id/look`) against the path under the base; the params, or null. */
export function match(pattern: string, current = path.value): Record<string, string> | null {
  const want = (BASE + pattern).replace(/\/+$/, '').split('/');
  const got = current.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(':')) params[want[i].slice(1)] = decodeURIComponent(got[i]);
    else if (want[i] !== got[i]) return null;
  }
  return params;
}

export const href = (p: string) => BASE + p;

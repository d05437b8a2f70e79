/**
 * The console's only way to the server: the documented /v1 API (and /console/session), with the
 * HttpOnly session cookie the browser sends by itself. A failure becomes an ApiFailure that says
 * what went wrong, which field a 422 names, and which permission a 403 lacks.
 */
import { signal } from '@preact/signals';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
    /** 422: the message for each field, keyed by its name (the last part of `loc`). */
    readonly fields: Record<string, string> = {},
    /** 422: the messages for each field, keyed by its whole path in the body (`destination.url`, `details.0.name`). */
    readonly paths: Record<string, string[]> = {},
  ) {
    super(message);
  }
}

/** Set when any call answers 401: the app shows the sign-in page again. */
export const signedOut = signal(false);

function describe(status: number, body: any): ApiFailure {
  const detail = body?.detail;
  if (status === 422 && Array.isArray(detail)) {
    const fields: Record<string, string> = {};
    const paths: Record<string, string[]> = {};
    for (const item of detail) {
      const name = String(item.loc?.[item.loc.length - 1] ?? 'form');
      fields[name] ??= item.msg;
      (paths[(item.loc ?? []).slice(1).join('.')] ??= []).push(item.msg);
    }
    return new ApiFailure(422, 'validation', detail.map((i: any) => `${(i.loc ?? []).slice(1).join('.')}: ${i.msg}`).join('; '), fields, paths);
  }
  if (detail && typeof detail === 'object') {
    const failure = new ApiFailure(status, detail.code, detail.message ?? `Request failed (${status})`);
    // A 422 raised by domain code names no field; the message still shows beside the form.
    return failure;
  }
  return new ApiFailure(status, undefined, typeof detail === 'string' ? detail : `Request failed (${status})`);
}

export async function call<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: {} };
  if (body !== undefined) {
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response: Response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiFailure(0, 'network', 'The server could not be reached. Check your connection and try again.');
  }
  const text = await response.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  if (!response.ok) {
    if (response.status === 401 && !path.startsWith('/console/session')) signedOut.value = true;
    throw describe(response.status, parsed);
  }
  return parsed as T;
}

export const api = {
  get: <T = any>(path: string) => call<T>('GET', path),
  post: <T = any>(path: string, body?: unknown) => call<T>('POST', path, body ?? {}),
  put: <T = any>(path: string, body?: unknown) => call<T>('PUT', path, body ?? {}),
  patch: <T = any>(path: string, body?: unknown) => call<T>('PATCH', path, body ?? {}),
  /** Every DELETE repeats its confirmation (the API asks for confirm=true). */
  del: <T = any>(path: string) => call<T>('DELETE', `${path}${path.includes('?') ? '&' : '?'}confirm=true`),
};

/** The query string of the given values (empty ones left out). */
export function query(values: Record<string, string | number | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

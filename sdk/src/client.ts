/**
 * The typed REST client: openapi-fetch over the types generated from the server's own
 * /openapi.json (generated/openapi.ts), so every route, body and answer is typed and cannot drift.
 * Calls resolve with the answer's data and throw PresenceApiError for any status outside 2xx.
 */
import createClient, { type Client, type FetchResponse, type MaybeOptionalInit, type Middleware } from 'openapi-fetch';
import type { paths, components } from './generated/openapi.js';
import { PresenceApiError } from './errors.js';

export type { paths, components };
/** Every schema of the OpenAPI document, by name. */
export type Schemas = components['schemas'];

type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch';
/** The paths that have the method. */
export type PathsWith<M extends HttpMethod> = { [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never }[keyof paths];
type InitParam<Init> = [keyof { [K in keyof Init as {} extends Pick<Init, K> ? never : K]: 1 }] extends [never]
  ? [(Init & { [key: string]: unknown })?]
  : [Init & { [key: string]: unknown }];
/** The data a successful call of `method path` answers. */
export type ResponseOf<M extends HttpMethod, P extends PathsWith<M>, Init = {}> = NonNullable<
  FetchResponse<paths[P][M] & Record<string | number, any>, Init, `${string}/${string}`>['data']
>;
type Call<M extends HttpMethod> = <P extends PathsWith<M>, Init extends MaybeOptionalInit<paths[P], M>>(
  path: P,
  ...init: InitParam<Init>
) => Promise<ResponseOf<M, P, Init>>;

export interface PresenceClientOptions {
  /** The service's base URL, e.g. `https://presence.example.com` (no trailing /v1). */
  baseUrl: string;
  /** An API key (`sk_live_…`), sent as `Authorization: Bearer`. Keep it on your server. */
  apiKey?: string;
  /** A fetch implementation (default: the global fetch). */
  fetch?: typeof globalThis.fetch;
  /** Headers sent with every call. */
  headers?: Record<string, string>;
}

/** The REST client: `get/post/put/patch/delete` resolve with the data; `raw` is the openapi-fetch client. */
export interface PresenceClient {
  get: Call<'get'>;
  post: Call<'post'>;
  put: Call<'put'>;
  patch: Call<'patch'>;
  delete: Call<'delete'>;
  /** The underlying openapi-fetch client (its calls throw PresenceApiError too). */
  raw: Client<paths>;
}

/** Turns any answer outside 2xx into a PresenceApiError carrying status, detail.code and detail.message. */
const throwOnError: Middleware = {
  async onResponse({ request, response }) {
    if (response.ok) return undefined;
    const text = await response.clone().text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON: keep the text */
    }
    throw new PresenceApiError(response.status, body, `${request.method} ${new URL(request.url).pathname}`);
  },
};

/**
 * Makes a typed client.
 *
 * @example
 * const presence = createPresenceClient({ baseUrl: 'https://presence.example.com', apiKey: process.env.PRESENCE_API_KEY });
 * const agent = await presence.post('/v1/agent/create', { body: { name: 'Ada' } });
 */
export function createPresenceClient(options: PresenceClientOptions): PresenceClient {
  const raw = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: options.fetch,
    headers: { ...(options.apiKey && { Authorization: `Bearer ${options.apiKey}` }), ...options.headers },
  });
  raw.use(throwOnError);
  const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE') =>
    (async (path: string, init?: object) => (await (raw[method] as (p: string, i?: object) => Promise<{ data?: unknown }>)(path, init)).data) as never;
  return { get: call('GET'), post: call('POST'), put: call('PUT'), patch: call('PATCH'), delete: call('DELETE'), raw };
}

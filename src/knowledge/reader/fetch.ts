/**
 * One HTTP GET as the website reader makes it: a User-Agent that names Presence, a time limit for
 * the whole exchange, a size cap on the (decompressed) body, redirects followed only while they stay
 * where the caller allows (at most 5), and private addresses refused at connect time (address.ts).
 * node:http rather than fetch: its `lookup` hook is where the resolved address can be checked.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import zlib from 'node:zlib';
import { guardedLookup, isPrivateAddress, PrivateAddressError } from './address.js';

export const READER_USER_AGENT = 'Mozilla/5.0 (compatible; PresenceBot/1.0; the website reader of Presence avatar agents)';
/** The token robots.txt groups are matched against. */
export const ROBOTS_AGENT = 'PresenceBot';

export interface FetchOptions {
  allowPrivate: boolean;
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  /** Whether a redirect target may be followed (e.g. same site only). */
  followRedirect?: (url: URL) => boolean;
  accept?: string;
  signal?: AbortSignal;
}

export interface FetchedResponse {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  contentType: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  redirects: number;
}

export type ReaderErrorCode =
  | 'robots'
  | 'http'
  | 'not_html'
  | 'private_address'
  | 'timeout'
  | 'too_large'
  | 'too_many_redirects'
  | 'offsite_redirect'
  | 'network'
  | 'bad_url';

export class ReaderError extends Error {
  constructor(
    readonly code: ReaderErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_BYTES = 3 * 1024 * 1024;

export async function readerGet(target: string | URL, options: FetchOptions): Promise<FetchedResponse> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new ReaderError('bad_url', `Not a URL: ${String(target).slice(0, 200)}`);
  }
  const maxRedirects = options.maxRedirects ?? 5;
  for (let redirects = 0; ; redirects++) {
    const response = await getOnce(url, options);
    const location = response.headers.location;
    if (response.status >= 300 && response.status < 400 && location) {
      if (redirects >= maxRedirects) throw new ReaderError('too_many_redirects', `More than ${maxRedirects} redirects from ${url.href}`);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new ReaderError('bad_url', `A redirect to something that is not a URL: ${location.slice(0, 200)}`);
      }
      if (options.followRedirect && !options.followRedirect(next)) {
        throw new ReaderError('offsite_redirect', `${url.href} redirects to ${next.href}, outside the website`);
      }
      url = next;
      continue;
    }
    return { ...response, url: url.href, redirects };
  }
}

function getOnce(url: URL, options: FetchOptions): Promise<Omit<FetchedResponse, 'url' | 'redirects'>> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return Promise.reject(new ReaderError('bad_url', `Only http and https URLs are read (${url.protocol})`));
  // A literal address skips DNS (and so the lookup hook): check it here.
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) && !options.allowPrivate && isPrivateAddress(host)) {
    return Promise.reject(new ReaderError('private_address', new PrivateAddressError(host, host).message));
  }
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | null, value?: Omit<FetchedResponse, 'url' | 'redirects'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (error) {
        request.destroy();
        reject(error);
      } else resolve(value!);
    };
    const timer = setTimeout(() => finish(new ReaderError('timeout', `${url.href} did not answer within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
    const onAbort = () => finish(new ReaderError('timeout', 'The read was cancelled'));
    options.signal?.addEventListener('abort', onAbort);

    const request = client.get(url, {
      lookup: guardedLookup(options.allowPrivate),
      agent: false,
      headers: {
        'user-agent': READER_USER_AGENT,
        accept: options.accept ?? 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5',
        'accept-encoding': 'gzip, deflate, br',
        'accept-language': 'en;q=0.9, *;q=0.5',
      },
    });
    request.on('error', (error: Error & { code?: string }) => {
      if (error instanceof PrivateAddressError) return finish(new ReaderError('private_address', error.message));
      finish(new ReaderError('network', `${url.host}: ${error.code ?? error.message}`));
    });
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      const headers = response.headers;
      if (status >= 300 && status < 400) {
        response.resume();
        return finish(null, { status, headers, contentType: '', body: Buffer.alloc(0) });
      }
      const declared = Number(headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) return finish(new ReaderError('too_large', `${url.href} is larger than ${maxBytes} bytes`));
      const encoding = String(headers['content-encoding'] ?? '').toLowerCase();
      // The cap counts decompressed bytes: a small gzip bomb is refused like a large page.
      let stream: NodeJS.ReadableStream = response;
      if (encoding === 'gzip' || encoding === 'x-gzip') stream = response.pipe(zlib.createGunzip());
      else if (encoding === 'deflate') stream = response.pipe(zlib.createInflate());
      else if (encoding === 'br') stream = response.pipe(zlib.createBrotliDecompress());
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) return finish(new ReaderError('too_large', `${url.href} is larger than ${maxBytes} bytes`));
        chunks.push(chunk);
      });
      stream.on('error', (error: Error) => finish(new ReaderError('network', `${url.host}: ${error.message}`)));
      stream.on('end', () => finish(null, { status, headers, contentType: String(headers['content-type'] ?? '').toLowerCase(), body: Buffer.concat(chunks) }));
    });
  });
}

/** The body as text: the charset the server declared, else a `<meta charset>`, else UTF-8. */
export function decodeBody(body: Buffer, contentType: string): string {
  let charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  if (!charset) {
    const head = body.subarray(0, 2048).toString('latin1');
    charset = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
  }
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

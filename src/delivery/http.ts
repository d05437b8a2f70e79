/**
 * One delivery attempt over HTTP: node:http (its `lookup` hook is where the resolved address is
 * checked: private and loopback refused at connect time, src/core/net.ts), no redirects followed,
 * one deadline for the response, and the body read only up to a small excerpt, so a slow or huge
 * receiver holds nothing for long.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { guardedLookup, isPrivateAddress, PrivateAddressError } from '../core/net.js';

/** Bytes of a response kept in the attempt log (and read at most). */
export const EXCERPT_BYTES = 1024;

export interface AttemptRequest {
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  /** The POST body (none for GET). */
  body?: string;
}

export interface AttemptResult {
  /** The receiver's status, when it answered in time. */
  statusCode: number | null;
  /** `timeout`, `unreachable: …`, `private_address: …`, `bad_url: …` when it did not. */
  error: string | null;
  durationMs: number;
  excerpt: string | null;
}

export interface AttemptOptions {
  timeoutMs: number;
  allowPrivate: boolean;
}

const PURPOSE = 'webhooks must be on the public internet';

export function attempt(request: AttemptRequest, options: AttemptOptions): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    url = new URL(request.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    return Promise.resolve({ statusCode: null, error: 'bad_url: not an http or https URL', durationMs: 0, excerpt: null });
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // A literal address skips DNS (and so the lookup hook): check it here.
  if (!options.allowPrivate && net.isIP(host) && isPrivateAddress(host)) {
    return Promise.resolve({
      statusCode: null,
      error: `private_address: ${new PrivateAddressError(host, host, PURPOSE).message}`,
      durationMs: 0,
      excerpt: null,
    });
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    let statusCode: number | null = null;
    const chunks: Buffer[] = [];
    let kept = 0;
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      const excerpt = kept ? Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8') : statusCode === null ? null : '';
      resolve({ statusCode, error, durationMs: elapsed(), excerpt });
    };
    // No answer in time is a timeout; an answer in time whose body is still coming is kept as it is.
    // The verdict waits for one turn of the event loop's I/O phase: after a stall (a busy process),
    // an answer that arrived in time is read before the timer is believed.
    const timer = setTimeout(() => setImmediate(() => finish(statusCode === null ? 'timeout' : null)), options.timeoutMs);
    const req = client.request(url, {
      method: request.method,
      headers: { ...request.headers, ...(request.body !== undefined && { 'content-length': String(Buffer.byteLength(request.body)) }) },
      lookup: guardedLookup(options.allowPrivate, PURPOSE),
      agent: false,
    });
    req.on('error', (error: Error & { code?: string }) => {
      if (error instanceof PrivateAddressError) return finish(`private_address: ${error.message}`);
      if (statusCode !== null) return finish(null); // the receiver answered, then closed while we read
      finish(`unreachable: ${error.code ?? error.message}`);
    });
    req.on('response', (response) => {
      statusCode = response.statusCode ?? 0;
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        kept += chunk.length;
        if (kept >= EXCERPT_BYTES) finish(null);
      });
      response.on('end', () => finish(null));
      response.on('error', () => finish(null));
    });
    req.end(request.body);
  });
}

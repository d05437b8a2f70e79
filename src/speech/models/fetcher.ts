/**
 * Fetches one pinned file into place: resumable (the bytes so far wait in `<file>.part`, kept across
 * restarts and kill -9, and are continued with an HTTP Range request), and checked against its
 * pinned size and SHA-256 before it is renamed to its real name. A file that does not match is
 * deleted and refused.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ModelFile } from './manifest.js';

export class FetchError extends Error {
  constructor(
    message: string,
    readonly kind: 'unreachable' | 'http' | 'checksum' | 'cut',
  ) {
    super(message);
  }
}

export interface FetchOptions {
  /** Until the response's headers arrive (an unreachable or silent host fails in this time). */
  connectTimeoutMs: number;
  /** Between two pieces of the body. */
  stallTimeoutMs: number;
  /** Bytes of this file on disk so far, called as they arrive. */
  onBytes?: (bytes: number) => void;
  signal?: AbortSignal;
}

/** A cut download is taken up again this many times (each try that brought bytes counts once). */
const RESUME_TRIES = 5;

export async function fetchFile(url: string, dest: string, file: ModelFile, options: FetchOptions): Promise<void> {
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  const part = `${dest}.part`;
  for (let attempt = 1; ; attempt++) {
    let have = sizeOf(part);
    if (have > file.bytes) {
      fs.rmSync(part, { force: true });
      have = 0;
    }
    options.onBytes?.(have);
    if (have < file.bytes) {
      try {
        await download(url, part, have, file, options);
      } catch (error) {
        if (!(error instanceof FetchError) || error.kind !== 'cut' || attempt >= RESUME_TRIES || options.signal?.aborted) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
        continue;
      }
      if (sizeOf(part) < file.bytes) {
        if (attempt >= RESUME_TRIES) throw new FetchError(`${file.path}: the server sent ${sizeOf(part)} of ${file.bytes} bytes`, 'cut');
        continue;
      }
    }
    const size = sizeOf(part);
    const sum = await sha256Of(part);
    if (size !== file.bytes || sum !== file.sha256) {
      fs.rmSync(part, { force: true });
      throw new FetchError(
        `${file.path}: ${size} bytes with SHA-256 ${sum}, not the pinned ${file.bytes} bytes with ${file.sha256}; the file was deleted`,
        'checksum',
      );
    }
    fs.renameSync(part, dest);
    return;
  }
}

async function download(url: string, part: string, have: number, file: ModelFile, options: FetchOptions): Promise<void> {
  const controller = new AbortController();
  const abort = () => controller.abort();
  options.signal?.addEventListener('abort', abort, { once: true });
  let timer = setTimeout(
    () => controller.abort(new FetchError(`no answer from ${hostOf(url)} within ${options.connectTimeoutMs} ms`, 'unreachable')),
    options.connectTimeoutMs,
  );
  try {
    let response: Response;
    try {
      response = await fetch(url, { headers: have > 0 ? { range: `bytes=${have}-` } : {}, redirect: 'follow', signal: controller.signal });
    } catch (error) {
      if (controller.signal.reason instanceof FetchError) throw controller.signal.reason;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new FetchError(`cannot reach ${hostOf(url)} (${cause?.code ?? cause?.message ?? (error as Error).message})`, 'unreachable');
    }
    clearTimeout(timer);
    let append = false;
    if (response.status === 206) {
      const start = Number(/bytes (\d+)-/.exec(response.headers.get('content-range') ?? '')?.[1]);
      append = start === have;
      if (!append) {
        // A range we did not ask for: start the file over.
        await response.body?.cancel();
        fs.rmSync(part, { force: true });
        throw new FetchError(`${file.path}: the server answered another range than asked`, 'cut');
      }
    } else if (response.status === 416) {
      await response.body?.cancel();
      fs.rmSync(part, { force: true });
      throw new FetchError(`${file.path}: the server refused to continue at byte ${have}`, 'cut');
    } else if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new FetchError(`${file.path}: HTTP ${response.status} from ${hostOf(url)}`, 'http');
    }
    const out = fs.openSync(part, append ? 'a' : 'w');
    let written = append ? have : 0;
    let gotAny = false;
    const reader = response.body!.getReader();
    try {
      for (;;) {
        timer = setTimeout(() => controller.abort(new FetchError(`${file.path}: no bytes for ${options.stallTimeoutMs} ms`, 'cut')), options.stallTimeoutMs);
        const { done, value } = await reader.read();
        clearTimeout(timer);
        if (done) break;
        if (written + value.byteLength > file.bytes) throw new FetchError(`${file.path}: the server sent more than the pinned ${file.bytes} bytes`, 'checksum');
        fs.writeSync(out, value);
        written += value.byteLength;
        gotAny = true;
        options.onBytes?.(written);
      }
    } catch (error) {
      if (error instanceof FetchError && error.kind === 'checksum') {
        fs.closeSync(out);
        fs.rmSync(part, { force: true });
        throw error;
      }
      if (options.signal?.aborted) throw error;
      const why = controller.signal.reason instanceof FetchError ? controller.signal.reason.message : (error as Error).message;
      // Bytes arrived before the cut: worth taking up again where it stopped.
      throw new FetchError(`${file.path}: the download was cut at byte ${written} (${why})`, gotAny ? 'cut' : 'unreachable');
    } finally {
      try {
        fs.closeSync(out);
      } catch {
        // already closed
      }
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', abort);
  }
}

export function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

export function sha256Of(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = crypto.createHash('sha256');
    fs.createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * URLs as the reader keeps them: one canonical form per page (lower-case host, no default port, no
 * fragment, no tracking parameters, sorted query), the site a URL belongs to (a host and its
 * `www.` twin are one site), and what is not a page (mailto:, tel:, files).
 */

const TRACKING = /^(utm_[a-z]+|fbclid|gclid|dclid|msclkid|mc_cid|mc_eid|_ga|_gl|ref|yclid|igshid)$/i;

const FILE_EXTENSIONS = new Set([
  'pdf',
  'jpg',
  'jpeg',
  'png',
  'gif',
  'webp',
  'svg',
  'ico',
  'bmp',
  'tif',
  'tiff',
  'avif',
  'heic',
  'zip',
  'gz',
  'tgz',
  'rar',
  '7z',
  'tar',
  'dmg',
  'exe',
  'msi',
  'apk',
  'doc',
  'docx',
  'xls',
  'xlsx',
  'ppt',
  'pptx',
  'odt',
  'ods',
  'csv',
  'rtf',
  'epub',
  'mp3',
  'wav',
  'ogg',
  'm4a',
  'flac',
  'mp4',
  'mov',
  'avi',
  'webm',
  'mkv',
  'css',
  'js',
  'mjs',
  'json',
  'xml',
  'rss',
  'atom',
  'txt',
  'ics',
  'vcf',
  'woff',
  'woff2',
  'ttf',
  'eot',
]);

/** The site key of a host: its name without a leading `www.`. */
export function siteOf(host: string): string {
  return host.toLowerCase().replace(/^www\./, '');
}

export function sameSite(a: URL, b: URL): boolean {
  return (
    (a.protocol === 'http:' || a.protocol === 'https:') &&
    (b.protocol === 'http:' || b.protocol === 'https:') &&
    siteOf(a.hostname) === siteOf(b.hostname) &&
    portOf(a) === portOf(b)
  );
}

function portOf(url: URL): string {
  // http and https on their default ports are the same site; an explicit other port is another.
  return url.port;
}

/** A page URL in canonical form, or undefined when it is not a web page. */
export function canonicalUrl(raw: string, base?: URL | string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw.trim(), base);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password) return undefined;
  url.hash = '';
  url.hostname = url.hostname.toLowerCase().replace(/\.$/, '');
  const kept = [...url.searchParams.entries()].filter(([name]) => !TRACKING.test(name));
  kept.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  url.search = kept.length ? new URLSearchParams(kept).toString() : '';
  // Collapse repeated slashes; keep the path's case (servers may tell them apart).
  url.pathname = url.pathname.replace(/\/{2,}/g, '/');
  return url.href;
}

/** Two URLs that differ only in a trailing slash or a `www.` are one page. */
export function dedupeKey(canonical: string): string {
  const url = new URL(canonical);
  const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
  return `${siteOf(url.hostname)}:${url.port}${path}${url.search}`;
}

/** Whether the URL names a file (by its extension) rather than a page. */
export function isFileUrl(url: URL): boolean {
  const last = url.pathname.split('/').pop() ?? '';
  const dot = last.lastIndexOf('.');
  if (dot < 0) return false;
  return FILE_EXTENSIONS.has(last.slice(dot + 1).toLowerCase());
}

/** Path plus query, as shown in the extract-links answer. */
export function pathOf(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

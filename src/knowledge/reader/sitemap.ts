/**
 * Sitemaps (sitemaps.org): a `urlset` lists pages, a `sitemapindex` lists further sitemaps. Both
 * are read (gzipped too), nested at most two levels, at most 20 files and 5,000 URLs in all.
 */
import zlib from 'node:zlib';
import { decodeBody, type FetchedResponse } from './fetch.js';

export const MAX_SITEMAP_FILES = 20;
export const MAX_SITEMAP_URLS = 5000;

export interface ParsedSitemap {
  kind: 'urlset' | 'index' | 'unknown';
  locs: string[];
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export function parseSitemap(xml: string): ParsedSitemap {
  const kind = /<sitemapindex[\s>]/i.test(xml) ? 'index' : /<urlset[\s>]/i.test(xml) ? 'urlset' : 'unknown';
  const locs: string[] = [];
  for (const match of xml.matchAll(/<loc>\s*(?:<!\[CDATA\[)?([^<\]]+?)(?:\]\]>)?\s*<\/loc>/gi)) {
    locs.push(match[1]!.replace(/&(amp|lt|gt|quot|apos);/g, (_, name: string) => ENTITIES[name]!));
    if (locs.length >= MAX_SITEMAP_URLS) break;
  }
  return { kind, locs };
}

/** The sitemap's text, un-gzipping a `.xml.gz` that the server sent as bytes. */
export function sitemapText(response: FetchedResponse): string {
  let body = response.body;
  if (body.length > 2 && body[0] === 0x1f && body[1] === 0x8b) {
    body = zlib.gunzipSync(body, { maxOutputLength: 50 * 1024 * 1024 });
  }
  return decodeBody(body, response.contentType.includes('charset') ? response.contentType : '');
}

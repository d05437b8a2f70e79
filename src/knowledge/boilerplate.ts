/**
 * Boilerplate is what repeats across a site's pages (navigation and footers that Readability let
 * through, banners, newsletter boxes, "Contact details" blocks). A block found on at least three
 * pages and on at least 40% of them is dropped from every page, except that one copy of a block
 * carrying a fact (hours, phone, address, prices) is kept, on the first page that had it (the
 * homepage when it was read), so the fact is known once rather than fifty times or not at all.
 */
import crypto from 'node:crypto';
import { fingerprint, parseBlocks, writeBlocks } from './blocks.js';
import { hasFactPattern } from './patterns.js';

export interface Boilerplate {
  /** Hashes of repeated blocks. */
  drop: string[];
  /** Hash → the URL of the page that keeps its one copy. */
  keepOn: Record<string, string>;
}

export const NO_BOILERPLATE: Boilerplate = { drop: [], keepOn: {} };
const MAX_HASHES = 1000;

const hash = (text: string) => crypto.createHash('sha1').update(text).digest('base64url').slice(0, 16);

/** Finds the repeated blocks of pages given in reading order (homepage first). */
export function findBoilerplate(pages: Array<{ url: string; markdown: string }>): Boilerplate {
  const seenOn = new Map<string, { count: number; first: string; fact: boolean }>();
  for (const page of pages) {
    const onPage = new Set<string>();
    for (const block of parseBlocks(page.markdown)) {
      if (block.kind === 'heading') continue;
      const key = hash(fingerprint(block));
      if (onPage.has(key)) continue;
      onPage.add(key);
      const entry = seenOn.get(key);
      if (entry) entry.count++;
      else seenOn.set(key, { count: 1, first: page.url, fact: hasFactPattern(block.text) });
    }
  }
  const drop: string[] = [];
  const keepOn: Record<string, string> = {};
  for (const [key, entry] of seenOn) {
    if (entry.count >= 3 && entry.count >= 0.4 * pages.length && drop.length < MAX_HASHES) {
      drop.push(key);
      if (entry.fact) keepOn[key] = entry.first;
    }
  }
  return { drop, keepOn };
}

/** The page's Markdown without the site's boilerplate. */
export function removeBoilerplate(url: string, markdown: string, boilerplate: Boilerplate): string {
  if (!boilerplate.drop.length) return markdown;
  const drop = new Set(boilerplate.drop);
  const blocks = parseBlocks(markdown).filter((block) => {
    if (block.kind === 'heading') return true;
    const key = hash(fingerprint(block));
    return !drop.has(key) || boilerplate.keepOn[key] === url;
  });
  return writeBlocks(blocks);
}

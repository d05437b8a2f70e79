/**
 * How the reader behaves towards a website: robots.txt obeyed (Disallow, Allow, Crawl-delay, for
 * the PresenceBot token or `*`), at most two requests at a time per site, and a site's Crawl-delay
 * kept between requests (then one at a time). Both are per process and bounded: robots answers are
 * cached for ten minutes in a small LRU, and a site's gate disappears when it is idle.
 */
import { LRUCache } from 'lru-cache';
import { Gate, GateFullError } from '../../core/gate.js';
import { createRequire } from 'node:module';

// robots-parser is CommonJS whose typings do not describe its export; load it as what it is.
interface ParsedRobots {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getCrawlDelay(ua?: string): number | undefined;
  getSitemaps(): string[];
}
const robotsParser = createRequire(import.meta.url)('robots-parser') as (url: string, contents: string) => ParsedRobots;
import { readerGet, ReaderError, ROBOTS_AGENT, decodeBody, type FetchOptions } from './fetch.js';
import { siteOf } from './urls.js';

export interface Robots {
  isAllowed(url: string): boolean;
  /** Seconds between requests the site asks for (capped), 0 when it asks for none. */
  crawlDelay: number;
  sitemaps: string[];
}

/** A Crawl-delay above this is treated as this (a site asking for minutes would never be read). */
export const MAX_CRAWL_DELAY_SECONDS = 10;
const ROBOTS_TTL_MS = 10 * 60_000;
const ROBOTS_CACHE_SIZE = 200;

const ALLOW_ALL: Robots = { isAllowed: () => true, crawlDelay: 0, sitemaps: [] };
const DISALLOW_ALL: Robots = { isAllowed: () => false, crawlDelay: 0, sitemaps: [] };

export class RobotsCache {
  private readonly entries = new LRUCache<string, Robots>({ max: ROBOTS_CACHE_SIZE, ttl: ROBOTS_TTL_MS });

  constructor(private readonly fetchOptions: Omit<FetchOptions, 'followRedirect'>) {}

  async for(origin: string, gate: SiteGates): Promise<Robots> {
    const cached = this.entries.get(origin);
    if (cached) return cached;
    const robots = await gate.run(origin, 0, () => this.load(origin));
    this.entries.set(origin, robots);
    return robots;
  }

  private async load(origin: string): Promise<Robots> {
    const url = `${origin}/robots.txt`;
    try {
      const response = await readerGet(url, { ...this.fetchOptions, accept: 'text/plain,*/*;q=0.5', maxBytes: 512 * 1024 });
      // RFC 9309: a missing robots.txt (4xx) allows everything; a server error disallows everything for now.
      if (response.status >= 400 && response.status < 500) return ALLOW_ALL;
      if (response.status >= 500) return DISALLOW_ALL;
      const parsed = robotsParser(url, decodeBody(response.body, response.contentType));
      const delay = Number(parsed.getCrawlDelay(ROBOTS_AGENT) ?? 0);
      return {
        isAllowed: (target) => parsed.isAllowed(target, ROBOTS_AGENT) !== false,
        crawlDelay: Number.isFinite(delay) && delay > 0 ? Math.min(delay, MAX_CRAWL_DELAY_SECONDS) : 0,
        sitemaps: parsed.getSitemaps().slice(0, 20),
      };
    } catch (error) {
      if (error instanceof ReaderError && error.code === 'private_address') throw error;
      // Unreachable robots.txt: treated like a server error (RFC 9309 §2.3.1.4).
      return DISALLOW_ALL;
    }
  }
}

/** At most this many requests wait for one site; more is refused rather than queued without end. */
const MAX_WAITING = 1000;

export class SiteGates {
  private readonly gates = new Map<string, Gate>();
  /** When each recently read site was last asked something (for Crawl-delay); a bounded LRU. */
  private readonly lastStarts = new LRUCache<string, number>({ max: 500 });

  constructor(readonly perSite = 2) {}

  /** Runs `task` when the site has a free slot and its Crawl-delay since the last start has passed. */
  async run<T>(url: string, crawlDelaySeconds: number, task: () => Promise<T>): Promise<T> {
    const key = siteOf(new URL(url).host);
    // With a Crawl-delay (known once robots.txt is read) one read at a time, else `perSite`: a gate
    // per site and limit, so robots.txt's own read (no delay known yet) never widens a delayed site's.
    const limit = crawlDelaySeconds > 0 ? 1 : this.perSite;
    const gateKey = `${limit}:${key}`;
    let gate = this.gates.get(gateKey);
    if (!gate) this.gates.set(gateKey, (gate = new Gate(limit, MAX_WAITING)));
    try {
      return await gate.run(async () => {
        const wait = (this.lastStarts.get(key) ?? 0) + crawlDelaySeconds * 1000 - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        this.lastStarts.set(key, Date.now());
        return await task();
      });
    } catch (error) {
      if (error instanceof GateFullError) throw new ReaderError('network', `Too many reads waiting for ${key}`);
      throw error;
    } finally {
      if (gate.idle) this.gates.delete(gateKey);
    }
  }
}

/**
 * The website reader: every page the knowledge capability reads goes through `get()` (robots.txt,
 * two at a time per site, Crawl-delay, private addresses refused, redirects kept within the site);
 * `discover()` finds a site's pages: the homepage's links, its sitemaps (and sitemap indexes), and
 * the links on its most promising pages, each scored and given a default category.
 */
import { readerGet, ReaderError, type FetchedResponse } from './fetch.js';
import { RobotsCache, SiteGates } from './politeness.js';
import { pageLinks } from './links.js';
import { parseSitemap, sitemapText, MAX_SITEMAP_FILES } from './sitemap.js';
import { scoreLink, type Category, type LinkSource } from './scoring.js';
import { canonicalUrl, dedupeKey, isFileUrl, pathOf, sameSite } from './urls.js';
import { once } from '../../core/once.js';

// linkedom (some 25 MB) is loaded by the first discovery, not at start: an idle server never needs it.
const linkedom = once(() => import('linkedom'));

export interface ReaderConfig {
  allowPrivate: boolean;
  timeoutMs?: number;
  maxBytes?: number;
}

export interface DiscoveredLink {
  url: string;
  path: string;
  anchor: string;
  score: number;
  source: LinkSource;
  default_category: Category;
}

export interface Discovery {
  homepageUrl: string;
  links: DiscoveredLink[];
  totalFound: number;
}

/** Pages (besides the homepage) whose own links are read during discovery. */
const DISCOVERY_PAGES = 8;
/** Links an answer lists at most (best first); `totalFound` counts them all. */
export const MAX_LISTED_LINKS = 500;

export class WebsiteReader {
  readonly gates = new SiteGates(2);
  private readonly robots: RobotsCache;

  constructor(private readonly config: ReaderConfig) {
    this.robots = new RobotsCache({ allowPrivate: config.allowPrivate, timeoutMs: config.timeoutMs });
  }

  /**
   * One page of a site, politely. Redirects are followed within `site` (default: the URL's own
   * site); `anywhere` lets a homepage move to another host (its new host is then the site).
   */
  async get(url: string, options: { site?: URL; anywhere?: boolean; accept?: string; signal?: AbortSignal } = {}): Promise<FetchedResponse> {
    const target = new URL(url);
    const site = options.site ?? target;
    const robots = await this.robots.for(target.origin, this.gates);
    if (!robots.isAllowed(target.href)) throw new ReaderError('robots', `The site's robots.txt asks readers not to read ${pathOf(target.href)}`);
    return this.gates.run(target.href, robots.crawlDelay, () =>
      readerGet(target, {
        allowPrivate: this.config.allowPrivate,
        timeoutMs: this.config.timeoutMs,
        maxBytes: this.config.maxBytes,
        accept: options.accept,
        signal: options.signal,
        followRedirect: (next) => (options.anywhere || sameSite(next, site)) && robots.isAllowed(next.href),
      }),
    );
  }

  async robotsFor(url: string) {
    return this.robots.for(new URL(url).origin, this.gates);
  }

  async discover(homepage: string, signal?: AbortSignal): Promise<Discovery> {
    const home = await this.get(homepage, { anywhere: true, signal });
    if (home.status >= 400) throw new ReaderError('http', `The homepage ${homepage} answered HTTP ${home.status}`);
    if (!/html/.test(home.contentType))
      throw new ReaderError('not_html', `The homepage ${homepage} is not a web page (${home.contentType || 'no content type'})`);
    const site = new URL(home.url);
    const homeUrl = canonicalUrl(home.url)!;
    const robots = await this.robotsFor(home.url);

    const found = new Map<string, { url: string; anchor: string; source: LinkSource; rank: number }>();
    const RANK: Record<LinkSource, number> = { nav: 0, homepage: 1, page: 2, sitemap: 3 };
    const add = (url: string, anchor: string, source: LinkSource) => {
      const parsed = new URL(url);
      if (!sameSite(parsed, site) || isFileUrl(parsed) || !robots.isAllowed(url)) return;
      const key = dedupeKey(url);
      const existing = found.get(key);
      if (!existing) found.set(key, { url, anchor, source, rank: RANK[source] });
      else {
        if (!existing.anchor && anchor) existing.anchor = anchor;
        // The homepage stays `homepage` wherever else it is linked from.
        if (RANK[source] < existing.rank && key !== homeKey) Object.assign(existing, { source, rank: RANK[source] });
      }
    };
    const homeKey = dedupeKey(homeUrl);
    add(homeUrl, 'Home', 'homepage');
    const { parseHTML } = await linkedom.get();
    const { document } = parseHTML(home.body.toString('utf8'));
    for (const link of pageLinks(document as unknown as Document, home.url, site)) add(link.url, link.anchor, link.place === 'nav' ? 'nav' : 'homepage');

    await this.readSitemaps(robots.sitemaps.length ? robots.sitemaps : [`${site.origin}/sitemap.xml`], site, add, signal);

    // One level further: the links on the most promising pages the homepage links to.
    const candidates = [...found.values()]
      .filter((l) => l.source !== 'sitemap' && dedupeKey(l.url) !== dedupeKey(homeUrl))
      .map((l) => ({ ...l, ...scoreLink(pathOf(l.url), l.anchor, l.source) }))
      .filter((l) => l.category === 'primary')
      .sort((a, b) => b.score - a.score)
      .slice(0, DISCOVERY_PAGES);
    await Promise.all(
      candidates.map(async (candidate) => {
        try {
          const page = await this.get(candidate.url, { site, signal });
          if (page.status >= 400 || !/html/.test(page.contentType)) return;
          const { document: doc } = parseHTML(page.body.toString('utf8'));
          for (const link of pageLinks(doc as unknown as Document, page.url, site)) if (link.place === 'main') add(link.url, link.anchor, 'page');
        } catch {
          /* a page that cannot be read adds no links */
        }
      }),
    );

    const links = [...found.values()].map((l): DiscoveredLink => {
      const path = pathOf(l.url);
      const { score, category } = scoreLink(path, l.anchor, l.source);
      return { url: l.url, path, anchor: l.anchor, score, source: l.source, default_category: category };
    });
    links.sort((a, b) => (a.url === homeUrl ? -1 : b.url === homeUrl ? 1 : b.score - a.score || a.path.localeCompare(b.path)));
    return { homepageUrl: homeUrl, links: links.slice(0, MAX_LISTED_LINKS), totalFound: links.length };
  }

  private async readSitemaps(start: string[], site: URL, add: (url: string, anchor: string, source: LinkSource) => void, signal?: AbortSignal): Promise<void> {
    const queue = start.map((url) => ({ url, depth: 0 }));
    const seen = new Set<string>();
    let files = 0;
    while (queue.length && files < MAX_SITEMAP_FILES) {
      const { url, depth } = queue.shift()!;
      const canonical = canonicalUrl(url);
      if (!canonical || seen.has(canonical) || !sameSite(new URL(canonical), site)) continue;
      seen.add(canonical);
      files++;
      try {
        const response = await this.get(canonical, { site, accept: 'application/xml,text/xml;q=0.9,*/*;q=0.5', signal });
        if (response.status >= 400) continue;
        const parsed = parseSitemap(sitemapText(response));
        if (parsed.kind === 'index') {
          if (depth < 2) for (const loc of parsed.locs) queue.push({ url: loc, depth: depth + 1 });
        } else {
          for (const loc of parsed.locs) {
            const page = canonicalUrl(loc);
            if (page) add(page, '', 'sitemap');
          }
        }
      } catch (error) {
        if (error instanceof ReaderError && error.code === 'private_address') throw error;
        /* a missing or broken sitemap only means fewer links */
      }
    }
  }
}

/** The website reader against a realistic site on 127.0.0.1: discovery, politeness, safety limits. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestSite, type TestSite } from './support/site.js';
import { WebsiteReader } from '../../src/knowledge/reader/reader.js';
import { ReaderError, readerGet } from '../../src/knowledge/reader/fetch.js';
import { isPrivateAddress } from '../../src/knowledge/reader/address.js';
import { canonicalUrl, dedupeKey, isFileUrl, sameSite } from '../../src/knowledge/reader/urls.js';
import { scoreLink } from '../../src/knowledge/reader/scoring.js';

async function readerError(promise: Promise<unknown>): Promise<ReaderError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ReaderError, `expected a ReaderError, got ${error}`);
    return error;
  }
  assert.fail('expected the read to fail');
}

describe('website reader', () => {
  let site: TestSite;
  before(async () => {
    site = await startTestSite();
  });
  after(() => site.close());

  test('discovery: homepage, navigation, sitemap index (gzipped too) and links on pages, same site only, scored and categorised', async () => {
    const reader = new WebsiteReader({ allowPrivate: true });
    const found = await reader.discover(`${site.url}/`);
    assert.equal(found.homepageUrl, `${site.url}/`);
    const byPath = new Map(found.links.map((l) => [l.path, l]));
    assert.equal(found.totalFound, found.links.length);
    // Where each link was found.
    assert.equal(byPath.get('/')?.source, 'homepage');
    assert.equal(byPath.get('/prices')?.source, 'nav');
    assert.equal(byPath.get('/prices')?.anchor, 'Menu & prices');
    assert.equal(byPath.get('/gift-cards')?.source, 'sitemap', 'only in the sitemap');
    assert.equal(byPath.get('/blog/summer-news')?.source, 'sitemap', 'from the gzipped sitemap of the index');
    assert.equal(byPath.get('/services/wedding-cakes')?.source, 'page', 'only linked from /services');
    // Categories: pages describing the business are primary; blog, news and legal pages background.
    for (const path of ['/', '/about', '/prices', '/services', '/contact', '/faq', '/services/wedding-cakes', '/gift-cards', '/order']) {
      assert.equal(byPath.get(path)?.default_category, 'primary', `${path} should be primary`);
    }
    for (const path of ['/blog', '/blog/sourdough-secrets', '/privacy', '/terms', '/careers']) {
      assert.equal(byPath.get(path)?.default_category, 'background', `${path} should be background`);
    }
    // Scores order them: every primary page above every background page, the homepage first.
    assert.equal(found.links[0]!.path, '/');
    const lowestPrimary = Math.min(
      ...found.links.filter((l) => l.default_category === 'primary' && l.source !== 'sitemap' && l.source !== 'page').map((l) => l.score),
    );
    const highestBackground = Math.max(...found.links.filter((l) => l.default_category === 'background').map((l) => l.score));
    assert.ok(lowestPrimary > highestBackground, `${lowestPrimary} > ${highestBackground}`);
    // Nothing that is not a page of this site, no fragments, no tracking parameters, no duplicates.
    for (const link of found.links) {
      assert.ok(link.url.startsWith(site.url + '/'), link.url);
      assert.ok(!link.url.includes('#'), link.url);
      assert.ok(!/utm_/.test(link.url), link.url);
      assert.ok(!/\.(pdf|css|js|png)$/.test(link.path), link.url);
    }
    assert.equal(new Set(found.links.map((l) => dedupeKey(l.url))).size, found.links.length);
    assert.ok(!byPath.has('/brochure.pdf') && !byPath.has('/private/staff'), 'files and robots-disallowed pages are left out');
    assert.ok(!found.links.some((l) => /instagram|mailto|tel:/.test(l.url)));
    // Every request named Presence.
    assert.ok(site.requests.length > 5);
    for (const request of site.requests) assert.match(request.userAgent, /PresenceBot\/1\.0/);
  });

  test('robots.txt is obeyed: a disallowed page is not fetched', async () => {
    const reader = new WebsiteReader({ allowPrivate: true });
    const before = site.requests.length;
    const error = await readerError(reader.get(`${site.url}/private/staff`));
    assert.equal(error.code, 'robots');
    assert.ok(!site.requests.slice(before).some((r) => r.path.startsWith('/private')), 'the disallowed page was requested');
  });

  test("a site's Crawl-delay is kept between requests, one at a time", async () => {
    const slow = await startTestSite({ crawlDelay: 1 });
    try {
      const reader = new WebsiteReader({ allowPrivate: true });
      await Promise.all(['/about', '/faq', '/contact'].map((p) => reader.get(slow.url + p)));
      const pages = slow.requests.filter((r) => !r.path.startsWith('/robots'));
      assert.equal(pages.length, 3);
      for (let i = 1; i < pages.length; i++) assert.ok(pages[i]!.at - pages[i - 1]!.at >= 950, `requests ${pages[i]!.at - pages[i - 1]!.at} ms apart`);
      assert.equal(slow.maxInFlight(), 1);
    } finally {
      await slow.close();
    }
  });

  test('at most two requests at a time per site', async () => {
    const busy = await startTestSite({ latencyMs: 150 });
    try {
      const reader = new WebsiteReader({ allowPrivate: true });
      await Promise.all(['/', '/about', '/faq', '/contact', '/prices', '/services'].map((p) => reader.get(busy.url + p)));
      assert.equal(busy.maxInFlight(), 2);
    } finally {
      await busy.close();
    }
  });

  test('redirects: followed within the site, at most five, never to another site', async () => {
    const reader = new WebsiteReader({ allowPrivate: true });
    const moved = await reader.get(`${site.url}/old-menu`);
    assert.equal(moved.url, `${site.url}/prices`);
    assert.equal(moved.redirects, 1);
    const five = await reader.get(`${site.url}/r-short`); // → /r/6 → /r/7 → /r/8 → /about: 4 hops
    assert.equal(new URL(five.url).pathname, '/about');
    assert.equal((await readerError(reader.get(`${site.url}/r/1`))).code, 'too_many_redirects');
    assert.equal((await readerError(reader.get(`${site.url}/offsite`))).code, 'offsite_redirect');
  });

  test('a time limit per request and a size cap on the body', async () => {
    const started = Date.now();
    assert.equal((await readerError(readerGet(`${site.url}/slow`, { allowPrivate: true, timeoutMs: 300 }))).code, 'timeout');
    assert.ok(Date.now() - started < 3000);
    assert.equal((await readerError(readerGet(`${site.url}/big`, { allowPrivate: true, maxBytes: 100_000 }))).code, 'too_large');
  });

  test('loopback and private addresses are refused unless allowed, also when a name resolves to one', async () => {
    const reader = new WebsiteReader({ allowPrivate: false });
    const before = site.requests.length;
    for (const url of [
      `${site.url}/`,
      `http://localhost:${site.port}/`,
      `http://[::1]:${site.port}/`,
      'http://10.0.0.1/',
      'http://169.254.169.254/latest/meta-data/',
    ]) {
      const error = await readerError(reader.get(url));
      assert.equal(error.code, 'private_address', `${url}: ${error.code} ${error.message}`);
    }
    assert.equal((await readerError(reader.discover(`http://localhost:${site.port}/`))).code, 'private_address');
    assert.equal(site.requests.length, before, 'nothing reached the site');
    // The check is made on the address the connection uses (the lookup at connect time).
    assert.equal((await readerError(readerGet(`http://localhost:${site.port}/`, { allowPrivate: false }))).code, 'private_address');
  });

  test('address ranges', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.9',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
    ])
      assert.equal(isPrivateAddress(a), true, a);
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) assert.equal(isPrivateAddress(a), false, a);
  });

  test('canonical URLs, the www. twin, files', () => {
    assert.equal(canonicalUrl('HTTP://Example.COM/a//b?utm_source=x&b=2&a=1#top'), 'http://example.com/a/b?a=1&b=2');
    assert.equal(canonicalUrl('mailto:hello@example.com'), undefined);
    assert.equal(canonicalUrl('/about', 'https://example.com/x/'), 'https://example.com/about');
    assert.ok(sameSite(new URL('https://www.example.com/a'), new URL('https://example.com/')));
    assert.ok(!sameSite(new URL('https://shop.example.com/a'), new URL('https://example.com/')));
    assert.equal(dedupeKey('https://www.example.com/about/'), dedupeKey('https://example.com/about'));
    assert.ok(isFileUrl(new URL('https://example.com/menu.PDF')));
    assert.ok(!isFileUrl(new URL('https://example.com/menu')));
  });

  test('scoring from path, anchor and place', () => {
    assert.deepEqual(scoreLink('/', 'Home', 'homepage'), { score: 1, category: 'primary' });
    assert.equal(scoreLink('/pricing', 'Pricing', 'nav').category, 'primary');
    assert.equal(scoreLink('/2023/05/our-new-oven', 'Our new oven', 'sitemap').category, 'background');
    assert.equal(scoreLink('/news/summer', 'Summer', 'page').category, 'background');
    assert.equal(scoreLink('/legal/imprint', 'Imprint', 'homepage').category, 'background');
    // The same page scores higher in the navigation than in the footer or a sitemap.
    assert.ok(scoreLink('/contact', 'Contact', 'nav').score > scoreLink('/contact', '', 'sitemap').score);
    // Anchor text counts: an opaque path with a telling anchor.
    assert.equal(scoreLink('/p/12/x/y', 'Our prices', 'homepage').category, 'primary');
  });
});

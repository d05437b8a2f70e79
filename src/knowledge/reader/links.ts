/** The links of one HTML page that lead to other pages of the same site, with anchor text and place. */
import { canonicalUrl, isFileUrl, sameSite } from './urls.js';

export interface PageLink {
  url: string;
  anchor: string;
  /** Where on the page: the navigation (header/nav), the footer, or the page's own content. */
  place: 'nav' | 'footer' | 'main';
}

/** Links of `document` (a DOM document) to pages of the site of `pageUrl`, in order, without duplicates. */
export function pageLinks(document: Document, pageUrl: string, site: URL): PageLink[] {
  const baseHref = document.querySelector('base[href]')?.getAttribute('href');
  let base: URL;
  try {
    base = new URL(baseHref ?? pageUrl, pageUrl);
  } catch {
    base = new URL(pageUrl);
  }
  const seen = new Set<string>();
  const links: PageLink[] = [];
  for (const a of Array.from(document.querySelectorAll('a[href]'))) {
    const href = a.getAttribute('href') ?? '';
    if (/^\s*(mailto:|tel:|sms:|javascript:|data:|#)/i.test(href)) continue;
    const url = canonicalUrl(href, base);
    if (!url) continue;
    const parsed = new URL(url);
    if (!sameSite(parsed, site) || isFileUrl(parsed)) continue;
    if (seen.has(url)) continue;
    seen.add(url);
    const text = (a.textContent ?? '').replace(/\s+/g, ' ').trim();
    const anchor = (text || a.getAttribute('aria-label') || a.getAttribute('title') || a.querySelector('img[alt]')?.getAttribute('alt') || '').slice(0, 200);
    const place = a.closest('nav, header, [role="navigation"], [role="banner"]') ? 'nav' : a.closest('footer, [role="contentinfo"]') ? 'footer' : 'main';
    links.push({ url, anchor, place });
  }
  return links;
}

/**
 * A page's readable text as Markdown: Mozilla's Readability (Firefox's reader view) over linkedom
 * finds the main content, turndown (with GitHub tables) writes it as Markdown, so headings, lists
 * and price tables survive. Before that, what is never content goes: scripts, forms, cookie and
 * consent banners, dialogs. Contact details in the header and footer (phone, e-mail, address,
 * hours) are kept as a "Contact details" block: small-business sites often say them only there.
 * A page without readable text is a failure with a reason the owner can act on, the commonest being
 * a page drawn by JavaScript.
 */
import { parseHTML } from 'linkedom';
import { Readability } from '@mozilla/readability';
import TurndownService from 'turndown';
import { createRequire } from 'node:module';
import { hasFactPattern } from './patterns.js';

const { gfm } = createRequire(import.meta.url)('@joplin/turndown-plugin-gfm') as { gfm: TurndownService.Plugin };

export type ExtractedPage =
  | { ok: true; title: string; description: string; siteName: string; markdown: string; canonical?: string }
  | { ok: false; reason: string; code: 'javascript' | 'empty' | 'error_page'; title: string };

const NEVER_CONTENT = 'script, style, noscript, template, svg, canvas, iframe, object, embed, form, button, input, select, textarea, dialog, [hidden], [aria-hidden="true"], [role="dialog"], [role="alertdialog"]';
const BANNER = /(^|[\s_-])(cookie|cookies|consent|gdpr|cmp|onetrust|cookiebot|truste|popup|modal|newsletter-popup)([\s_-]|$)/i;

let turndown: TurndownService | undefined;
function markdownWriter(): TurndownService {
  if (turndown) return turndown;
  turndown = new TurndownService({ headingStyle: 'atx', bulletListMarker: '-', codeBlockStyle: 'fenced', emDelimiter: '_' });
  turndown.use(gfm);
  // The agent speaks this text: a link is its words, an image is nothing.
  turndown.addRule('linkText', { filter: 'a', replacement: (content) => content });
  turndown.addRule('noImages', { filter: ['img', 'picture', 'figure'] as any, replacement: (_content, node) => ((node as HTMLElement).nodeName === 'FIGURE' ? (node as HTMLElement).textContent?.trim() ? `\n\n${(node as HTMLElement).textContent!.trim()}\n\n` : '' : '') });
  return turndown;
}

function text(node: { textContent: string | null } | null | undefined): string {
  return (node?.textContent ?? '').replace(/\s+/g, ' ').trim();
}

function meta(document: Document, selector: string): string {
  return (document.querySelector(selector)?.getAttribute('content') ?? '').replace(/\s+/g, ' ').trim();
}

/** Lines with contact facts in the header and footer, in order, once each. */
function contactLines(document: Document): string[] {
  const lines: string[] = [];
  for (const region of Array.from(document.querySelectorAll('header, footer, [role="banner"], [role="contentinfo"], .top-bar, .topbar'))) {
    for (const el of Array.from(region.querySelectorAll('p, li, address, span, div, dd, td'))) {
      // The smallest elements only: a container's text repeats its children's.
      if (el.querySelector('p, li, address, div, dd, td')) continue;
      const line = text(el);
      if (line.length >= 6 && line.length <= 300 && hasFactPattern(line) && !lines.includes(line)) lines.push(line);
    }
  }
  return lines.slice(0, 12);
}

function looksDrawnByJavaScript(html: string, document: Document): boolean {
  const scripts = document.querySelectorAll('script[src], script[type="module"]').length;
  const shell = document.querySelector('#root, #app, #__next, #___gatsby, [data-reactroot], app-root, #svelte, [ng-app], [ng-version]');
  const noscript = Array.from(document.querySelectorAll('noscript')).some((n) => /javascript/i.test(n.textContent ?? ''));
  return noscript || (!!shell && scripts > 0) || (scripts > 0 && /__NEXT_DATA__|window\.__NUXT__|data-server-rendered|webpack/i.test(html));
}

/** Markdown whitespace tidied: no runs of blank lines, no trailing spaces, nbsp as space. */
function tidy(markdown: string): string {
  return markdown
    .replace(/\u00a0/g, ' ')
    .replace(/[ \t]+$/gm, '')
    .replace(/^(\s*)-\s{2,}/gm, '$1- ')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export function extractPage(html: string, url: string): ExtractedPage {
  const { document } = parseHTML(html) as unknown as { document: Document };
  const rawTitle = text(document.querySelector('title')) || meta(document, 'meta[property="og:title"]');
  const siteName = meta(document, 'meta[property="og:site_name"]') || meta(document, 'meta[name="application-name"]');
  const description = meta(document, 'meta[name="description"]') || meta(document, 'meta[property="og:description"]');
  const canonicalHref = document.querySelector('link[rel="canonical"]')?.getAttribute('href');
  let canonical: string | undefined;
  try {
    canonical = canonicalHref ? new URL(canonicalHref, url).href : undefined;
  } catch {
    canonical = undefined;
  }
  const title = cleanTitle(rawTitle, siteName) || text(document.querySelector('h1'));
  const jsShell = looksDrawnByJavaScript(html, document);

  for (const el of Array.from(document.querySelectorAll(NEVER_CONTENT))) el.remove();
  for (const el of Array.from(document.querySelectorAll('[id], [class]'))) {
    const marker = `${el.getAttribute('id') ?? ''} ${el.getAttribute('class') ?? ''}`;
    if (BANNER.test(marker) && el.tagName !== 'BODY' && el.tagName !== 'HTML' && el.tagName !== 'MAIN') el.remove();
  }
  const contacts = contactLines(document);
  // Paragraphs that are only links ("See today's menu", "Parking · Directions") are calls to action, not content.
  for (const el of Array.from(document.querySelectorAll('p'))) {
    const all = text(el);
    const linked = Array.from(el.querySelectorAll('a')).map((a) => text(a)).join('');
    if (all && linked && all.replace(/[\s·|•,/-]+/g, '').length <= linked.replace(/\s+/g, '').length) el.remove();
  }

  const h1 = text(document.querySelector('h1'));
  let markdown = '';
  const article = new Readability(document.cloneNode(true) as Document, { charThreshold: 60, keepClasses: false }).parse();
  if (article?.content && text({ textContent: article.textContent ?? null }).length >= 40) {
    markdown = markdownWriter().turndown(article.content);
  } else {
    // Readability found nothing it calls an article: fall back to the page minus navigation.
    const body = document.querySelector('main, [role="main"], article') ?? document.body;
    if (body) {
      for (const el of Array.from(body.querySelectorAll('nav, header, footer, aside, [role="navigation"], [role="banner"], [role="contentinfo"]'))) el.remove();
      markdown = markdownWriter().turndown(body.innerHTML ?? '');
    }
  }
  markdown = tidy(markdown);
  // Readability takes the page's first heading as the title and drops it; keep it when it says more.
  if (h1 && h1 !== title && !markdown.includes(h1) && !title.includes(h1)) markdown = `# ${h1}\n\n${markdown}`;

  const readable = markdown.replace(/[#>*_|`-]/g, ' ').replace(/\s+/g, ' ').trim();
  if (readable.length < 40 || readable.split(' ').length < 6) {
    if (jsShell) {
      return { ok: false, code: 'javascript', title, reason: 'This page is drawn by JavaScript in the browser: its HTML has no readable text. Paste its text as a knowledge-base section instead.' };
    }
    return { ok: false, code: 'empty', title, reason: 'The page has no readable text.' };
  }
  if (/\b(404|page not found|not found|page doesn.t exist|error)\b/i.test(`${title} ${h1}`) && readable.length < 400) {
    return { ok: false, code: 'error_page', title, reason: `The page looks like an error page ("${(h1 || title).slice(0, 80)}").` };
  }
  if (contacts.length) markdown += `\n\n## Contact details\n\n${contacts.map((line) => `- ${line}`).join('\n')}`;
  return { ok: true, title, description, siteName, markdown, canonical };
}

/** "Prices | Sunrise Bakery" → "Prices" when the site's name is known or the separator is clear. */
function cleanTitle(title: string, siteName: string): string {
  const parts = title.split(/\s+[|–—·•]\s+|\s+-\s+/);
  if (parts.length > 1) {
    const site = siteName.toLowerCase();
    const kept = parts.filter((p) => p.toLowerCase() !== site);
    if (kept.length && kept.length < parts.length) return kept.join(' – ');
    if (!site) return parts[0]!;
  }
  return title;
}

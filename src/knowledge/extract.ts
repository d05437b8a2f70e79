/**
 * A page's readable text as Markdown: Mozilla's Readability (Firefox's reader view) over linkedom
 * finds the main content, turndown (with GitHub tables) writes it as Markdown, so headings, lists
 * and price tables survive. Before that, what is never content goes: scripts, forms, cookie and
 * consent banners, dialogs. Contact details in the header and footer (phone, e-mail, address,
 * hours) are kept as a "Contact details" block: small-business sites often say them only there.
 * FAQ shapes (`dt/dd`, `details/summary` accordions, a bold question before its answer, schema.org
 * `FAQPage` JSON-LD) are written as a question heading followed by its answer, the one shape the
 * answering engine reads as question → answer. A page that marks its main content (`<main>`) is read
 * from there; Readability finds the content of pages that do not.
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

const NEVER_CONTENT =
  'script, style, noscript, template, svg, canvas, iframe, object, embed, form, button, input, select, textarea, dialog, [hidden], [aria-hidden="true"], [role="dialog"], [role="alertdialog"]';
const BANNER = /(^|[\s_-])(cookie|cookies|consent|gdpr|cmp|onetrust|cookiebot|truste|popup|modal|newsletter-popup)([\s_-]|$)/i;

let turndown: TurndownService | undefined;
function markdownWriter(): TurndownService {
  if (turndown) return turndown;
  turndown = new TurndownService({ headingStyle: 'atx', bulletListMarker: '-', codeBlockStyle: 'fenced', emDelimiter: '_' });
  turndown.use(gfm);
  // The agent speaks this text: a link is its words, an image is nothing.
  turndown.addRule('linkText', { filter: 'a', replacement: (content) => content });
  turndown.addRule('noImages', {
    filter: ['img', 'picture', 'figure'] as any,
    replacement: (_content, node) =>
      (node as HTMLElement).nodeName === 'FIGURE'
        ? (node as HTMLElement).textContent?.trim()
          ? `\n\n${(node as HTMLElement).textContent!.trim()}\n\n`
          : ''
        : '',
  });
  return turndown;
}

/** A footer line that says how the business is registered, regulated or accredited. */
const CREDENTIAL = /\b(regulated|registered|licensed|licen[cs]e (no|number)|accredited|certified|insured|member of)\b/i;

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
      if (line.length >= 6 && line.length <= 300 && (hasFactPattern(line) || CREDENTIAL.test(line)) && !lines.includes(line)) lines.push(line);
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

/** Question → answer pairs of the page's schema.org FAQPage JSON-LD. */
function faqJsonLd(document: Document): Array<{ question: string; answer: string }> {
  const pairs: Array<{ question: string; answer: string }> = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    const item = node as Record<string, unknown>;
    const types = ([] as unknown[]).concat(item['@type'] ?? []);
    if (types.includes('Question') && typeof item.name === 'string') {
      const accepted = ([] as unknown[]).concat(item.acceptedAnswer ?? item.suggestedAnswer ?? [])[0] as Record<string, unknown> | undefined;
      const answer = typeof accepted?.text === 'string' ? text(parseHTML(`<p>${accepted.text}</p>`).document.querySelector('p') as never) : '';
      if (answer) pairs.push({ question: item.name.replace(/\s+/g, ' ').trim(), answer });
      return;
    }
    for (const key of ['@graph', 'mainEntity', 'hasPart']) if (item[key]) visit(item[key]);
  };
  for (const script of Array.from(document.querySelectorAll('script[type="application/ld+json"]'))) {
    try {
      visit(JSON.parse(script.textContent ?? ''));
    } catch {
      // A broken JSON-LD block is ignored, as browsers and search engines do.
    }
  }
  return pairs;
}

const isQuestion = (line: string) => /\?\s*$/.test(line) && line.length <= 200;

/**
 * FAQ shapes as "question heading, then its answer": a `dt` question and its `dd`s, a `summary`
 * and the rest of its `details`, a paragraph that is only a bold question (or starts with one)
 * and the text after it. The heading sits one level below the heading above it.
 */
function normaliseFaqs(document: Document): void {
  // The level of the heading above each element, in one walk of the page in document order.
  const above = new Map<Element, number>();
  let level = 1;
  for (const el of Array.from(document.querySelectorAll('*'))) {
    const h = /^H([1-6])$/.exec(el.tagName);
    // A heading inside a question (`<summary><h3>…?</h3></summary>`) is the question, not a section.
    if (h && !el.closest('summary, dt')) level = Number(h[1]);
    else if (/^(DL|DETAILS|P)$/.test(el.tagName)) above.set(el, level);
  }
  const levelAt = (el: Element): number => Math.min(6, (above.get(el) ?? 1) + 1);
  const heading = (el: Element, words: string) => {
    const h = document.createElement(`h${levelAt(el)}`);
    h.textContent = words;
    return h;
  };
  for (const list of Array.from(document.querySelectorAll('dl'))) {
    const terms = Array.from(list.querySelectorAll('dt'));
    if (!terms.length || !terms.some((dt) => isQuestion(text(dt)))) continue;
    const out = document.createElement('div');
    for (const child of Array.from(list.children)) {
      if (child.tagName === 'DT') out.appendChild(heading(list, text(child)));
      else if (child.tagName === 'DD') {
        const answer = document.createElement('div');
        answer.innerHTML = /<(p|ul|ol|table|div)\b/i.test(child.innerHTML) ? child.innerHTML : `<p>${child.innerHTML}</p>`;
        out.appendChild(answer);
      }
    }
    list.replaceWith(out);
  }
  for (const details of Array.from(document.querySelectorAll('details'))) {
    const summary = details.querySelector('summary');
    if (!summary) continue;
    const question = text(summary);
    summary.remove();
    const out = document.createElement('div');
    out.appendChild(heading(details, question));
    const answer = document.createElement('div');
    answer.innerHTML = /<(p|ul|ol|table|div)\b/i.test(details.innerHTML) ? details.innerHTML : `<p>${details.innerHTML}</p>`;
    out.appendChild(answer);
    details.replaceWith(out);
  }
  for (const p of Array.from(document.querySelectorAll('p'))) {
    const first = p.firstElementChild;
    if (!first || !/^(STRONG|B)$/.test(first.tagName)) continue;
    const question = text(first);
    const before = (p.innerHTML.split(first.outerHTML)[0] ?? '').trim();
    if (before || !isQuestion(question)) continue;
    first.remove();
    const rest = text(p);
    const h = heading(p, question);
    p.parentNode!.insertBefore(h, p);
    if (!rest) p.remove();
  }
}

export function extractPage(html: string, url: string): ExtractedPage {
  const { document } = parseHTML(html) as unknown as { document: Document };
  const jsonLdFaqs = faqJsonLd(document);
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
  normaliseFaqs(document);
  // Navigation and the page's own header and footer are never content (their contact facts are kept above).
  for (const el of Array.from(document.querySelectorAll('nav, [role="navigation"], header, footer, [role="banner"], [role="contentinfo"]'))) {
    const inContent = el.parentElement?.closest('main, article, [role="main"]');
    if (el.tagName === 'NAV' || el.getAttribute('role') === 'navigation' || !inContent) el.remove();
  }
  // Lists whose every item is only a link are navigation (a blog's index, "related pages"), not
  // content, unless they are all the page has (then the page is read as it is rather than failed).
  const linkLists = Array.from(document.querySelectorAll('ul, ol')).filter((list) => {
    const items = Array.from(list.querySelectorAll('li'));
    return (
      items.length > 0 &&
      items.every((li) => {
        const linked = Array.from(li.querySelectorAll('a'))
          .map((a) => text(a))
          .join(' ');
        return linked && linked.length >= text(li).length - 1;
      })
    );
  });
  const listed = linkLists.reduce((sum, list) => sum + text(list).length, 0);
  if (text(document.body).length - listed >= 80) for (const list of linkLists) list.remove();
  // Paragraphs that are only links ("See today's menu", "Parking · Directions") are calls to action, not content.
  for (const el of Array.from(document.querySelectorAll('p'))) {
    const all = text(el);
    const linked = Array.from(el.querySelectorAll('a'))
      .map((a) => text(a))
      .join('');
    if (all && linked && all.replace(/[\s·|•,/-]+/g, '').length <= linked.replace(/\s+/g, '').length) el.remove();
  }

  const h1 = text(document.querySelector('h1'));
  let markdown = '';
  const article = new Readability(document.cloneNode(true) as Document, { charThreshold: 60, keepClasses: false }).parse();
  // A page that marks its main content says what its content is: read that. Readability guesses from
  // prose, and on a short page of tables and lists it may flatten the tables or keep the footer instead.
  const main = document.querySelector('main, [role="main"]');
  const mainText = main ? text(main) : '';
  const articleText = text({ textContent: article?.textContent ?? null });
  if ((!main || mainText.length < 40) && article?.content && articleText.length >= 40) {
    markdown = markdownWriter().turndown(article.content);
  } else {
    // The main content, or (Readability found nothing it calls an article) the page minus navigation.
    const body = (mainText.length >= 40 ? main : null) ?? document.querySelector('article') ?? document.body;
    if (body) {
      for (const el of Array.from(body.querySelectorAll('nav, header, footer, aside, [role="navigation"], [role="banner"], [role="contentinfo"]'))) el.remove();
      markdown = markdownWriter().turndown(body.innerHTML ?? '');
    }
  }
  // FAQ answers only the page's JSON-LD holds (an accordion filled by JavaScript) join the page.
  const said = markdown.toLowerCase();
  const missing = jsonLdFaqs.filter((pair) => !said.includes(pair.question.toLowerCase().slice(0, 60)));
  if (missing.length) markdown += `\n\n## Frequently asked questions\n\n${missing.map((pair) => `### ${pair.question}\n\n${pair.answer}`).join('\n\n')}`;
  markdown = tidy(markdown);
  // Readability takes the page's first heading as the title and drops it; keep it when it says more.
  if (h1 && h1 !== title && !markdown.includes(h1) && !title.includes(h1)) markdown = `# ${h1}\n\n${markdown}`;

  const readable = markdown
    .replace(/[#>*_|`-]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (readable.length < 40 || readable.split(' ').length < 6) {
    if (jsShell) {
      return {
        ok: false,
        code: 'javascript',
        title,
        reason: 'This page is drawn by JavaScript in the browser: its HTML has no readable text. Paste its text as a knowledge-base section instead.',
      };
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

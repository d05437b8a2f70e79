/**
 * How likely a link is to describe the business, from its path, its anchor text and where it was
 * found. `primary` pages (home, services, products, prices, contact, about, hours, locations, FAQ,
 * ordering and booking) are what visitors ask about; `background` pages (blog posts, news, legal
 * pages, careers) are read as background knowledge.
 */

export type LinkSource = 'homepage' | 'nav' | 'sitemap' | 'page';
export type Category = 'primary' | 'background';

const PRIMARY: Array<[RegExp, number]> = [
  [/\b(services?|what-?we-?do|treatments?|solutions)\b/, 0.35],
  [/\b(products?|shop|store|menu|catalog(ue)?|collections?)\b/, 0.3],
  [/\b(prices?|pricing|rates|fees|tariffs?|costs?|packages|plans)\b/, 0.35],
  [/\b(contact|contact-?us|get-?in-?touch|reach-?us)\b/, 0.35],
  [/\b(about|about-?us|our-?story|story|who-?we-?are|team|company)\b/, 0.3],
  [/\b(hours|opening|opening-?hours|open|times)\b/, 0.3],
  [/\b(locations?|find-?us|visit|directions|stores?|branches)\b/, 0.3],
  [/\b(faqs?|help|questions|support)\b/, 0.3],
  [/\b(book|booking|appointments?|reservations?|order|catering|delivery|shipping|returns?|refunds?|warranty)\b/, 0.25],
];
const BACKGROUND: RegExp[] = [
  /\b(blog|news|articles?|posts?|press|media|stories|journal|magazine|podcast|events?)\b/,
  /\b(privacy|terms|conditions|legal|cookies?|imprint|impressum|disclaimer|gdpr|accessibility|policy|policies)\b/,
  /\b(careers?|jobs|vacancies|hiring)\b/,
  /\b(tags?|category|categories|author|archives?|login|log-?in|sign-?in|register|account|cart|checkout|search)\b/,
  /\/(19|20)\d\d\//,
];

function words(text: string): string {
  return ` ${text.toLowerCase().replace(/[^\p{L}\p{N}/]+/gu, '-')} `.replace(/-/g, ' ');
}

export interface ScoredLink {
  score: number;
  category: Category;
}

export function scoreLink(path: string, anchor: string, source: LinkSource): ScoredLink {
  const cleanPath = path.split('?')[0]!.toLowerCase();
  if (cleanPath === '/' || cleanPath === '') return { score: 1, category: 'primary' };
  const segments = cleanPath.split('/').filter(Boolean);
  const pathWords = ` ${segments.join(' ').replace(/[-_.]+/g, ' ')} `;
  const anchorWords = words(anchor);
  let score = 0.3;
  let primaryHit = false;
  for (const [pattern, weight] of PRIMARY) {
    const inPath = pattern.test(pathWords);
    const inAnchor = pattern.test(anchorWords);
    if (inPath || inAnchor) {
      primaryHit = true;
      score += inPath && inAnchor ? weight + 0.1 : weight;
    }
  }
  const background = BACKGROUND.some((p) => p.test(pathWords) || p.test('/' + cleanPath + '/') || p.test(anchorWords));
  if (background) score -= 0.35;
  score += { nav: 0.15, homepage: 0.08, sitemap: 0, page: -0.02 }[source];
  score -= 0.06 * Math.max(0, segments.length - 1);
  score = Math.round(Math.min(0.99, Math.max(0.01, score)) * 100) / 100;
  // A background word (blog, privacy, careers…) wins; otherwise a business word, or a top-level page.
  const category: Category = background ? 'background' : primaryHit || segments.length <= 1 ? 'primary' : 'background';
  return { score, category };
}

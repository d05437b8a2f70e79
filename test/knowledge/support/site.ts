/**
 * A realistic small-business website served on 127.0.0.1 for the knowledge tests and the brain
 * benchmark: a bakery with navigation, a cookie banner, a footer with contacts, a price table, a FAQ,
 * blog posts, legal pages, a sitemap index, robots.txt, a redirect, a 404, a PDF, a page drawn by
 * JavaScript, and a page only reachable from another page. Every request is logged, so tests can
 * check what the reader fetched, when, and with which User-Agent.
 */
import http from 'node:http';
import zlib from 'node:zlib';

export interface SiteRequest {
  path: string;
  userAgent: string;
  at: number;
}

export interface SiteOptions {
  /** Extra blog posts (the benchmark's 20-page site). */
  extraPosts?: number;
  /** robots.txt Crawl-delay in seconds (default none). */
  crawlDelay?: number;
  /** Delay before each answer, in ms (to observe how many requests run at once). */
  latencyMs?: number;
}

export interface TestSite {
  url: string;
  port: number;
  requests: SiteRequest[];
  /** The most requests that were being answered at the same moment. */
  maxInFlight(): number;
  /** Replaces a page's HTML (e.g. to see a change picked up by a rebuild). */
  setPage(path: string, html: string): void;
  close(): Promise<void>;
}

const NAV = [
  ['/', 'Home'],
  ['/about', 'Our story'],
  ['/prices', 'Menu &amp; prices'],
  ['/services', 'Custom cakes &amp; catering'],
  ['/faq', 'FAQ'],
  ['/contact', 'Contact us'],
  ['/blog', 'Blog'],
];

function layout(title: string, main: string, options: { description?: string; canonical?: string } = {}): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${title} | Sunrise Bakery &amp; Café</title>
  <meta name="description" content="${options.description ?? 'Family-run bakery and café in Riverton.'}">
  <meta property="og:site_name" content="Sunrise Bakery &amp; Café">
  ${options.canonical ? `<link rel="canonical" href="${options.canonical}">` : ''}
  <link rel="stylesheet" href="/assets/site.css">
  <script src="/assets/analytics.js" async></script>
</head>
<body class="page">
  <div id="cookie-consent" class="cookie-banner" role="dialog" aria-label="Cookie consent">
    <p>We use cookies to give you the best experience on our website. By continuing to browse you agree to our use of cookies.</p>
    <button type="button">Accept all</button> <button type="button">Manage preferences</button>
  </div>
  <header class="site-header">
    <a class="logo" href="/"><img src="/assets/logo.png" alt="Sunrise Bakery logo"></a>
    <nav class="main-nav" aria-label="Main">
      <ul>
        ${NAV.map(([href, label]) => `<li><a href="${href}">${label}</a></li>`).join('\n        ')}
      </ul>
    </nav>
    <a class="button" href="/order?utm_source=header">Order online</a>
  </header>
  <main id="content">
${main}
  </main>
  <footer class="site-footer">
    <div class="footer-col">
      <h4>Visit us</h4>
      <p>12 Harbour Street, Riverton, RV3 4QP</p>
      <p>Phone: <a href="tel:+15551234567">(555) 123-4567</a> · Email: <a href="mailto:hello@sunrisebakery.test">hello@sunrisebakery.test</a></p>
    </div>
    <div class="footer-col">
      <h4>Newsletter</h4>
      <p>Sign up for our newsletter and never miss a seasonal special.</p>
      <form action="/subscribe" method="post"><input type="email" name="email" placeholder="Your email"><button>Subscribe</button></form>
    </div>
    <div class="footer-col">
      <ul>
        <li><a href="/privacy">Privacy policy</a></li>
        <li><a href="/terms">Terms &amp; conditions</a></li>
        <li><a href="/careers">Careers</a></li>
        <li><a href="https://instagram.example/sunrisebakery">Instagram</a></li>
      </ul>
      <p>© 2024 Sunrise Bakery &amp; Café. All rights reserved.</p>
    </div>
  </footer>
</body>
</html>`;
}

const PAGES: Record<string, () => string> = {
  '/': () =>
    layout(
      'Fresh bread and pastries in Riverton',
      `
    <section class="hero">
      <h1>Sunrise Bakery &amp; Café</h1>
      <p class="lead">Freshly baked sourdough, pastries and celebration cakes, made by hand in Riverton since 1998.</p>
      <a class="button" href="/prices#breads">See today's menu</a>
    </section>
    <section>
      <h2>Baked fresh every morning</h2>
      <p>Sunrise Bakery is a family-run bakery and café on Harbour Street. Our bakers start at 4 am so that everything on the counter is baked the same day. We make our bread with organic flour from Miller's Mill, two miles up the river.</p>
      <p>Come in for a flat white and a warm cinnamon roll, order a <a href="/services">custom cake</a> for your next celebration, or let us cater your office breakfast.</p>
    </section>
    <section>
      <h2>Opening hours</h2>
      <p>We're open Monday to Saturday from 7 am to 3 pm. We are closed on Sundays and public holidays.</p>
      <p><a href="/contact#hours">Holiday hours and directions</a> · <a href="/faq#parking">Parking</a> · <a href="/old-menu">Our old menu page</a></p>
    </section>
    <section>
      <h2>Download</h2>
      <p><a href="/brochure.pdf">Our catering brochure (PDF)</a> and <a href="/app">online order tracker</a>.</p>
    </section>`,
      { description: 'Family-run bakery and café in Riverton: sourdough, pastries, custom cakes and catering.' },
    ),
  '/about': () =>
    layout(
      'Our story',
      `
    <article>
      <h1>Our story</h1>
      <p>Sunrise Bakery was founded in 1998 by Maria and Tom Alvarez, who had baked bread for their neighbours for years before opening the shop.</p>
      <p>Today a team of twelve bakers and baristas works with Maria and Tom. We bake everything on site, we use organic flour, free-range eggs and butter from local farms, and we never use preservatives.</p>
      <h2>Our values</h2>
      <ul>
        <li>Slow fermentation: our sourdough rises for 36 hours.</li>
        <li>Local ingredients from farms within 30 miles.</li>
        <li>Zero waste: unsold bread goes to the Riverton food bank every evening.</li>
      </ul>
      <p>Team members can sign in to the <a href="/private/staff">staff area</a>.</p>
    </article>`,
    ),
  '/prices': () =>
    layout(
      'Menu and prices',
      `
    <article>
      <h1>Menu and prices</h1>
      <p>All prices include tax. Our menu changes with the seasons; these are our everyday favourites.</p>
      <h2 id="breads">Breads and pastries</h2>
      <table class="price-table">
        <thead><tr><th>Item</th><th>Price</th><th>Notes</th></tr></thead>
        <tbody>
          <tr><td>Sourdough loaf</td><td>$6.50</td><td>Baked daily</td></tr>
          <tr><td>Baguette</td><td>$3.75</td><td>Baked daily</td></tr>
          <tr><td>Butter croissant</td><td>$3.25</td><td></td></tr>
          <tr><td>Cinnamon roll</td><td>$4.00</td><td>Saturdays only</td></tr>
          <tr><td>Gluten-free seeded loaf</td><td>$8.00</td><td>Tuesdays and Fridays</td></tr>
        </tbody>
      </table>
      <h2>Coffee and drinks</h2>
      <table class="price-table">
        <thead><tr><th>Drink</th><th>Price</th></tr></thead>
        <tbody>
          <tr><td>Espresso</td><td>$2.80</td></tr>
          <tr><td>Cappuccino</td><td>$4.50</td></tr>
          <tr><td>Flat white</td><td>$4.20</td></tr>
          <tr><td>Hot chocolate</td><td>$4.00</td></tr>
        </tbody>
      </table>
      <p>Oat, almond and soy milk are available at no extra charge.</p>
    </article>`,
    ),
  '/services': () =>
    layout(
      'Custom cakes and catering',
      `
    <article>
      <h1>Custom cakes and catering</h1>
      <h2>Celebration cakes</h2>
      <p>We bake custom cakes for birthdays, anniversaries and every other celebration. Custom cakes start at $45 for an 8-inch cake that serves 12 people.</p>
      <p>Please order custom cakes at least 48 hours in advance. For <a href="/services/wedding-cakes">wedding cakes</a>, see our wedding page.</p>
      <h2>Catering</h2>
      <p>We cater breakfasts, lunches and parties for 10 to 200 guests, with pastry platters from $35 and sandwich platters from $55.</p>
      <h2>Delivery</h2>
      <p>We deliver within 10 miles of Riverton for a flat fee of $15. Orders over $150 are delivered free of charge.</p>
      <p><a href="/missing-page">Seasonal specials</a></p>
    </article>`,
    ),
  '/services/wedding-cakes': () =>
    layout(
      'Wedding cakes',
      `
    <article>
      <h1>Wedding cakes</h1>
      <p>Our wedding cakes start at $350 for a three-tier cake that serves 60 guests.</p>
      <p>Book a free tasting appointment on Wednesday afternoons. We recommend ordering your wedding cake at least three months before the big day.</p>
    </article>`,
    ),
  '/contact': () =>
    layout(
      'Contact us',
      `
    <article>
      <h1>Contact us</h1>
      <p>Find us at 12 Harbour Street, Riverton, RV3 4QP, opposite the ferry terminal.</p>
      <p>Call us on (555) 123-4567 or email hello@sunrisebakery.test. We answer emails within one working day.</p>
      <h2 id="hours">Opening hours</h2>
      <ul>
        <li>Monday to Friday: 7:00 am – 3:00 pm</li>
        <li>Saturday: 7:00 am – 3:00 pm</li>
        <li>Sunday: closed</li>
      </ul>
      <p>We are closed on public holidays and between Christmas and New Year.</p>
    </article>`,
    ),
  '/faq': () =>
    layout(
      'Frequently asked questions',
      `
    <article>
      <h1>Frequently asked questions</h1>
      <h3>Do you have gluten-free options?</h3>
      <p>Yes. We bake a gluten-free seeded loaf on Tuesdays and Fridays, and we always have gluten-free brownies. Our kitchen handles wheat, so we cannot guarantee that anything is completely free of gluten.</p>
      <h3>Do you have vegan options?</h3>
      <p>Yes, our sourdough, baguettes and fruit sorbets are vegan, and we offer oat, almond and soy milk for coffee.</p>
      <h3>Which payment methods do you accept?</h3>
      <p>We accept cash, all major credit and debit cards, Apple Pay and Google Pay.</p>
      <h3 id="parking">Where can I park?</h3>
      <p>There is free street parking on Harbour Street for up to two hours, and the ferry terminal car park is a two-minute walk away.</p>
      <h3>Are dogs allowed?</h3>
      <p>Dogs are welcome on our outdoor patio, and we keep a water bowl by the door.</p>
      <h3>Can I order online?</h3>
      <p>Yes, you can order online for pickup up to two days in advance. Orders placed before 8 pm are ready from 9 am the next morning.</p>
      <h3>What is your cancellation policy for cake orders?</h3>
      <p>You can cancel a custom cake order free of charge up to 24 hours before pickup. Later cancellations are charged 50% of the price.</p>
    </article>`,
    ),
  '/blog': () =>
    layout(
      'Blog',
      `
    <h1>From the bakery blog</h1>
    <ul class="posts">
      <li><a href="/blog/sourdough-secrets">The secrets of a good sourdough</a></li>
      <li><a href="/blog/summer-news">Summer news from Harbour Street</a></li>
    </ul>`,
    ),
  '/blog/sourdough-secrets': () =>
    layout(
      'The secrets of a good sourdough',
      `
    <article>
      <h1>The secrets of a good sourdough</h1>
      <p class="byline">By Tom Alvarez, March 2024</p>
      <p>People often ask Tom how our sourdough gets its crackling crust. The answer is time: the dough ferments slowly in the cold for a day and a half before it is shaped and baked in a stone oven.</p>
      <p>Our starter, named Bubbles, is older than the bakery itself. Tom fed it for the first time in 1994.</p>
    </article>`,
    ),
  '/blog/summer-news': () =>
    layout(
      'Summer news from Harbour Street',
      `
    <article>
      <h1>Summer news from Harbour Street</h1>
      <p>This summer we are adding iced coffee and three new fruit tarts to the counter.</p>
      <p>Our patio now has six more tables, so there is more room to enjoy the sunshine.</p>
    </article>`,
    ),
  '/privacy': () =>
    layout(
      'Privacy policy',
      `
    <article>
      <h1>Privacy policy</h1>
      <p>We only collect the personal data needed to process your orders. We do not sell your data to anyone. You can ask us to delete your data at any time by emailing privacy@sunrisebakery.test.</p>
    </article>`,
    ),
  '/terms': () =>
    layout(
      'Terms and conditions',
      `
    <article>
      <h1>Terms and conditions</h1>
      <p>These terms apply to all orders placed with Sunrise Bakery. Prices may change without notice. Online orders are confirmed by email.</p>
    </article>`,
    ),
  '/careers': () =>
    layout(
      'Careers',
      `
    <article>
      <h1>Work with us</h1>
      <p>We are always happy to hear from bakers and baristas. Send your CV to jobs@sunrisebakery.test.</p>
    </article>`,
    ),
  '/gift-cards': () =>
    layout(
      'Gift cards',
      `
    <article>
      <h1>Gift cards</h1>
      <p>Gift cards are available in the shop for any amount from $10 to $200. They are valid for two years.</p>
    </article>`,
    ),
  '/order': () =>
    layout(
      'Order online',
      `
    <article>
      <h1>Order online</h1>
      <p>Order bread, pastries and cakes online and pick them up at the shop. Orders placed before 8 pm are ready from 9 am the next morning.</p>
    </article>`,
    ),
  '/private/staff': () => layout('Staff area', '<p>Staff rota and secret recipes.</p>'),
  // An application shell: the text is drawn by JavaScript in the browser.
  '/app': () =>
    `<!doctype html><html><head><title>Order tracker</title><script type="module" src="/assets/app.js"></script></head><body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript></body></html>`,
};

function post(n: number): string {
  return layout(
    `Baking diary ${n}`,
    `
    <article>
      <h1>Baking diary, week ${n}</h1>
      <p>This week the team tried a new rye recipe number ${n} with caraway seeds, toasted walnuts and a long cold proof.</p>
      <p>We also shaped ${100 + n} loaves for the Riverton market and tested a pear and almond tart for the autumn menu.</p>
      <h2>What we learned</h2>
      <ul><li>Rye needs a wetter dough.</li><li>Walnuts taste better toasted.</li></ul>
    </article>`,
  );
}

export async function startTestSite(options: SiteOptions = {}): Promise<TestSite> {
  const requests: SiteRequest[] = [];
  const overrides = new Map<string, string>();
  const posts = options.extraPosts ?? 0;
  let inFlight = 0;
  let maxInFlight = 0;

  const pageHtml = (path: string): string | undefined => {
    if (overrides.has(path)) return overrides.get(path);
    const match = /^\/blog\/diary-(\d+)$/.exec(path);
    if (match && Number(match[1]) >= 1 && Number(match[1]) <= posts) return post(Number(match[1]));
    return PAGES[path]?.();
  };

  const sitemapUrls = (base: string) => ({
    pages: ['/', '/about', '/prices', '/services', '/contact', '/faq', '/gift-cards', '/privacy', '/terms'].map((p) => base + p),
    blog: ['/blog', '/blog/sourdough-secrets', '/blog/summer-news', ...Array.from({ length: posts }, (_, i) => `/blog/diary-${i + 1}`)].map((p) => base + p),
  });

  const server = http.createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push({ path: req.url ?? '/', userAgent: String(req.headers['user-agent'] ?? ''), at: Date.now() });
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const send = (status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': type, ...headers });
      res.end(body);
    };
    if (path === '/robots.txt') {
      return send(
        200,
        'text/plain',
        `User-agent: *\nDisallow: /private/\nDisallow: /order?\n${options.crawlDelay ? `Crawl-delay: ${options.crawlDelay}\n` : ''}\nUser-agent: BadBot\nDisallow: /\n\nSitemap: ${base}/sitemap_index.xml\n`,
      );
    }
    if (path === '/sitemap_index.xml' || path === '/sitemap.xml') {
      return send(
        200,
        'application/xml',
        `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n  <sitemap><loc>${base}/sitemap-pages.xml</loc></sitemap>\n  <sitemap><loc>${base}/sitemap-blog.xml.gz</loc></sitemap>\n</sitemapindex>`,
      );
    }
    if (path === '/sitemap-pages.xml' || path === '/sitemap-blog.xml.gz') {
      const urls = sitemapUrls(base)[path === '/sitemap-pages.xml' ? 'pages' : 'blog'];
      const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.map((u) => `  <url><loc>${u}</loc><lastmod>2024-05-01</lastmod></url>`).join('\n')}\n</urlset>`;
      return path.endsWith('.gz') ? send(200, 'application/gzip', zlib.gzipSync(xml)) : send(200, 'application/xml', xml);
    }
    if (path === '/old-menu') return send(301, 'text/html', 'Moved', { location: '/prices' });
    // A chain of redirects /r/1 → /r/2 → … → /r/8 → /about (more than the reader follows).
    const hop = /^\/r\/(\d+)$/.exec(path);
    if (hop) return send(302, 'text/html', '', { location: Number(hop[1]) >= 8 ? '/about' : `/r/${Number(hop[1]) + 1}` });
    if (path === '/r-short') return send(302, 'text/html', '', { location: '/r/6' });
    if (path === '/offsite') return send(302, 'text/html', '', { location: `http://localhost:${(server.address() as { port: number }).port}/about` });
    if (path === '/slow') return; // never answers
    if (path === '/big') return send(200, 'text/html', `<html><body><p>${'Bread. '.repeat(400_000)}</p></body></html>`);
    if (path === '/brochure.pdf') return send(200, 'application/pdf', '%PDF-1.4 fake');
    if (path.startsWith('/assets/')) return send(200, 'text/plain', '');
    const html = pageHtml(path);
    if (!html) {
      return send(404, 'text/html; charset=utf-8', layout('Page not found', '<h1>Page not found</h1><p>Sorry, we could not find that page.</p>'));
    }
    // Compressed like most real servers, when the client asks for it.
    if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      return send(200, 'text/html; charset=utf-8', zlib.gzipSync(html), { 'content-encoding': 'gzip' });
    }
    return send(200, 'text/html; charset=utf-8', html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    maxInFlight: () => maxInFlight,
    setPage: (path, html) => void overrides.set(path, html),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export { layout as siteLayout };

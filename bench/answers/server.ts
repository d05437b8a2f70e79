/**
 * Serves one of the answers benchmark's fixture sites (bench/answers/sites/<dir>/) on 127.0.0.1.
 * A page is a file of its path (`/` is index.html, `/blog/x` is blog/x.html) holding the page's main
 * content, wrapped in the site's `_layout.html` (head, cookie banner, navigation, footer), so every
 * page carries the boilerplate real sites repeat. A page's first comments give its title
 * (`<!-- title: … -->`) and anything it adds to <head> (`<!-- head: … -->`, e.g. JSON-LD).
 * The site has a robots.txt and a sitemap.xml listing every page.
 */
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SITES_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sites');

export interface ServedSite {
  url: string;
  close(): Promise<void>;
}

/** The page at a path, laid out, or undefined when the site has no such page. */
export function renderPage(dir: string, urlPath: string): string | undefined {
  const root = path.join(SITES_DIR, dir);
  const clean = urlPath.split(/[?#]/)[0]!.replace(/\/+$/, '') || '/';
  if (clean.includes('..')) return undefined;
  const file = path.join(root, clean === '/' ? 'index.html' : `${clean.slice(1)}.html`);
  if (!fs.existsSync(file) || path.basename(file).startsWith('_')) return undefined;
  const page = fs.readFileSync(file, 'utf8');
  const title = /<!--\s*title:\s*([\s\S]*?)\s*-->/.exec(page)?.[1] ?? '';
  const head = /<!--\s*head:\s*([\s\S]*?)\s*-->/.exec(page)?.[1] ?? '';
  const main = page.replace(/<!--\s*(title|head):[\s\S]*?-->\s*/g, '');
  const layout = fs.readFileSync(path.join(root, '_layout.html'), 'utf8');
  return layout.replace('{{title}}', title).replace('{{head}}', head).replace('{{main}}', main);
}

/** Every page's path, for the sitemap (real sites list their blog posts there). */
export function pagePaths(dir: string): string[] {
  const root = path.join(SITES_DIR, dir);
  const out: string[] = [];
  const walk = (sub: string) => {
    for (const entry of fs.readdirSync(path.join(root, sub), { withFileTypes: true })) {
      if (entry.isDirectory()) walk(path.join(sub, entry.name));
      else if (entry.name.endsWith('.html') && !entry.name.startsWith('_')) {
        const page = path
          .join(sub, entry.name.replace(/\.html$/, ''))
          .split(path.sep)
          .join('/');
        out.push(page === 'index' ? '/' : `/${page}`);
      }
    }
  };
  walk('');
  return out.sort();
}

export async function serveSite(dir: string): Promise<ServedSite> {
  const server = http.createServer((req, res) => {
    const urlPath = req.url ?? '/';
    if (urlPath === '/sitemap.xml') {
      const urls = pagePaths(dir)
        .map((p) => `<url><loc>http://${req.headers.host}${p}</loc></url>`)
        .join('');
      res
        .writeHead(200, { 'content-type': 'application/xml' })
        .end(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls}</urlset>`);
      return;
    }
    if (urlPath === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      return;
    }
    const html = renderPage(dir, urlPath);
    if (html === undefined) {
      res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Page not found</title><h1>Page not found</h1>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

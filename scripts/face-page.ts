/**
 * What the face renderers (face-contact-sheet.ts, render-faces.ts) share: a local HTTP server for
 * one HTML page, three.js from node_modules and the face GLBs of a folder, and headless Chromium
 * under software GL (SwiftShader) with the player's flags.
 */
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** The page's `<head>` import map, matching the URLs the server answers. */
export const IMPORT_MAP = `<script type="importmap">{"imports":{"three":"/three/build/three.module.js","three/addons/":"/three/examples/jsm/"}}</script>`;

export interface FacePage {
  tab: Page;
  close(): Promise<void>;
}

/** Serves `page` at / (three.js under /three/, the GLBs of facesDir under /faces/) and opens it in Chromium; resolves once the page sets `window.ready`. */
export async function openFacePage(page: string, facesDir: string, browserPath: string, logConsole = false): Promise<FacePage> {
  const three = path.resolve('node_modules/three');
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(req.url ?? '/');
    let file: string | null = null;
    if (url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(page);
    if (url.startsWith('/three/')) file = path.join(three, path.normalize(url.slice(7)).replace(/^(\.\.[/\\])+/, ''));
    if (url.startsWith('/faces/')) file = path.join(facesDir, path.basename(url));
    if (!file || !fs.existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': file.endsWith('.js') ? 'text/javascript' : 'application/octet-stream' }).end(fs.readFileSync(file));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch({
      executablePath: browserPath,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--use-angle=swiftshader',
        '--enable-unsafe-swiftshader',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
    });
    const tab = await browser.newPage();
    if (logConsole) tab.on('console', (m) => console.log('[page]', m.text()));
    tab.on('pageerror', (e) => console.log('[page error]', e.message));
    await tab.goto(`http://127.0.0.1:${port}/`);
    await tab.waitForFunction('window.ready === true');
    const opened = browser;
    return {
      tab,
      close: async () => {
        await opened.close();
        server.close();
      },
    };
  } catch (err) {
    await browser?.close();
    server.close();
    throw err;
  }
}

/**
 * The console as an operator meets it: the first start prints a sign-in link beside the key,
 * `presence console-link [--account] [--ttl]` prints a fresh one (through the running server, and
 * with no server running), and the app is served at /console/ (/ redirects) with hashed,
 * immutable assets under a strict CSP. Run as an operator would, in child processes.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bannerKeys, cleanup, runCli, singleJson, startServer, tempDataDir } from '../cli/support/process.js';

after(cleanup);

const LINK = /(http:\/\/\S+\/console\/login\?token=[A-Za-z0-9_-]+)/;
const origin = (url: string) => new URL(url).origin;

describe('console-link and serving [embedded database]', () => {
  it('first start prints a link beside the key; console-link prints new ones; the app is served with a strict CSP', async () => {
    const dataDir = tempDataDir('console');
    const server = await startServer({ DATA_DIR: dataDir });
    const env = { DATA_DIR: dataDir, PUBLIC_URL: server.url };
    try {
      assert.equal(bannerKeys(server).length, 1);
      const printed = LINK.exec(server.stdout())?.[1];
      assert.ok(printed, `a sign-in link on first start:\n${server.stdout()}`);
      assert.ok(printed.startsWith(`${server.url}/console/login?token=`));
      const signIn = (token: string) => server.request('POST', '/console/session', { body: { token }, headers: { origin: origin(server.url) } });
      const first = await signIn(new URL(printed).searchParams.get('token')!);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.account_name, 'default');

      // Through the running server's admin endpoint.
      const made = singleJson(await runCli(['console-link', '--ttl', '120'], env));
      assert.deepEqual(Object.keys(made).sort(), ['account_id', 'expires_at', 'url']);
      assert.equal(made.account_id, 1);
      const ttl = Date.parse(made.expires_at) - Date.now();
      assert.ok(ttl > 100_000 && ttl <= 120_000, `expires in about two minutes: ${made.expires_at}`);
      assert.equal((await signIn(new URL(made.url).searchParams.get('token')!)).status, 200);

      const missing = await runCli(['console-link', '--account', '999'], env);
      assert.notEqual(missing.code, 0);
      assert.match(missing.stderr, /999/);

      // Serving: / redirects, any console path is the app's shell under a strict CSP.
      const root = await fetch(`${server.url}/`, { redirect: 'manual' });
      assert.equal(root.status, 302);
      assert.equal(root.headers.get('location'), '/console/');
      for (const p of ['/console/', '/console/agents/7/knowledge', '/console/no/such/page']) {
        const page = await fetch(server.url + p);
        assert.equal(page.status, 200, p);
        const csp = page.headers.get('content-security-policy') ?? '';
        assert.match(csp, /script-src 'self'(;|$)/);
        assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
        const html = await page.text();
        assert.doesNotMatch(html, /<script>(?!<\/script>)|<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
        const entry = /src="(\/console\/assets\/main-[A-Z0-9]+\.js)"/.exec(html)?.[1];
        assert.ok(entry, html);
        const asset = await fetch(server.url + entry);
        assert.equal(asset.status, 200);
        assert.match(asset.headers.get('cache-control') ?? '', /immutable/);
        assert.match(asset.headers.get('content-type') ?? '', /javascript/);
      }
      assert.equal((await fetch(`${server.url}/console/assets/nope-123.js`)).status, 404);
    } finally {
      assert.equal((await server.stop()).code, 0);
    }

    // With no server running, the command opens the database itself.
    const offline = singleJson(await runCli(['console-link'], env));
    assert.equal(offline.account_id, 1);
    assert.match(offline.url, LINK);
    const usage = await runCli(['console-link', '--ttl', 'soon'], env);
    assert.equal(usage.code, 2);
  });
});

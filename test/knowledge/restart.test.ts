/**
 * A brain build survives `kill -9` of the server: started again on the same data, the build goes on
 * from where it stopped (pages already read are not read again) and completes; it is never left in
 * `processing`. Both database engines, with the real server process.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { forEachEngine } from '../support/app.js';
import { bannerKeys, cleanup, freshPostgres, migratedDataDir, startServer } from '../cli/support/process.js';
import { startTestSite } from './support/site.js';

after(cleanup);

forEachEngine('brain build restart', (engine) => {
  test('kill -9 during a build, start again: the build resumes and completes', { timeout: 180_000 }, async () => {
    const site = await startTestSite({ latencyMs: 600 });
    try {
      const dataDir = await migratedDataDir('brain');
      const env = {
        CRAWL_ALLOW_PRIVATE: '1',
        BRAIN_BUILD_STALL_SECONDS: '2',
        DATA_DIR: dataDir,
        ...(engine === 'postgres' ? { DATABASE_URL: await freshPostgres() } : {}),
      };
      const first = await startServer(env);
      const key = bannerKeys(first)[0]!;
      const agent = await first.request('POST', '/v1/agent/create', { key, body: { name: 'Ava', website_url: `${site.url}/` } });
      const pages = ['/', '/about', '/prices', '/services', '/contact', '/faq', '/gift-cards', '/order', '/blog', '/careers', '/privacy', '/terms'].map(
        (p) => ({ url: site.url + p, is_primary: true }),
      );
      await first.request('POST', `/v1/agent/${agent.body.id}/generate-brain`, { key, body: { pages } });
      let done = 0;
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
        const status = await first.request('GET', `/v1/agent/${agent.body.id}/brain-status`, { key });
        done = status.body.progress.pages_done;
        if (done >= 3) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(done >= 3 && done < pages.length, `killed with ${done} pages done`);
      first.child.kill('SIGKILL');
      await first.exited;
      const killedAt = Date.now();

      const second = await startServer({ ...env, PORT: String(first.port) });
      let last: any;
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
        last = (await second.request('GET', `/v1/agent/${agent.body.id}/brain-status`, { key })).body;
        if (last.brain_status !== 'pending' && last.brain_status !== 'processing') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(last.brain_status, 'complete', `${JSON.stringify(last)}\n${second.stdout().slice(-1500)}`);
      assert.equal(last.progress.pages_done, pages.length);
      const list = (await second.request('GET', `/v1/agent/${agent.body.id}/pages/list`, { key })).body;
      assert.ok(
        list.every((p: any) => p.status === 'read'),
        JSON.stringify(list.map((p: any) => [p.url, p.status])),
      );
      // Resumed, not started over: the pages read before the kill were not read again.
      const readAfter = site.requests.filter((r) => r.at >= killedAt && !r.path.startsWith('/robots')).length;
      assert.ok(readAfter <= pages.length - done + 2, `${readAfter} pages read after the restart, ${done} of ${pages.length} were done`);
      await second.stop();
    } finally {
      await site.close();
    }
  });
});

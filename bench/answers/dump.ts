/**
 * Debugging aid for the answers benchmark: `node --import tsx bench/answers/dump.ts <site>` builds
 * the site's brain as the benchmark does and prints each page as the brain holds it (after
 * extraction and boilerplate removal), then the built facts.
 */
import { startTestApp } from '../../test/support/app.js';
import { serveSite } from './server.js';
import { SITES } from './questions.js';

const site = SITES.find((s) => s.dir === process.argv[2]) ?? SITES[0]!;
const app = await startTestApp('pglite', { CRAWL_ALLOW_PRIVATE: '1', LOG_LEVEL: 'silent' });
const served = await serveSite(site.dir);
try {
  const created = await app.request('POST', '/v1/agent/create', {
    body: { name: site.agentName, website_url: `${served.url}/`, ...(site.systemPrompt ? { system_prompt: site.systemPrompt } : {}) },
  });
  const agentId = created.body.id as number;
  await app.request('POST', `/v1/agent/${agentId}/generate-brain`);
  let status: any;
  for (;;) {
    status = (await app.request('GET', `/v1/agent/${agentId}/brain-status`)).body;
    if (status.brain_status === 'complete' || status.brain_status === 'failed') break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const pages = (await app.request('GET', `/v1/agent/${agentId}/pages/list`)).body as Array<{ id: number; url: string; status: string; is_primary: boolean }>;
  for (const page of pages) {
    const full = (await app.request('GET', `/v1/agent/${agentId}/pages/${page.id}`)).body;
    console.log(`\n======== ${page.url} (${page.status}, ${page.is_primary ? 'primary' : 'background'}) ${full.title}\n${full.content ?? full.error}`);
  }
  console.log('\n======== facts\n' + (status.facts ?? []).map((f: any) => `${f.topic}: ${f.text}`).join('\n'));
} finally {
  await served.close();
  await app.close();
}

#!/usr/bin/env node
// Speaks a text file through a render-mode session: starts the session with the typed client,
// prints the page to watch, voices the file paragraph by paragraph (agent.speak_text), waits for
// each to play, then stops the session.
//
//   PRESENCE_URL=https://presence.example.com PRESENCE_API_KEY=sk_live_… PRESENCE_AGENT_ID=1 \
//     node speak-file.mjs story.txt
import fs from 'node:fs';
import WebSocket from 'ws'; // Node 22+ and browsers have a global WebSocket; Node 20 needs `ws`.
import { createPresenceClient, RenderSession, PresenceApiError } from '@presence/sdk';

const [file] = process.argv.slice(2);
const { PRESENCE_URL, PRESENCE_API_KEY, PRESENCE_AGENT_ID } = process.env;
if (!file || !PRESENCE_URL || !PRESENCE_API_KEY || !PRESENCE_AGENT_ID) {
  console.error('usage: PRESENCE_URL=… PRESENCE_API_KEY=… PRESENCE_AGENT_ID=… node speak-file.mjs <text file>');
  process.exit(2);
}

/** Paragraphs, each cut at sentence ends to at most 4000 characters (agent.speak_text takes 5000). */
function passages(text) {
  const out = [];
  for (const paragraph of text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean)) {
    let rest = paragraph;
    while (rest.length > 4000) {
      const cut = Math.max(rest.lastIndexOf('. ', 4000), 2000);
      out.push(rest.slice(0, cut + 1));
      rest = rest.slice(cut + 1).trim();
    }
    out.push(rest);
  }
  return out;
}

const presence = createPresenceClient({ baseUrl: PRESENCE_URL, apiKey: PRESENCE_API_KEY });
let started;
try {
  started = await presence.post('/v1/sessions', { body: { agent_id: Number(PRESENCE_AGENT_ID), mode: 'render' } });
} catch (error) {
  if (error instanceof PresenceApiError) console.error(`could not start a session: ${error.status} ${error.detail.code}: ${error.detail.message}`);
  else console.error(error);
  process.exit(1);
}
console.log(`session ${started.session_id}; watch: ${started.player_url}`);

const session = await RenderSession.connect(started.ws_url, { WebSocket });
try {
  const utterances = [];
  for (const passage of passages(fs.readFileSync(file, 'utf8'))) utterances.push(await session.speakText(passage));
  for (const utterance of utterances) console.log(`${utterance.id}: ${await utterance.played()}`);
} finally {
  session.close();
  await presence.post('/v1/sessions/{session_id}/stop', { params: { path: { session_id: started.session_id } } });
}
console.log('done');

#!/usr/bin/env node
// Feeds an OpenAI-compatible streaming TTS into a render session: POST {TTS_URL}/v1/audio/speech
// with `response_format: "pcm"` (raw 24 kHz s16le mono, streamed), piped into the session as it
// arrives, so the avatar starts talking with the first chunk. Works with any server speaking that
// API (OpenAI, or a local one); set TTS_RATE if yours streams another rate.
//
//   PRESENCE_URL=… PRESENCE_API_KEY=… PRESENCE_AGENT_ID=1 TTS_URL=https://api.openai.com TTS_API_KEY=sk-… \
//     node tts-bridge.mjs "Hello! Welcome to the shop."
import WebSocket from 'ws';
import { createPresenceClient, RenderSession, pipeAudio } from '@presence/sdk';

const text = process.argv.slice(2).join(' ');
const env = process.env;
if (!text || !env.PRESENCE_URL || !env.PRESENCE_API_KEY || !env.PRESENCE_AGENT_ID || !env.TTS_URL) {
  console.error('usage: PRESENCE_URL=… PRESENCE_API_KEY=… PRESENCE_AGENT_ID=… TTS_URL=… [TTS_API_KEY=…] node tts-bridge.mjs <text>');
  process.exit(2);
}

const presence = createPresenceClient({ baseUrl: env.PRESENCE_URL, apiKey: env.PRESENCE_API_KEY });
const started = await presence.post('/v1/sessions', { body: { agent_id: Number(env.PRESENCE_AGENT_ID), mode: 'render' } });
console.log(`session ${started.session_id}; watch: ${started.player_url}`);
const session = await RenderSession.connect(started.ws_url, { WebSocket });

try {
  const response = await fetch(`${env.TTS_URL.replace(/\/+$/, '')}/v1/audio/speech`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(env.TTS_API_KEY && { Authorization: `Bearer ${env.TTS_API_KEY}` }) },
    body: JSON.stringify({ model: env.TTS_MODEL ?? 'gpt-4o-mini-tts', voice: env.TTS_VOICE ?? 'alloy', input: text, response_format: 'pcm' }),
  });
  if (!response.ok || !response.body) throw new Error(`TTS answered ${response.status}: ${await response.text()}`);
  // The event_id names the utterance in every event about it.
  const utterance = await pipeAudio(session, response.body, { inputRate: Number(env.TTS_RATE ?? 24000), text, eventId: 'tts-1' });
  console.log(`${utterance.id}: ${await utterance.played()}`);
} finally {
  session.close();
  await presence.post('/v1/sessions/{session_id}/stop', { params: { path: { session_id: started.session_id } } });
}

/**
 * The render protocol for users: a page at /docs/render-protocol and an AsyncAPI 3 document at
 * /asyncapi.json, both generated from the zod schemas the socket validates commands with
 * (realtime/protocol.ts) and the event schemas below. The prose (what each message does, each
 * field, the close codes, a worked session) lives here once, keyed by message type and field; a
 * test checks every command and field of the schemas has it, and that every event a real session
 * sends matches its schema, so neither can drift from the socket.
 */
import { z } from 'zod';
import {
  CAMERA_CHOICES,
  CLOSE_BAD_SAMPLE_RATE,
  CLOSE_BAD_TOKEN,
  CLOSE_INTERNAL_ERROR,
  CLOSE_RATE_LIMITED,
  CLOSE_REPLACED,
  CLOSE_SERVER_RESTART,
  CLOSE_SESSION_ENDED,
  CUES,
  DEFAULT_SAMPLE_RATE,
  MAX_FRAME_BYTES,
  MAX_QUEUED_PIECES,
  MAX_QUEUED_SECONDS,
  MAX_QUEUED_TEXT_CHARS,
  MAX_QUEUED_UTTERANCES,
  MAX_SPEAK_TEXT,
  MAX_TIMED_ACTIONS,
  RenderCommand,
  SAMPLE_RATES,
  VisitorMessageCommand,
} from '../realtime/protocol.js';
import { messageLimits } from '../realtime/rate-limit.js';

/** Per-session bounds, from the constants the socket enforces; past one, the command is refused with `queue_full`. */
export const LIMITS: Array<{ what: string; limit: string }> = [
  { what: 'Audio waiting to play (received, not yet played, over all queued utterances)', limit: `${MAX_QUEUED_SECONDS} s` },
  { what: 'One frame of audio (binary, or agent.speak audio decoded)', limit: `${MAX_FRAME_BYTES} bytes` },
  { what: 'Text of one agent.speak or agent.speak_text', limit: `${MAX_SPEAK_TEXT} characters` },
  { what: 'Text waiting to be voiced or played', limit: `${MAX_QUEUED_TEXT_CHARS} characters` },
  { what: 'Utterances waiting or playing', limit: String(MAX_QUEUED_UTTERANCES) },
  { what: 'Pieces (agent.speak messages and binary frames) waiting to play', limit: String(MAX_QUEUED_PIECES) },
  { what: 'Timed actions (at_seconds, expression tags) waiting', limit: String(MAX_TIMED_ACTIONS) },
  {
    what: 'Messages a second, sustained (a refused message gets one `error` per spell of refusals)',
    limit: `${messageLimits.perSecond}, bursts of ${messageLimits.burst}; ${messageLimits.closeAfter} refused in a row close the socket (4008)`,
  },
];

const AvatarState = z.enum(['idle', 'listening', 'talking']);
const eventId = z.string().describe('Server-made id of this event (`evt_…`)');
const sourceEventId = z.string().describe('The `event_id` of the message that opened the utterance (or of the command this answers)');

/** The events the server sends on the render socket (strict: a field not listed here is a test failure). */
export const RenderEvents = [
  z
    .strictObject({
      type: z.literal('session.state_updated'),
      event_id: eventId,
      state: z.literal('connected'),
      session_id: z.string().describe('The session this socket belongs to'),
      sample_rate: z.union(SAMPLE_RATES.map((r) => z.literal(r))).describe('The audio rate in force (Hz)'),
    })
    .describe('Sent once on connect. Wait for it before sending commands.'),
  z
    .strictObject({ type: z.literal('agent.state_updated'), event_id: eventId, previous_state: AvatarState, new_state: AvatarState })
    .describe('The rendered avatar changed state: idle → talking when an utterance starts, talking → idle (or listening) when it ends or is cut.'),
  z
    .strictObject({
      type: z.literal('agent.speak_started'),
      event_id: eventId,
      source_event_id: sourceEventId,
      at: z.number().describe('Session clock (seconds since the session started) when its first audio left'),
    })
    .describe("An utterance's first audio left the server; the visitor hears it about 0.1 to 0.3 s later."),
  z
    .strictObject({
      type: z.literal('agent.speak_ended'),
      event_id: eventId,
      source_event_id: sourceEventId,
      duration_seconds: z.number().describe('Seconds of audio the utterance played'),
      at: z.number().describe('Session clock when its last audio left'),
    })
    .describe("An utterance's last audio left the server."),
  z
    .strictObject({
      type: z.literal('agent.speak_interrupted'),
      event_id: eventId,
      source_event_id: sourceEventId,
      played_seconds: z.number().describe('Seconds of the utterance the visitor had heard when it was cut'),
      received_seconds: z.number().describe('Seconds of audio the server had received for it'),
      reason: z.literal('session_ended').optional().describe('Present when the session ended (stop, max duration) rather than by agent.interrupt'),
    })
    .describe('The playing utterance was cut (by agent.interrupt, or because the session ended). No agent.speak_ended follows.'),
  z
    .strictObject({
      type: z.literal('agent.audio_buffer_cleared'),
      event_id: eventId,
      source_event_id: z.string().optional().describe('The event_id of the agent.interrupt this confirms (absent when the session ended)'),
      dropped_utterances: z.array(z.string()).describe('The utterances (their source_event_ids) dropped unplayed'),
      dropped_seconds: z.number().describe('Seconds of queued audio dropped'),
      reason: z.literal('session_ended').optional().describe('Present when the session ended'),
    })
    .describe('Confirms agent.interrupt: everything queued was dropped. Also sent when a session ends with audio queued.'),
  z
    .strictObject({
      type: z.literal('stage.updated'),
      event_id: eventId,
      source_event_id: z.string().optional().describe('The event_id of the stage command'),
      stage: z
        .strictObject({
          camera: z.enum(['far', 'mid', 'close']).describe('The shot in use'),
          camera_mode: z.enum(['auto', 'manual']).describe('`auto`: the player cuts between shots following the speech'),
          hold: z.boolean().describe('Keep the current shot (no automatic cuts)'),
          backdrop: z.string().nullable().describe('The backdrop id, or null for none'),
          backdrop_name: z.string().nullable().describe('Its display name'),
          cameras: z.array(z.enum(['far', 'mid', 'close'])).describe("The shots the session's look enables"),
          face_light: z.number().describe('Key light on the face, 0 to 1'),
        })
        .describe('The stage now'),
    })
    .describe('The stage after a stage command took effect, or in answer to stage.get.'),
  z
    .strictObject({
      type: z.literal('warning'),
      event_id: eventId,
      warning: z
        .strictObject({
          type: z
            .enum(['audio_starvation', 'playback_late'])
            .describe(
              '`audio_starvation`: audio arrives slower than it plays (the avatar paused mid-utterance); `playback_late`: the server could not keep time',
            ),
          message: z.string().describe('What happened, for a person'),
          source_event_id: z.string().optional().describe('The utterance concerned'),
          late_ms: z.number().int().optional().describe('playback_late: how late the audio left'),
        })
        .describe('What the warning is about'),
    })
    .describe('Something the caller may want to act on; nothing was refused.'),
  z
    .strictObject({
      type: z.literal('error'),
      event_id: eventId,
      error: z
        .strictObject({
          type: z
            .enum(['invalid_request_error', 'queue_full', 'tts_error', 'stage_error'])
            .describe(
              '`invalid_request_error`: a bad command, cue or audio; `queue_full`: a limit was reached (the command was refused whole); `tts_error`: the text could not be voiced; `stage_error`: a camera or backdrop the session cannot use',
            ),
          message: z.string().describe('What was wrong, for a person'),
          source_event_id: z.string().optional().describe('The event_id of the command refused, when it had one'),
        })
        .describe('What was refused and why'),
    })
    .describe('A command was refused; the session and the socket go on.'),
] as const;

const RenderEventUnion = z.discriminatedUnion('type', [...RenderEvents]);
export type RenderEventMessage = z.infer<typeof RenderEventUnion>;

/** Checks an event as sent on the socket against its documented schema. */
export function checkRenderEvent(event: unknown) {
  return RenderEventUnion.safeParse(event);
}

/** What each command does, and each of its fields: the page's and the AsyncAPI document's prose. */
export const COMMAND_NOTES: Record<string, { summary: string; fields: Record<string, string> }> = {
  'agent.speak': {
    summary:
      "Adds audio to the current utterance; the first piece after an agent.speak_end or agent.interrupt opens a new one, named by this message's event_id.",
    fields: {
      audio: `Base64 of PCM signed 16-bit little-endian mono at the session's rate; about 20 ms to 1 s a piece, at most ${MAX_FRAME_BYTES / 1024 / 1024} MB decoded`,
      text: 'What the audio says (optional); selects expressions and may carry expression tags such as `[smile]`',
    },
  },
  'agent.speak_end': { summary: 'Seals the utterance; utterances play one after another.', fields: { audio: 'A last piece of audio (optional)' } },
  'agent.speak_text': {
    summary: "The service voices the text with the agent's voice and plays it in order with caller audio.",
    fields: { text: 'What to say; expression tags like `[smile]` or `[thinking 0.6]` are acted, never spoken', cue: 'An expression held while it speaks' },
  },
  'agent.interrupt': {
    summary:
      'Stops playback and drops everything queued, voice and lips together. Answered by agent.speak_interrupted (if something played) and agent.audio_buffer_cleared.',
    fields: {},
  },
  'agent.start_listening': { summary: 'Starts the listening look between utterances (while talking: when the utterance ends).', fields: {} },
  'agent.stop_listening': { summary: 'Ends the listening look.', fields: {} },
  'agent.cue': {
    summary: 'An expression, now or timed into the current (or next) utterance.',
    fields: {
      cue: 'The expression',
      intensity: 'How strongly, 0 to 1',
      at_seconds: 'Seconds from the start of the utterance playing now (or the next to start); absent: now',
    },
  },
  'stage.camera': {
    summary: 'Cuts the camera now or timed into the utterance; `auto` lets the player choose shots following the speech.',
    fields: { camera: 'The shot', hold: 'Keep this shot (no automatic cuts)', at_seconds: 'As for agent.cue' },
  },
  'stage.backdrop': {
    summary: 'Swaps the backdrop (GET /v1/backdrops lists them); null removes it.',
    fields: { backdrop: 'A backdrop id, or null', at_seconds: 'As for agent.cue' },
  },
  'stage.get': { summary: 'Answered with stage.updated.', fields: {} },
  'session.configure': {
    summary: `Sets the audio rate; only before the first audio. Or append \`&sample_rate=<rate>\` to ws_url.`,
    fields: { sample_rate: `Hz: one of ${SAMPLE_RATES.join(', ')}` },
  },
  'session.keep_alive': { summary: "No effect; the session stays alive while the visitor's page is open.", fields: {} },
};

/** Said of every command's `type` and `event_id`. */
export const COMMON_FIELDS: Record<string, string> = {
  type: 'The command',
  event_id: 'Your id for this message (optional, 1 to 128 characters); events about the utterance it opens carry it as source_event_id',
};

export const CLOSE_CODES: Array<{ code: number; meaning: string }> = [
  { code: CLOSE_BAD_SAMPLE_RATE, meaning: `Bad sample_rate (use one of ${SAMPLE_RATES.join(', ')}; it cannot change once audio started)` },
  {
    code: CLOSE_SESSION_ENDED,
    meaning:
      'The session ended (stopped, or reached max_session_seconds); agent.speak_interrupted / agent.audio_buffer_cleared come first if something was playing or queued',
  },
  { code: CLOSE_REPLACED, meaning: 'Replaced by a newer connection to the same session (one socket per session)' },
  { code: CLOSE_BAD_TOKEN, meaning: 'Bad or expired token, or no such session' },
  {
    code: CLOSE_RATE_LIMITED,
    meaning:
      'Too many messages: the caller kept sending past the message rate limit after an error event told it, or sent more than 64 messages before session.state_updated',
  },
  { code: CLOSE_INTERNAL_ERROR, meaning: 'The server failed while handling a message; the session itself stays (reconnect)' },
  {
    code: CLOSE_SERVER_RESTART,
    meaning:
      'The server node is shutting down; the session itself stays active (reconnect, to this node once it is back or to another node on the same PostgreSQL)',
  },
];

/** A session from connect to close, as a caller sees it (→ sent, ← received). */
export const WORKED_SESSION: Array<{ direction: 'send' | 'receive'; message: Record<string, unknown>; note?: string }> = [
  {
    direction: 'receive',
    message: { type: 'session.state_updated', event_id: 'evt_1', state: 'connected', session_id: '2f1c6a8e-4b7d-4c1e-9a3f-5d8e7b6c4a21', sample_rate: 24000 },
    note: 'after opening ws_url&sample_rate=24000',
  },
  {
    direction: 'send',
    message: { type: 'agent.speak', event_id: 'reply-1', audio: 'AAAB…', text: '[smile] Hello! We open at eight tomorrow.' },
    note: 'the first piece opens utterance reply-1',
  },
  { direction: 'send', message: { type: 'agent.speak', audio: 'AQAC…' } },
  { direction: 'send', message: { type: 'agent.speak_end' }, note: 'seals reply-1' },
  { direction: 'receive', message: { type: 'agent.state_updated', event_id: 'evt_2', previous_state: 'idle', new_state: 'talking' } },
  { direction: 'receive', message: { type: 'agent.speak_started', event_id: 'evt_3', source_event_id: 'reply-1', at: 12.402 } },
  { direction: 'receive', message: { type: 'agent.speak_ended', event_id: 'evt_4', source_event_id: 'reply-1', duration_seconds: 2.4, at: 14.802 } },
  { direction: 'receive', message: { type: 'agent.state_updated', event_id: 'evt_5', previous_state: 'talking', new_state: 'idle' } },
  { direction: 'send', message: { type: 'agent.speak_text', event_id: 'reply-2', text: 'Shall I tell you about our sourdough?' } },
  { direction: 'receive', message: { type: 'agent.state_updated', event_id: 'evt_6', previous_state: 'idle', new_state: 'talking' } },
  { direction: 'receive', message: { type: 'agent.speak_started', event_id: 'evt_7', source_event_id: 'reply-2', at: 15.21 } },
  { direction: 'send', message: { type: 'agent.interrupt', event_id: 'barge-in-1' }, note: 'the visitor started talking' },
  {
    direction: 'receive',
    message: { type: 'agent.speak_interrupted', event_id: 'evt_8', source_event_id: 'reply-2', played_seconds: 0.84, received_seconds: 2.1 },
  },
  {
    direction: 'receive',
    message: { type: 'agent.audio_buffer_cleared', event_id: 'evt_9', source_event_id: 'barge-in-1', dropped_utterances: [], dropped_seconds: 0 },
  },
  { direction: 'receive', message: { type: 'agent.state_updated', event_id: 'evt_10', previous_state: 'talking', new_state: 'idle' } },
  { direction: 'send', message: { type: 'stage.camera', camera: 'close' } },
  {
    direction: 'receive',
    message: {
      type: 'stage.updated',
      event_id: 'evt_11',
      stage: {
        camera: 'close',
        camera_mode: 'manual',
        hold: false,
        backdrop: 'studio_grey',
        backdrop_name: 'Studio grey',
        cameras: ['far', 'mid', 'close'],
        face_light: 0.6,
      },
    },
  },
  {
    direction: 'receive',
    message: { type: 'close', code: CLOSE_SESSION_ENDED, reason: 'session ended: stopped' },
    note: 'POST /v1/sessions/{id}/stop; the socket closes with 4001',
  },
];

const commandSchemas = (): z.ZodObject[] => (RenderCommand as unknown as { options: z.ZodObject[] }).options;
const typeOf = (schema: z.ZodObject): string => (schema.shape.type as z.ZodLiteral<string>).value;

/** JSON Schema (draft-07, the AsyncAPI schema format's base) of a command, with the prose above. */
function commandJsonSchema(schema: z.ZodObject): Record<string, any> {
  const json = z.toJSONSchema(schema, { target: 'draft-7', io: 'input' }) as Record<string, any>;
  delete json.$schema;
  const notes = COMMAND_NOTES[typeOf(schema)];
  json.description = notes?.summary;
  for (const [field, property] of Object.entries<Record<string, any>>(json.properties ?? {})) {
    property.description = notes?.fields[field] ?? COMMON_FIELDS[field];
  }
  return json;
}

function eventJsonSchema(schema: z.ZodObject): Record<string, any> {
  const json = z.toJSONSchema(schema, { target: 'draft-7', io: 'output' }) as Record<string, any>;
  delete json.$schema;
  return json;
}

export const renderCommandTypes = (): string[] => commandSchemas().map(typeOf);
export const renderEventTypes = (): string[] => RenderEvents.map((e) => typeOf(e as unknown as z.ZodObject));

const messageName = (type: string) => type.replace(/[^A-Za-z0-9]+/g, '_');

/** The render protocol as an AsyncAPI 3.0 document, from the schemas above. */
export function renderAsyncApi(publicUrl: string): Record<string, unknown> {
  const url = new URL(publicUrl);
  const messages: Record<string, unknown> = {};
  const commandRefs: Array<{ $ref: string }> = [];
  const eventRefs: Array<{ $ref: string }> = [];
  for (const schema of commandSchemas()) {
    const type = typeOf(schema);
    const name = messageName(type);
    messages[name] = { name: type, title: type, summary: COMMAND_NOTES[type]?.summary, contentType: 'application/json', payload: commandJsonSchema(schema) };
    commandRefs.push({ $ref: `#/channels/render/messages/${name}` });
  }
  messages.audio_frame = {
    name: 'audio frame',
    title: '(binary frame)',
    contentType: 'application/octet-stream',
    summary: `Raw PCM signed 16-bit little-endian mono at the session's rate, at most ${MAX_FRAME_BYTES} bytes: the same as agent.speak without text.`,
    payload: { type: 'string', format: 'binary' },
  };
  commandRefs.push({ $ref: '#/channels/render/messages/audio_frame' });
  for (const schema of RenderEvents) {
    const type = typeOf(schema as unknown as z.ZodObject);
    const name = messageName(type);
    messages[name] = {
      name: type,
      title: type,
      summary: schema.description,
      contentType: 'application/json',
      payload: eventJsonSchema(schema as unknown as z.ZodObject),
    };
    eventRefs.push({ $ref: `#/channels/render/messages/${name}` });
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Presence render protocol',
      version: '1',
      description: `One WebSocket per render-mode session, opened from the caller's server to the session's \`ws_url\` exactly as POST /v1/sessions returned it. Wait for session.state_updated, then send commands (JSON text frames with a \`type\`, or binary audio frames). Audio: PCM s16le mono at ${SAMPLE_RATES.join(', ')} Hz (default ${DEFAULT_SAMPLE_RATE}); at most ${MAX_QUEUED_SECONDS} s may wait to play. Close codes: ${CLOSE_CODES.map((c) => `${c.code} ${c.meaning}`).join('; ')}. The page ${publicUrl}/docs/render-protocol explains each message and shows a worked session.`,
    },
    servers: {
      presence: {
        host: url.host,
        pathname: url.pathname.replace(/\/$/, '') || undefined,
        protocol: url.protocol === 'https:' ? 'wss' : 'ws',
        description: 'The Presence service (PUBLIC_URL)',
      },
    },
    channels: {
      render: {
        address: '/v1/sessions/{session_id}/render',
        title: 'Render socket',
        description: 'The query carries `token` (from ws_url) and optionally `sample_rate`.',
        parameters: { session_id: { description: 'The session id (from POST /v1/sessions)' } },
        messages,
        bindings: {
          ws: {
            method: 'GET',
            query: {
              type: 'object',
              properties: {
                token: { type: 'string', description: 'The session token in ws_url (secret)' },
                sample_rate: { type: 'integer', enum: [...SAMPLE_RATES], default: DEFAULT_SAMPLE_RATE, description: 'Audio rate in Hz' },
              },
              required: ['token'],
            },
          },
        },
      },
    },
    operations: {
      receiveCommands: { action: 'receive', title: 'Commands from the caller', channel: { $ref: '#/channels/render' }, messages: commandRefs },
      sendEvents: { action: 'send', title: 'Events to the caller', channel: { $ref: '#/channels/render' }, messages: eventRefs },
    },
  };
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
/** Backticks in the prose become <code>. */
const prose = (text: string | undefined) => escapeHtml(text ?? '').replace(/`([^`]+)`/g, '<code>$1</code>');

/** A field's type, in words, from its JSON Schema. */
function typeText(property: Record<string, any>): string {
  if (property.const !== undefined) return `<code>${escapeHtml(JSON.stringify(property.const))}</code>`;
  if (Array.isArray(property.enum)) return `one of ${property.enum.map((v: unknown) => `<code>${escapeHtml(JSON.stringify(v))}</code>`).join(', ')}`;
  if (Array.isArray(property.anyOf)) return property.anyOf.map(typeText).join(' or ');
  const limits: string[] = [];
  if (property.minLength !== undefined) limits.push(`≥ ${property.minLength} characters`);
  if (property.maxLength !== undefined) limits.push(`≤ ${property.maxLength} characters`);
  if (property.minimum !== undefined && property.minimum > Number.MIN_SAFE_INTEGER) limits.push(`≥ ${property.minimum}`);
  if (property.maximum !== undefined && property.maximum < Number.MAX_SAFE_INTEGER) limits.push(`≤ ${property.maximum}`);
  const typeName = Array.isArray(property.type) ? property.type.join(' or ') : property.type;
  const base =
    property.type === 'array'
      ? `array of ${property.items ? typeText(property.items) : 'values'}`
      : property.type === 'object'
        ? 'object'
        : escapeHtml(String(typeName ?? 'any'));
  return limits.length ? `${base} (${limits.join(', ')})` : base;
}

function fieldRows(json: Record<string, any>, notes: (field: string, property: Record<string, any>) => string | undefined, prefix = ''): string {
  const required = new Set<string>(json.required ?? []);
  return Object.entries<Record<string, any>>(json.properties ?? {})
    .map(([field, property]) => {
      const row = `<tr><td><code>${prefix}${escapeHtml(field)}</code></td><td>${typeText(property)}</td><td>${required.has(field) ? 'yes' : 'no'}</td><td>${prose(notes(field, property))}</td></tr>`;
      return property.type === 'object' && property.properties ? row + fieldRows(property, (_f, p) => p.description, `${prefix}${field}.`) : row;
    })
    .join('');
}

const table = (rows: string) => `<table><thead><tr><th>field</th><th>type</th><th>required</th><th>meaning</th></tr></thead><tbody>${rows}</tbody></table>`;

/** The user-facing page: every command and event with its fields, the close codes, a worked session. */
export function renderProtocolPage(): string {
  const commands = commandSchemas()
    .map((schema) => {
      const type = typeOf(schema);
      const json = commandJsonSchema(schema);
      return `<section id="${escapeHtml(type)}"><h3><code>${escapeHtml(type)}</code></h3><p>${prose(COMMAND_NOTES[type]?.summary)}</p>${table(fieldRows(json, (_f, p) => p.description))}</section>`;
    })
    .join('\n');
  const events = RenderEvents.map((schema) => {
    const type = typeOf(schema as unknown as z.ZodObject);
    const json = eventJsonSchema(schema as unknown as z.ZodObject);
    return `<section id="${escapeHtml(type)}"><h3><code>${escapeHtml(type)}</code></h3><p>${prose(schema.description)}</p>${table(fieldRows(json, (f, p) => p.description ?? (f === 'type' ? 'The event' : undefined)))}</section>`;
  }).join('\n');
  const worked = WORKED_SESSION.map(
    ({ direction, message, note }) =>
      `<tr><td>${direction === 'send' ? '→ send' : '← receive'}</td><td><code>${escapeHtml(JSON.stringify(message))}</code></td><td>${prose(note)}</td></tr>`,
  ).join('');
  const visitorMessage = z.toJSONSchema(VisitorMessageCommand, { target: 'draft-7', io: 'input' }) as Record<string, any>;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Render protocol · Presence</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:980px;margin:2rem auto;padding:0 1rem;color:#1b1f24}
code{font:13px ui-monospace,monospace;background:#f3f4f6;padding:0 .25em;border-radius:3px;word-break:break-word}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}th,td{border:1px solid #d5d8dc;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f7f8fa}td:first-child{white-space:nowrap}h2{margin-top:2.5rem;border-bottom:1px solid #d5d8dc}section h3{margin-bottom:.2rem}h3 code{font-size:1.05em}nav a{margin-right:.6rem}
</style></head><body>
<h1>Render protocol</h1>
<p>In render mode your server drives the avatar over one WebSocket per session. Open the session's <code>ws_url</code> exactly as <code>POST /v1/sessions</code> returned it
(it carries a secret token; append <code>&amp;sample_rate=&lt;rate&gt;</code> to choose the audio rate), wait for <code>session.state_updated</code>, then send commands.
A new connection to the same session replaces the old one (closed with ${CLOSE_REPLACED}).
The same protocol as an AsyncAPI 3 document: <a href="/asyncapi.json">/asyncapi.json</a>. The HTTP API: <a href="/docs">/docs</a>.</p>
<p>Audio is PCM signed 16-bit little-endian mono at ${SAMPLE_RATES.join(', ')} Hz (default ${DEFAULT_SAMPLE_RATE}), in pieces of any size (about 20 ms to 1 s) as base64 in
<code>agent.speak</code> or as raw binary frames of at most ${MAX_FRAME_BYTES} bytes; an odd trailing byte is carried into the next piece. Audio may be sent faster than real time; at most
${MAX_QUEUED_SECONDS} seconds may wait to play (more is refused with an <code>error</code> of type <code>queue_full</code>).
Utterances are named by the <code>event_id</code> of the message that opened them (generated if absent); every event about one carries it as <code>source_event_id</code>.
Expression cues: ${CUES.map((c) => `<code>${c}</code>`).join(', ')}. Cameras: ${CAMERA_CHOICES.map((c) => `<code>${c}</code>`).join(', ')}.</p>
<nav><p><strong>Commands:</strong> ${renderCommandTypes()
    .map((c) => `<a href="#${c}">${c}</a>`)
    .join(' ')}</p>
<p><strong>Events:</strong> ${renderEventTypes()
    .map((e) => `<a href="#${e}">${e}</a>`)
    .join(' ')}</p>
<p><a href="#close-codes">Close codes</a> <a href="#limits">Limits</a> <a href="#worked-session">A worked session</a></p></nav>
<h2 id="commands">Commands you send</h2>
<p>JSON text frames with a <code>type</code>. A binary frame is raw audio, the same as <code>agent.speak</code> without text.
In conversation mode, <code>POST /v1/sessions/{id}/commands</code> also takes <code>${escapeHtml(String(visitorMessage.properties?.type?.const))}</code> (a visitor turn, text up to ${visitorMessage.properties?.text?.maxLength} characters).</p>
${commands}
<h2 id="events">Events you receive</h2>
<p>Every event has its own <code>event_id</code>.</p>
${events}
<h2 id="close-codes">Close codes</h2>
<table><thead><tr><th>code</th><th>meaning</th></tr></thead><tbody>${CLOSE_CODES.map((c) => `<tr><td>${c.code}</td><td>${prose(c.meaning)}</td></tr>`).join('')}</tbody></table>
<h2 id="limits">Limits</h2>
<p>Everything a caller can grow is bounded; a command past a bound is refused whole with an <code>error</code> of type <code>queue_full</code>, and nothing else changes.</p>
<table><thead><tr><th>what</th><th>at most</th></tr></thead><tbody>${LIMITS.map((l) => `<tr><td>${prose(l.what)}</td><td>${prose(l.limit)}</td></tr>`).join('')}</tbody></table>
<h2 id="worked-session">A worked session</h2>
<p>One reply as caller audio, one voiced by the service and cut by a barge-in, a camera cut, then the session is stopped.</p>
<table><thead><tr><th></th><th>message</th><th>note</th></tr></thead><tbody>${worked}</tbody></table>
</body></html>`;
}

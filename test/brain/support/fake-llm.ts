/**
 * A local stand-in for an OpenAI-compatible chat-completions server (OpenAI, Ollama, vLLM,
 * llama.cpp): `POST /v1/chat/completions`, streamed as server-sent events exactly as those servers
 * send them (`data: {chat.completion.chunk}` lines, then `data: [DONE]`), or as one JSON answer when
 * `stream` is false. Each test scripts what the "model" says and how fast.
 */
import http from 'node:http';

export interface Step {
  /** Text of one chunk. */
  text: string;
  /** Wait before sending it, ms. */
  delayMs?: number;
}

export type Behaviour =
  | { kind: 'stream'; steps: Step[] }
  | { kind: 'json'; content: string; delayMs?: number }
  | { kind: 'error'; status: number }
  | { kind: 'hang' };

export interface FakeLlm {
  url: string;
  requests: Array<{ body: any; headers: http.IncomingHttpHeaders; at: number }>;
  /** What the next chat requests get (streamed and plain answers separately). */
  stream: Behaviour;
  plain: Behaviour;
  /** When set, what a request gets, read from its body (undefined: `stream` or `plain`). */
  respond?: (body: any) => Behaviour | undefined;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startFakeLlm(): Promise<FakeLlm> {
  const fake: Omit<FakeLlm, 'url' | 'close'> = {
    requests: [],
    stream: { kind: 'stream', steps: [{ text: 'Hello.' }] },
    plain: { kind: 'json', content: '{}' },
  };
  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    const body = JSON.parse(raw);
    fake.requests.push({ body, headers: req.headers, at: Date.now() });
    const behaviour = fake.respond?.(body) ?? (body.stream ? fake.stream : fake.plain);
    if (behaviour.kind === 'hang') return; // never answers
    if (behaviour.kind === 'error') {
      res
        .writeHead(behaviour.status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'model crashed', type: 'server_error' } }));
      return;
    }
    const id = `chatcmpl-${fake.requests.length}`;
    const created = Math.floor(Date.now() / 1000);
    if (behaviour.kind === 'json') {
      if (behaviour.delayMs) await sleep(behaviour.delayMs);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({
            id,
            object: 'chat.completion',
            created,
            model: body.model,
            choices: [{ index: 0, message: { role: 'assistant', content: behaviour.content }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
          }),
        );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const chunk = (delta: object, finish: string | null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.write(chunk({ role: 'assistant', content: '' }, null));
    for (const step of behaviour.steps) {
      if (step.delayMs) await sleep(step.delayMs);
      if (res.destroyed) return;
      res.write(chunk({ content: step.text }, null));
    }
    res.write(chunk({}, 'stop'));
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as FakeLlm;
}

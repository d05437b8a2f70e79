/**
 * A local stand-in for an OpenAI-compatible embeddings server (OpenAI, Ollama, vLLM, llama.cpp,
 * text-embeddings-inference): `POST /v1/embeddings` answering exactly their JSON (`{object: "list",
 * data: [{object: "embedding", index, embedding}], model, usage}`), floats or base64 as asked.
 * Its "model" knows a few synonyms, so texts that share a meaning but no word are close, and
 * unrelated texts are not: enough to tell retrieval by meaning from retrieval by words.
 */
import crypto from 'node:crypto';
import http from 'node:http';

const DIMENSIONS = 1024;
const SYNONYMS: Record<string, string> = {
  repair: 'repair',
  repairs: 'repair',
  fix: 'repair',
  mend: 'repair',
  service: 'repair',
  bicycle: 'bike',
  bicycles: 'bike',
  bike: 'bike',
  bikes: 'bike',
  cycle: 'bike',
  'e-bikes': 'bike',
};
const STOPWORDS = new Set(['a', 'an', 'and', 'are', 'can', 'do', 'every', 'i', 'is', 'it', 'my', 'of', 'our', 'the', 'we', 'you', 'your']);

export function fakeVector(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/[a-z-]+/g) ?? []) {
    if (STOPWORDS.has(word)) continue;
    const concept = SYNONYMS[word] ?? word;
    const dimension = crypto.createHash('sha1').update(concept).digest().readUInt16BE(0) % DIMENSIONS;
    vector[dimension]! += 1;
  }
  return vector;
}

export interface FakeEmbeddings {
  url: string;
  requests: Array<{ model: string; input: string[]; encoding_format?: string }>;
  /** Answer 500 to every request while true. */
  failing: boolean;
  close(): Promise<void>;
}

export async function startFakeEmbeddings(): Promise<FakeEmbeddings> {
  const fake = { requests: [], failing: false } as unknown as FakeEmbeddings;
  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    if (fake.failing) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'model crashed', type: 'server_error' } }));
      return;
    }
    const body = JSON.parse(raw);
    const input: string[] = Array.isArray(body.input) ? body.input : [body.input];
    fake.requests.push({ model: body.model, input, encoding_format: body.encoding_format });
    const data = input.map((text, index) => {
      const vector = fakeVector(text);
      const embedding = body.encoding_format === 'base64' ? Buffer.from(Float32Array.from(vector).buffer).toString('base64') : vector;
      return { object: 'embedding', index, embedding };
    });
    const tokens = input.reduce((n, text) => n + text.split(/\s+/).length, 0);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  fake.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return fake;
}

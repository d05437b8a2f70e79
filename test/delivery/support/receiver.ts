/**
 * A real webhook receiver on 127.0.0.1 for the tests: records every request (method, URL, headers,
 * raw body) and answers as the test scripts it, one behaviour per request in order (the last repeats).
 */
import http from 'node:http';

export type Answer = { status: number; body?: string; headers?: Record<string, string> } | { hang: true } | { dribble: true; status: number } | { close: true };

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  script: Answer[];
  /** Resolves when `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(script: Answer[] = [{ status: 200 }]): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: Array<() => void> = [];
  const sockets = new Set<import('node:net').Socket>();
  const receiver = { received, script } as Receiver;
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    received.push({ method: req.method!, url: req.url!, headers: req.headers, body, at: Date.now() });
    const answer = receiver.script[Math.min(received.length - 1, receiver.script.length - 1)] ?? { status: 200 };
    for (const wake of waiters.splice(0)) wake();
    if ('hang' in answer) return;
    if ('close' in answer) return req.socket.destroy();
    if ('dribble' in answer) {
      // Headers at once, then an endless body, a byte at a time.
      res.writeHead(answer.status, { 'content-type': 'text/plain' });
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write('x'.repeat(100))), 20);
      res.on('close', () => clearInterval(timer));
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers }).end(answer.body ?? 'ok');
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  receiver.port = port;
  receiver.url = `http://127.0.0.1:${port}`;
  receiver.waitFor = async (count, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    while (received.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`expected ${count} requests, got ${received.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return received;
  };
  receiver.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

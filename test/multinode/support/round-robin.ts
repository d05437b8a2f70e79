/**
 * The smallest ordinary load balancer: a TCP proxy on 127.0.0.1 that hands each new connection to
 * the next backend in turn, knowing nothing about HTTP, sessions or WebSockets. Like nginx's
 * `proxy_next_upstream error`, a backend that refuses the connection is skipped for the next one
 * (a passive health check), so a dead node costs no request that has not reached it yet.
 */
import net from 'node:net';

export interface RoundRobin {
  url: string;
  port: number;
  /** The backends' ports, in turn order; add or remove while running. */
  backends: number[];
  /** Which backend each accepted connection went to, in order. */
  routed: number[];
  /** The next connection goes to this backend (the turn then continues after it). */
  pinNext(port: number): void;
  close(): Promise<void>;
}

export async function startRoundRobin(backends: number[] = []): Promise<RoundRobin> {
  let turn = 0;
  const sockets = new Set<net.Socket>();
  const balancer: RoundRobin = {
    url: '',
    port: 0,
    backends,
    routed: [],
    pinNext(port) {
      const at = balancer.backends.indexOf(port);
      if (at < 0) throw new Error(`no backend ${port}`);
      turn = at;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.pause();
    const attempt = (tries: number) => {
      if (!balancer.backends.length || tries >= balancer.backends.length) return client.destroy();
      const port = balancer.backends[turn % balancer.backends.length]!;
      turn = (turn + 1) % balancer.backends.length;
      const upstream = net.connect({ host: '127.0.0.1', port });
      let connected = false;
      upstream.setNoDelay(true);
      client.setNoDelay(true);
      upstream.once('connect', () => {
        connected = true;
        balancer.routed.push(port);
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
      upstream.once('error', () => {
        if (!connected) attempt(tries + 1);
      });
    };
    attempt(0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address() as net.AddressInfo;
  balancer.port = address.port;
  balancer.url = `http://127.0.0.1:${address.port}`;
  return balancer;
}

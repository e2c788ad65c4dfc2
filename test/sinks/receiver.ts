/** A scripted HTTP receiver on 127.0.0.1 that records every request it gets. */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  /** Path and query. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Reading of `now()` when the request arrived (a FakeClock in retry tests). */
  at: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface Receiver {
  url: string;
  requests: Received[];
  close(): Promise<void>;
}

/** Starts a receiver; `reply` decides each answer (by default 204). */
export async function startReceiver(reply: (req: Received, index: number) => Reply | Promise<Reply> = () => ({ status: 204 }), now: () => number = Date.now): Promise<Receiver> {
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks), at: now() };
      const index = requests.push(received) - 1;
      Promise.resolve(reply(received, index)).then(
        (r) => {
          res.writeHead(r.status, r.headers);
          res.end(r.body ?? '');
        },
        (err: unknown) => {
          res.writeHead(500);
          res.end(String(err));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

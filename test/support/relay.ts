/**
 * A TCP relay on loopback in front of a simulated portal, standing in for the network between the
 * exporter and the portal: it can hold the bytes of the first connection it takes for a while (a
 * slow DNS answer, a lost SYN, a proxy), and stop listening (a refused port) and listen again on
 * the same port, so the portal keeps one identity throughout.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface Relay {
  /** The portal's base URL through the relay. */
  readonly baseUrl: string;
  /** Stops listening and cuts every connection: the port refuses connections. */
  refuse(): Promise<void>;
  /** Listens again on the same port. */
  accept(): Promise<void>;
  close(): Promise<void>;
}

/** A relay to the portal at `baseUrl` (http://127.0.0.1:PORT/...); the first connection's bytes wait `holdFirstMs` before they go on. */
export async function startRelay(baseUrl: string, holdFirstMs = 0): Promise<Relay> {
  const target = new URL(baseUrl);
  const sockets = new Set<Socket>();
  let held = false;
  const track = (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };
  const server: Server = createServer((client) => {
    track(client);
    client.pause();
    const hold = held ? 0 : holdFirstMs;
    held = true;
    setTimeout(() => {
      const up = connect(Number(target.port), target.hostname, () => {
        client.pipe(up);
        up.pipe(client);
        client.resume();
      });
      track(up);
      up.once('error', () => client.destroy());
      up.once('close', () => client.destroy());
      client.once('error', () => up.destroy());
      client.once('close', () => up.destroy());
    }, hold);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const port = (server.address() as { port: number }).port;
  const refuse = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return {
    baseUrl: `http://127.0.0.1:${port}${target.pathname}`,
    refuse,
    accept: () => listen(port),
    close: () => (server.listening ? refuse() : Promise.resolve()),
  };
}

/**
 * What the network tests stand in front of the simulated portal, on loopback ports: an HTTPS front
 * whose certificate a private CA made here by openssl signed (as a corporate CA signs an internal
 * portal's, or a TLS-inspecting proxy's), and Debian's tinyproxy, its log read back. Each is
 * started by the test and stopped by it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { connect, createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A private CA and a certificate it signed for 127.0.0.1, in a directory of their own. */
export interface PrivateCa {
  dir: string;
  /** The CA's certificate (PEM): what NODE_EXTRA_CA_CERTS names to trust it. */
  caFile: string;
  keyFile: string;
  certFile: string;
  remove(): void;
}

/** Makes a CA and a certificate it signs for 127.0.0.1, both valid for two days. */
function privateCa(): PrivateCa {
  const dir = mkdtempSync(join(tmpdir(), 'private-ca-'));
  const file = (name: string) => join(dir, name);
  const run = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run('req', '-x509', ...ec, '-days', '2', '-subj', '/CN=Test Private CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign', '-keyout', file('ca.key'), '-out', file('ca.crt'));
  run('req', ...ec, '-subj', '/CN=127.0.0.1', '-keyout', file('portal.key'), '-out', file('portal.csr'));
  writeFileSync(file('portal.ext'), 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  run('x509', '-req', '-in', file('portal.csr'), '-CA', file('ca.crt'), '-CAkey', file('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', file('portal.ext'), '-out', file('portal.crt'));
  return { dir, caFile: file('ca.crt'), keyFile: file('portal.key'), certFile: file('portal.crt'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** An HTTPS front of a plain HTTP server: what reached it, and its TLS connections (accepted, and refused by the client). */
export interface HttpsFront {
  /** `https://127.0.0.1:PORT` */
  origin: string;
  /** The path and query of each request that reached the portal through the front. */
  paths: string[];
  /** TLS connections whose handshake completed. */
  connections: number;
  /** TLS connections the client gave up during the handshake (a certificate it did not trust). */
  refused: number;
  /** How long the front holds each request before passing it on. */
  delayMs: number;
  close(): Promise<void>;
}

/** Starts an HTTPS front on a loopback port with `ca`'s certificate, passing each request to `target` (an http:// origin). */
async function httpsFront(ca: PrivateCa, target: string): Promise<HttpsFront> {
  const to = new URL(target);
  const pass = (req: IncomingMessage, res: ServerResponse) => {
    const upstream = httpRequest({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  };
  const server: Server = createServer({ key: readFileSync(ca.keyFile), cert: readFileSync(ca.certFile) }, (req, res) => {
    front.paths.push(req.url ?? '');
    setTimeout(() => pass(req, res), front.delayMs);
  });
  server.on('secureConnection', () => front.connections++);
  server.on('tlsClientError', () => front.refused++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const front: HttpsFront = {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    paths: [],
    connections: 0,
    refused: 0,
    delayMs: 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return front;
}

/** A free loopback port (closed again: the caller binds it at once). */
async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Debian's tinyproxy on a loopback port: its URL and the lines of its log so far. */
export interface Tinyproxy {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** The requests it was asked to relay so far: `CONNECT HOST:PORT` or `GET http://…`, one per line of its log. */
  requests(): string[];
  stop(): Promise<void>;
}

/** Starts tinyproxy in the foreground on a loopback port, logging every request it relays to a file the test reads. */
export async function startTinyproxy(): Promise<Tinyproxy> {
  const dir = mkdtempSync(join(tmpdir(), 'tinyproxy-'));
  const log = join(dir, 'tinyproxy.log');
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    writeFileSync(
      join(dir, 'tinyproxy.conf'),
      // No ConnectPort line: CONNECT to any port (the front's is random). Info logs each request line.
      [`Port ${port}`, 'Listen 127.0.0.1', 'Allow 127.0.0.1', 'Timeout 30', `LogFile "${log}"`, 'LogLevel Info', 'MaxClients 50', 'DisableViaHeader Yes', ''].join('\n'),
    );
    writeFileSync(log, '');
    const child: ChildProcess = spawn('tinyproxy', ['-d', '-c', join(dir, 'tinyproxy.conf')], { stdio: 'ignore' });
    const up = await listening(port, child);
    if (!up) {
      if (attempt < 3) continue;
      throw new Error('tinyproxy did not start');
    }
    return {
      url: `http://127.0.0.1:${port}`,
      requests: () =>
        readFileSync(log, 'utf8')
          .split('\n')
          .flatMap((line) => {
            const m = /Request \(file descriptor \d+\): (\S+ \S+)/.exec(line);
            return m ? [m[1]!] : [];
          }),
      stop: async () => {
        if (child.exitCode === null) {
          child.kill('SIGTERM');
          await new Promise((resolve) => child.once('exit', resolve));
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}

/** Whether something accepts connections on `port` within 5 s (false when `child` exits first). */
async function listening(port: number, child: ChildProcess): Promise<boolean> {
  const until = Date.now() + 5_000;
  while (Date.now() < until && child.exitCode === null) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** A portal served over HTTPS: the front, the CA that signed its certificate, and the base URL to read it at. */
export interface PortalOverHttps {
  ca: PrivateCa;
  front: HttpsFront;
  /** The portal's base URL through the front (`https://127.0.0.1:PORT/public-api/v1`). */
  base: string;
  close(): Promise<void>;
}

/** An HTTPS front, with a certificate a new private CA signed, before the portal at `baseUrl` (plain HTTP). */
export async function portalOverHttps(baseUrl: string): Promise<PortalOverHttps> {
  const ca = privateCa();
  const target = new URL(baseUrl);
  const front = await httpsFront(ca, target.origin);
  return {
    ca,
    front,
    base: `${front.origin}${target.pathname}`,
    close: async () => {
      await front.close();
      ca.remove();
    },
  };
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { collectDefaultMetrics, Registry, type RegistryContentType } from 'prom-client';
import { CATALOGUE } from '../collect/catalogue.js';
import type { Logger } from '../core/log.js';
import { ListenError } from '../errors.js';
import { contentType, renderText, type TextFormat } from '../metrics/render.js';
import type { Sample } from '../metrics/sample.js';
import { BasicAuthChecker, clientCertAccepted, clientCertOptions, WebConfigWatcher, type LoadedWebConfig } from './web-config.js';

/** What the HTTP server serves from; scrapes never reach the portal. */
export interface MetricsSource {
  samples(): Sample[];
  readonly ready: boolean;
  /** A few words for the landing page. */
  describe(): { portals: string[]; intervalSeconds: number; lastCycle?: string };
  /** While the first collection waits for the portal's budget (other processes' requests fill the window): until when, ISO 8601. */
  waitingUntil?(): string | undefined;
  /** Why collection stopped, while it is stopped (the ledger cannot record a claim: a full disk); /metrics keeps the last values while fresh. */
  stopped?(): string | undefined;
}

/** Picks OpenMetrics when the scraper asks for it (Prometheus does), else the classic text format. */
function negotiate(accept: string | undefined): TextFormat {
  return accept && /application\/openmetrics-text/i.test(accept) ? 'openmetrics' : 'prometheus';
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The process's own `process_*` and `nodejs_*` metrics (prom-client's defaults), one registry per
 * text format, created once for the process when first scraped. Not part of `once` output.
 */
const LINT_FAILING_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];
const processRegistries = new Map<TextFormat, Registry<RegistryContentType>>();
function processRegistry(format: TextFormat): Registry<RegistryContentType> {
  let registry = processRegistries.get(format);
  if (!registry) {
    // prom-client's typings omit the constructor that takes the content type.
    const RegistryWithType = Registry as unknown as new (type: string) => Registry<RegistryContentType>;
    registry = new RegistryWithType(contentType(format));
    collectDefaultMetrics({ register: registry });
    // Gauges named like counters (promtool refuses them); nodejs_active_{handles,requests,resources} by type remain.
    for (const name of LINT_FAILING_DEFAULTS) registry.removeSingleMetric(name);
    processRegistries.set(format, registry);
  }
  return registry;
}

/** The collection's exposition followed by the process metrics, in one document of `format`. */
async function renderWithProcessMetrics(samples: readonly Sample[], format: TextFormat): Promise<string> {
  const [own, proc] = await Promise.all([renderText(samples, format, CATALOGUE), processRegistry(format).metrics()]);
  if (format === 'openmetrics') return own.replace(/# EOF\n?$/, '') + proc;
  return own.endsWith('\n\n') || own === '' ? own + proc : own + '\n' + proc;
}

const LISTEN_FAILURES: Readonly<Record<string, string>> = {
  EADDRINUSE: 'the address is already in use (EADDRINUSE): stop what uses it or give another port',
  EADDRNOTAVAIL: 'no interface of this machine has that address (EADDRNOTAVAIL): give one of its addresses, or 0.0.0.0,',
  EACCES: 'permission denied (EACCES): ports below 1024 need privileges; give a port from 1024 up',
  ENOTFOUND: 'the host name does not resolve (ENOTFOUND): give an IP address',
  EAI_AGAIN: 'the host name does not resolve (EAI_AGAIN): give an IP address',
};

/**
 * A ListenError naming `host:port` and `--listen` when `err` is the system refusing to bind
 * (or resolve) that address; any other error unchanged.
 */
export function asListenError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string' || !(code in LISTEN_FAILURES)) return err;
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  return new ListenError(address, code, `cannot listen on ${address}: ${LISTEN_FAILURES[code]} with --listen (POSTURE_LISTEN).`, { cause: err });
}

/** How long a stopping server lets requests in flight finish before it cuts their connections. */
const CLOSE_GRACE_MS = 2_000;

/** Options of the metrics server. */
export interface MetricsServerOptions {
  host: string;
  port: number;
  logger: Logger;
  /** A web configuration file (exporter toolkit format): TLS, basic auth, headers; re-read when it changes. */
  webConfigFile?: string;
  /** How often, at most, the web config files are checked for changes (ms). @default 1000 */
  webConfigRecheckMs?: number;
}

/**
 * Starts the `/metrics`, `/` and `/healthz` server: plain HTTP, or as the web config file says
 * (HTTPS only when it has `tls_server_config`; basic auth on every path when it has users).
 * A bad web config file at start throws a ConfigError naming the key.
 */
export async function startMetricsServer(source: MetricsSource, options: MetricsServerOptions): Promise<{ server: Server | HttpsServer; url: string; close(): Promise<void> }> {
  const { logger } = options;
  const auth = new BasicAuthChecker();
  let server: Server | HttpsServer;
  const watcher = options.webConfigFile
    ? new WebConfigWatcher(options.webConfigFile, {
        recheckMs: options.webConfigRecheckMs,
        onReload: (loaded) => {
          if (loaded.tlsOptions && loaded.config.tls) {
            const https = server as HttpsServer & { requestCert: boolean; rejectUnauthorized: boolean };
            https.setSecureContext(loaded.tlsOptions);
            Object.assign(https, clientCertOptions(loaded.config.tls.clientAuthType));
          }
          logger.info('web config reloaded', { file: options.webConfigFile, tls: Boolean(loaded.config.tls), users: loaded.config.basicAuthUsers.size });
        },
        onError: (err) => logger.error('web config not reloaded: keeping the last good one', { reason: err.message }),
      })
    : undefined;
  const initial: LoadedWebConfig | undefined = watcher?.current();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const web = watcher?.current().config;
    if (web) for (const [name, value] of Object.entries(web.headers)) res.setHeader(name, value);
    if (web && web.basicAuthUsers.size > 0 && !(await auth.check(web.basicAuthUsers, req.headers.authorization))) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="posture-exporter", charset="UTF-8"', 'content-type': 'text/plain' }).end('Unauthorized\n');
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    if (path === '/metrics') {
      const format = negotiate(req.headers.accept);
      const body = await renderWithProcessMetrics(source.samples(), format);
      res.writeHead(200, { 'content-type': contentType(format), 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    if (path === '/healthz') {
      const stopped = source.stopped?.();
      const waiting = source.ready ? undefined : source.waitingUntil?.();
      // Still 200: the process serves its last values, and a restart would not free a disk.
      res.writeHead(200, { 'content-type': 'text/plain' }).end(stopped ? `ok (collection stopped: ${stopped})\n` : source.ready ? 'ok\n' : waiting ? `ok (first collection pending: waiting for the portal's budget until ${waiting})\n` : 'ok (first collection pending)\n');
      return;
    }
    if (path === '/') {
      const d = source.describe();
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html>
<html><head><meta charset="utf-8"><title>posture-exporter</title></head>
<body><h1>posture-exporter</h1>
<p>Security posture metrics for Prometheus: Vitals funnel, open alerts, device totals.</p>
<p>Portals: ${d.portals.map(escapeHtml).join(', ') || '(none)'}; collected every ${d.intervalSeconds} s (cached: scrapes never call the portal)${d.lastCycle ? `; last cycle ${escapeHtml(d.lastCycle)}` : ''}.</p>
<ul><li><a href="metrics">/metrics</a></li><li><a href="healthz">/healthz</a></li></ul>
</body></html>
`);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics\n');
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err) => {
      logger.error('request failed', { path: req.url, err });
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error\n');
    });
  };
  const tls = initial?.config.tls;
  if (initial?.tlsOptions && tls) {
    const https = createHttpsServer({ ...initial.tlsOptions, ...clientCertOptions(tls.clientAuthType) }, onRequest);
    // Before the TLS handshake is set up, so a rotated certificate already serves this connection.
    https.prependListener('connection', () => watcher!.current());
    https.on('secureConnection', (socket: TLSSocket) => {
      const type = watcher!.current().config.tls?.clientAuthType ?? 'NoClientCert';
      const cert = socket.getPeerCertificate();
      if (!clientCertAccepted(type, { hasCert: cert !== null && Object.keys(cert).length > 0, authorized: socket.authorized })) socket.destroy();
    });
    https.on('tlsClientError', (err) => logger.debug('TLS handshake failed', { reason: err.message }));
    server = https;
  } else {
    server = createServer(onRequest);
  }
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    const refused = (err: Error) => reject(asListenError(err, options.host, options.port));
    server.once('error', refused);
    server.listen(options.port, options.host, () => {
      server.off('error', refused);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    server,
    url: `${tls ? 'https' : 'http'}://${host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        // A request in flight keeps its keep-alive connection open once answered (for up to
        // keepAliveTimeout, 65 s): close connections as they go idle, and all of them after a grace.
        const sweep = setInterval(() => server.closeIdleConnections(), 100);
        const cut = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
        server.close(() => {
          clearInterval(sweep);
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

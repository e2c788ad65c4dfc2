import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../core/log.js';
import { contentType, renderText, type TextFormat } from '../metrics/render.js';
import type { Sample } from '../metrics/sample.js';

/** What the HTTP server serves from; scrapes never reach the portal. */
export interface MetricsSource {
  samples(): Sample[];
  readonly ready: boolean;
  /** A few words for the landing page. */
  describe(): { portals: string[]; intervalSeconds: number; lastCycle?: string };
}

/** Picks OpenMetrics when the scraper asks for it (Prometheus does), else the classic text format. */
export function negotiate(accept: string | undefined): TextFormat {
  return accept && /application\/openmetrics-text/i.test(accept) ? 'openmetrics' : 'prometheus';
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Starts the `/metrics`, `/` and `/healthz` server. */
export async function startMetricsServer(source: MetricsSource, options: { host: string; port: number; logger: Logger }): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const { logger } = options;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    if (path === '/metrics') {
      const format = negotiate(req.headers.accept);
      const body = await renderText(source.samples(), format);
      res.writeHead(200, { 'content-type': contentType(format), 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(source.ready ? 'ok\n' : 'ok (first collection pending)\n');
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
  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      logger.error('request failed', { path: req.url, err });
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error\n');
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    server,
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

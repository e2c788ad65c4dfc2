/**
 * The files the stack writes before it starts Prometheus and the exporter: Prometheus's
 * configuration, Grafana's provisioning and the exporter's web config.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import bcrypt from 'bcryptjs';
import { parseDocument } from 'yaml';

/** Repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The template of the stack's prometheus.yml. */
export const PROMETHEUS_TEMPLATE = join(REPO_ROOT, 'infra/stack/prometheus.yml');
/** The Grafana provisioning files the stack copies with its URLs. */
export const GRAFANA_PROVISIONING = join(REPO_ROOT, 'infra/grafana/provisioning');
/** The generated dashboards, read in place. */
export const GRAFANA_DASHBOARDS = join(REPO_ROOT, 'infra/grafana/dashboards');

/**
 * The stack's prometheus.yml: `template` (infra/stack/prometheus.yml) with the intervals set, the
 * scrape target replaced by `exporter` (HOST:PORT) and relative rule files made absolute against
 * `templateDir`, so the repository's rules are read in place (edit, then POST /-/reload).
 */
export function renderPrometheusConfig(
  template: string,
  opts: { exporter: string; scrapeIntervalSeconds: number; templateDir: string; web?: { caFile: string; username: string; passwordFile: string } },
): string {
  const doc = parseDocument(template);
  doc.setIn(['global', 'scrape_interval'], `${opts.scrapeIntervalSeconds}s`);
  doc.setIn(['global', 'evaluation_interval'], `${opts.scrapeIntervalSeconds}s`);
  const rules = (doc.getIn(['rule_files']) as { items?: Array<{ value?: unknown }> } | undefined)?.items ?? [];
  rules.forEach((item, i) => {
    const file = String(item.value ?? item);
    doc.setIn(['rule_files', i], isAbsolute(file) ? file : resolve(opts.templateDir, file));
  });
  doc.setIn(['scrape_configs', 0, 'static_configs', 0, 'targets'], doc.createNode([opts.exporter], { flow: true }));
  if (opts.web) {
    // The exporter behind a web config (docs/web-config.md): https, basic auth, its self-signed certificate as the CA.
    doc.setIn(['scrape_configs', 0, 'scheme'], 'https');
    doc.setIn(['scrape_configs', 0, 'basic_auth'], doc.createNode({ username: opts.web.username, password_file: opts.web.passwordFile }));
    doc.setIn(['scrape_configs', 0, 'tls_config'], doc.createNode({ ca_file: opts.web.caFile }));
  }
  if (doc.errors.length) throw new Error(`${PROMETHEUS_TEMPLATE}: ${doc.errors[0]!.message}`);
  return String(doc);
}

/** Grafana provisioning files (relative path → text) from infra/grafana/provisioning, pointed at `prometheusUrl` and `dashboardsDir`. */
export function renderGrafanaProvisioning(provisioningDir: string, opts: { prometheusUrl: string; dashboardsDir: string; scrapeIntervalSeconds?: number }): Record<string, string> {
  const datasources = parseDocument(readFileSync(join(provisioningDir, 'datasources/prometheus.yml'), 'utf8'));
  datasources.setIn(['datasources', 0, 'url'], opts.prometheusUrl);
  if (opts.scrapeIntervalSeconds !== undefined) datasources.setIn(['datasources', 0, 'jsonData', 'timeInterval'], `${opts.scrapeIntervalSeconds}s`);
  const dashboards = parseDocument(readFileSync(join(provisioningDir, 'dashboards/posture.yml'), 'utf8'));
  dashboards.setIn(['providers', 0, 'options', 'path'], opts.dashboardsDir);
  return { 'datasources/prometheus.yml': String(datasources), 'dashboards/posture.yml': String(dashboards) };
}

/** Files the exporter's web config needs: a self-signed certificate for 127.0.0.1, a password and its bcrypt hash. */
export interface StackWebConfig {
  readonly webConfigFile: string;
  readonly certFile: string;
  readonly passwordFile: string;
  readonly username: string;
  readonly password: string;
}

/** Makes the web config of `--web-config` in `dir`: openssl for the certificate, bcryptjs for the hash. */
export async function makeWebConfig(dir: string): Promise<StackWebConfig> {
  const certFile = join(dir, 'exporter.crt');
  const keyFile = join(dir, 'exporter.key');
  const openssl = spawn('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '7', '-subj', '/CN=posture-exporter stack', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', keyFile, '-out', certFile], { stdio: ['ignore', 'ignore', 'pipe'] });
  let opensslErr = '';
  openssl.stderr!.on('data', (d: Buffer) => (opensslErr += d.toString('utf8')));
  const code = await new Promise<number | null>((r) => {
    openssl.once('error', () => r(-1));
    openssl.once('close', (c) => r(c));
  });
  if (code !== 0) throw new Error(`openssl could not make the exporter's certificate (exit ${String(code)}): ${opensslErr.trim().split('\n').slice(-1)[0] ?? ''}`);
  const username = 'prometheus';
  const password = randomBytes(18).toString('base64url');
  const passwordFile = join(dir, 'exporter-password');
  writeFileSync(passwordFile, password, { mode: 0o600 });
  const webConfigFile = join(dir, 'web-config.yml');
  writeFileSync(
    webConfigFile,
    [
      '# Written by npm run stack -- --web-config (docs/web-config.md).',
      'tls_server_config:',
      `  cert_file: ${certFile}`,
      `  key_file: ${keyFile}`,
      'http_server_config:',
      '  headers:',
      '    X-Content-Type-Options: nosniff',
      'basic_auth_users:',
      `  ${username}: '${await bcrypt.hash(password, 10)}'`,
      '',
    ].join('\n'),
  );
  return { webConfigFile, certFile, passwordFile, username, password };
}

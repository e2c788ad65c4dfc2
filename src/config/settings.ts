/**
 * The settings table: every setting's key, environment variable, flag, default and meaning.
 * The loader, `check-config`, `--help` and the README's configuration table all derive from it.
 */

/** Where a setting applies: once for the process, or per portal (in a config file's `portals`). */
export type Scope = 'global' | 'portal';

export interface SettingDef {
  /** Key in a config file (snake_case); the env name is `POSTURE_` + upper case; the flag is `--` + kebab case. */
  readonly key: string;
  readonly scope: Scope;
  readonly kind: 'string' | 'int' | 'list' | 'secret' | 'enum';
  /** The default as documented (undefined: none; a string explains a derived default). */
  readonly default?: string | number;
  readonly values?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  /** Whether it may be given as a command-line flag (secrets never are: flags show in `ps`). */
  readonly flag: boolean;
  readonly doc: string;
  /** Only for settings named outside the POSTURE_ namespace. */
  readonly env?: string;
}

export const SETTINGS = [
  { key: 'config_file', scope: 'global', kind: 'string', flag: true, env: 'POSTURE_CONFIG_FILE', doc: 'A JSON or YAML file with settings and, for several portals, a `portals` list (flag `--config`).' },
  { key: 'config', scope: 'global', kind: 'string', flag: false, doc: 'The same as the config file, as inline JSON.' },
  { key: 'base_url', scope: 'portal', kind: 'string', flag: true, doc: 'The portal\'s API base URL, ending in `/public-api/v1`. Plain `http` only for loopback addresses. Unset (and no Cloud ID): `npm start` runs the simulated portal.' },
  { key: 'cloud_id', scope: 'portal', kind: 'string', flag: true, doc: 'The organisation\'s Cloud ID (a DNS label); with `POSTURE_API_HOST` gives `https://<cloud_id>.<host>/public-api/v1`.' },
  { key: 'api_host', scope: 'portal', kind: 'string', flag: true, doc: 'The portal\'s API host, used with `POSTURE_CLOUD_ID`.' },
  { key: 'api_key', scope: 'portal', kind: 'secret', flag: false, doc: 'The API key (prefer a file or a secret store).' },
  { key: 'api_key_file', scope: 'portal', kind: 'string', flag: true, doc: 'A file holding the API key (surrounding whitespace ignored).' },
  { key: 'api_key_ssm_parameter', scope: 'portal', kind: 'string', flag: true, doc: 'An SSM Parameter Store SecureString holding the key (fetched once, cached).' },
  { key: 'api_key_secret_id', scope: 'portal', kind: 'string', flag: true, doc: 'A Secrets Manager secret holding the key (fetched once, cached).' },
  { key: 'api_key_header', scope: 'portal', kind: 'string', default: 'X-Service-ApiKey', flag: true, doc: 'The header that carries the key.' },
  { key: 'portal', scope: 'portal', kind: 'string', default: 'the Cloud ID, else the base URL\'s host', flag: true, doc: 'The `portal` label on every series.' },
  { key: 'requests_per_minute', scope: 'portal', kind: 'int', default: 5, min: 1, max: 10, flag: true, doc: 'This exporter\'s share of the portal\'s budget of 10 requests per 60 s (shared by every client of the portal).' },
  { key: 'page_size', scope: 'portal', kind: 'int', default: 500, min: 1, max: 100000, flag: true, doc: 'Records per `/alerts` request; grown (up to all in one request) when the pages would not fit the budget.' },
  { key: 'vitals_tags', scope: 'portal', kind: 'list', default: '', flag: true, doc: 'Comma-separated tags: the Vitals families are also collected per tag (one request each) with a `tag` label.' },
  { key: 'interval_seconds', scope: 'global', kind: 'int', default: 300, min: 10, max: 86400, flag: true, doc: '`serve`: seconds between collections; refused at start when a cycle cannot fit the budget.' },
  { key: 'max_staleness_seconds', scope: 'global', kind: 'int', default: 'two intervals', min: 0, max: 604800, flag: true, doc: 'How long a failed source\'s last good values are still served, then dropped.' },
  { key: 'cycle_timeout_seconds', scope: 'global', kind: 'int', default: 60, min: 1, max: 3600, flag: true, doc: 'Deadline of one collection cycle (in Lambda also bounded by the invocation\'s remaining time).' },
  { key: 'connect_timeout_seconds', scope: 'global', kind: 'int', default: 10, min: 1, max: 300, flag: true, doc: 'Timeout to connect to the portal.' },
  { key: 'request_timeout_seconds', scope: 'global', kind: 'int', default: 30, min: 1, max: 600, flag: true, doc: 'Timeout for response headers, and for each wait between body chunks.' },
  { key: 'max_retries', scope: 'global', kind: 'int', default: 3, min: 0, max: 10, flag: true, doc: 'Retries of a request after 429, 502, 503 or a network error (each retry spends budget).' },
  { key: 'listen', scope: 'global', kind: 'string', default: '0.0.0.0:9877', flag: true, doc: '`serve` and `simulate`: HOST:PORT to listen on.' },
  { key: 'web_config_file', scope: 'global', kind: 'string', flag: true, doc: '`serve`: a web configuration file (the Prometheus exporter toolkit\'s format: TLS, basic auth, response headers) for `/metrics`; re-read when it changes. See [docs/web-config.md](docs/web-config.md).' },
  { key: 'log_level', scope: 'global', kind: 'enum', values: ['debug', 'info', 'warn', 'error'], default: 'info', flag: true, doc: 'Log level (JSON lines on stderr).' },
  { key: 'format', scope: 'global', kind: 'enum', values: ['prometheus', 'openmetrics', 'json'], default: 'prometheus', flag: true, doc: '`once`: output format.' },
  { key: 'push', scope: 'global', kind: 'list', default: '', values: ['otlp', 'remote_write', 'pushgateway'], flag: true, doc: 'Sinks to push to after each collection (serverless mode; `once` too): any of `otlp`, `remote_write`, `pushgateway`.' },
  { key: 'remote_write_url', scope: 'global', kind: 'string', flag: true, doc: 'Prometheus remote-write endpoint (AMP, Grafana Cloud, Mimir, VictoriaMetrics, Prometheus).' },
  { key: 'remote_write_sigv4_region', scope: 'global', kind: 'string', flag: true, doc: 'Sign remote writes with SigV4 for Amazon Managed Service for Prometheus in this region (credentials from the role).' },
  { key: 'remote_write_bearer_token', scope: 'global', kind: 'secret', flag: false, doc: 'Bearer token for remote write (prefer its SSM parameter or secret).' },
  { key: 'remote_write_bearer_token_ssm_parameter', scope: 'global', kind: 'string', flag: true, doc: 'An SSM Parameter Store SecureString holding the remote-write bearer token (fetched once, cached).' },
  { key: 'remote_write_bearer_token_secret_id', scope: 'global', kind: 'string', flag: true, doc: 'A Secrets Manager secret holding the remote-write bearer token (fetched once, cached).' },
  { key: 'remote_write_username', scope: 'global', kind: 'string', flag: true, doc: 'Basic-auth user for remote write (Grafana Cloud: the instance id).' },
  { key: 'remote_write_password', scope: 'global', kind: 'secret', flag: false, doc: 'Basic-auth password for remote write (Grafana Cloud: an access token; prefer its SSM parameter or secret).' },
  { key: 'remote_write_password_ssm_parameter', scope: 'global', kind: 'string', flag: true, doc: 'An SSM Parameter Store SecureString holding the remote-write basic-auth password (fetched once, cached).' },
  { key: 'remote_write_password_secret_id', scope: 'global', kind: 'string', flag: true, doc: 'A Secrets Manager secret holding the remote-write basic-auth password (fetched once, cached).' },
  { key: 'pushgateway_url', scope: 'global', kind: 'string', flag: true, doc: 'Pushgateway base URL; one group per portal and source, replaced on each push.' },
  { key: 'pushgateway_job', scope: 'global', kind: 'string', default: 'posture-exporter', flag: true, doc: 'The Pushgateway `job` of the groups.' },
  { key: 'lambda_margin_seconds', scope: 'global', kind: 'int', default: 10, min: 1, max: 300, flag: false, doc: 'Lambda: the cycle ends this long before the invocation\'s time runs out, leaving time to push.' },
] as const satisfies readonly SettingDef[];

export type SettingKey = (typeof SETTINGS)[number]['key'];

/** The environment variable of a setting. */
export function envName(def: SettingDef): string {
  return def.env ?? 'POSTURE_' + def.key.toUpperCase();
}

/** The command-line flag of a setting (`--config` for the config file). */
export function flagName(def: SettingDef): string {
  return def.key === 'config_file' ? 'config' : def.key.replace(/_/g, '-');
}

export const SETTING_BY_KEY: Readonly<Record<SettingKey, SettingDef>> = Object.fromEntries(
  SETTINGS.map((s) => [s.key, s]),
) as Record<SettingKey, SettingDef>;

/**
 * The settings table: every setting's key, environment variable, flag, default and meaning.
 * The loader, `check-config`, `--help` and the README's configuration table all derive from it.
 */

import { INTERVAL_BOUNDS, intervalSettingDefs } from './intervals.js';
import { EXAMPLE_RUNBOOK_URL } from './runbook.js';

/** Where a setting applies: once for the process, or per portal (in a config file's `portals`). */
export type Scope = 'global' | 'portal';

export interface SettingDef {
  /** Key in a config file (snake_case); the env name is `POSTURE_` + upper case; the flag is `--` + kebab case. */
  readonly key: string;
  readonly scope: Scope;
  /**
   * `durations`: severity=duration pairs, or a mapping of them in a config file (src/config/alert-slas.ts);
   * `ints`: whole numbers from `min` to `max`, comma-separated (a list in a config file), each once.
   */
  readonly kind: 'string' | 'int' | 'list' | 'secret' | 'enum' | 'durations' | 'ints';
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

/** The sinks serverless mode can push to (the `push` setting's values). */
export const SINK_NAMES = ['otlp', 'remote_write', 'pushgateway'] as const;
/** Where serverless mode can push. */
export type SinkName = (typeof SINK_NAMES)[number];

/**
 * The two settings that point at a secret kept in a store instead of given as a value: an SSM
 * Parameter Store SecureString and a Secrets Manager secret (each fetched once and cached).
 */
function storedSecret<K extends string, S extends Scope>(key: K, scope: S, what: string) {
  return [
    { key: `${key}_ssm_parameter`, scope, kind: 'string', flag: true, doc: `An SSM Parameter Store SecureString holding ${what} (fetched once, cached).` },
    { key: `${key}_secret_id`, scope, kind: 'string', flag: true, doc: `A Secrets Manager secret holding ${what} (fetched once, cached).` },
  ] as const;
}

export const SETTINGS = [
  { key: 'config_file', scope: 'global', kind: 'string', flag: true, env: 'POSTURE_CONFIG_FILE', doc: 'A JSON or YAML file with settings and, for several portals, a `portals` list (flag `--config`).' },
  { key: 'config', scope: 'global', kind: 'string', flag: false, doc: 'The same as the config file, as inline JSON.' },
  { key: 'base_url', scope: 'portal', kind: 'string', flag: true, doc: 'The portal\'s API base URL, ending in `/public-api/v1`. Plain `http` only for loopback addresses. Unset (and no Cloud ID): `npm start` runs the simulated portal.' },
  { key: 'cloud_id', scope: 'portal', kind: 'string', flag: true, doc: 'The organisation\'s Cloud ID (a DNS label); with `POSTURE_API_HOST` gives `https://<cloud_id>.<host>/public-api/v1`.' },
  { key: 'api_host', scope: 'portal', kind: 'string', flag: true, doc: 'The portal\'s API host, used with `POSTURE_CLOUD_ID`.' },
  { key: 'api_key', scope: 'portal', kind: 'secret', flag: false, doc: 'The API key (prefer a file or a secret store).' },
  { key: 'api_key_file', scope: 'portal', kind: 'string', flag: true, doc: 'A file holding the API key (surrounding whitespace ignored).' },
  ...storedSecret('api_key', 'portal', 'the key'),
  { key: 'api_key_header', scope: 'portal', kind: 'string', default: 'X-Service-ApiKey', flag: true, doc: 'The header that carries the key.' },
  { key: 'portal', scope: 'portal', kind: 'string', default: 'the Cloud ID, else the base URL\'s host', flag: true, doc: 'The `portal` label on every series.' },
  { key: 'requests_per_minute', scope: 'portal', kind: 'int', default: 5, min: 1, max: 10, flag: true, doc: 'This exporter\'s share of the portal\'s budget of 10 requests per 60 s (shared by every client of the portal).' },
  { key: 'page_size', scope: 'portal', kind: 'int', default: 500, min: 1, max: 100000, flag: true, doc: 'Records per `/alerts` request; the plan grows it (up to all in one request) when the pages would not fit the share beside the other sources, from the last run\'s total when known.' },
  { key: 'max_series_per_family', scope: 'portal', kind: 'int', default: 1000, min: 10, max: 1000000, flag: true, doc: 'Most series one label-valued family (alerts by integration, the per-integration Vitals families) may have for the portal; the smallest integrations are folded into `integration="__other__"` so the family still adds up (docs/metrics.md).' },
  { key: 'alert_slas', scope: 'portal', kind: 'durations', default: 'red=1d,amber=7d,green=30d', flag: true, doc: 'How long an unresolved alert of each severity may stay open before `posture_alerts_over_sla` counts it (snoozed alerts are not counted): `severity=duration` pairs, or in a config file a mapping such as `{red: 12h, amber: 3d}`; Prometheus durations (`12h`, `3d`, `1h30m`); severities left out keep their defaults. See [docs/objectives.md](docs/objectives.md#alert-slas).' },
  { key: 'directory_inactive_days', scope: 'portal', kind: 'ints', default: '45,90', min: 1, max: 3650, flag: true, doc: 'The thresholds of `posture_directory_users_inactive`: whole days, comma-separated (a list in a config file, such as `[45, 90]`), each once; a directory user counts for a threshold when its `lastActivity` is unset or more than that many days before the read (its `days` label is the number, e.g. `"45"`). See [docs/metrics.md](docs/metrics.md#access).' },
  { key: 'vitals_tags', scope: 'portal', kind: 'list', default: '', flag: true, doc: 'Comma-separated tags: the Vitals families are also collected per tag (one request each) with a `tag` label.' },
  { key: 'interval_seconds', scope: 'global', kind: 'int', default: 300, ...INTERVAL_BOUNDS, flag: true, doc: '`serve`: seconds between runs of every source, unless a source has its own interval; refused at start when the plan does not fit the budget (`check-config` prints the plan).' },
  ...intervalSettingDefs(),
  { key: 'max_staleness_seconds', scope: 'global', kind: 'int', default: 'two intervals of the source', min: 0, max: 604800, flag: true, doc: 'Only while a source\'s last run has failed: how long after its last success its last good values are still served, then dropped (never zeros); `0` drops them at the first failed run. A source whose last run succeeded is always served, however old its values.' },
  { key: 'cycle_timeout_seconds', scope: 'global', kind: 'int', default: 'from the plan', min: 1, max: 3600, flag: true, doc: 'A cap on how long one run may take. Unset: `once` takes what the plan needs (requests, share, retries), Lambda the invocation\'s remaining time, `serve` until the source is due again.' },
  { key: 'max_retry_after_seconds', scope: 'global', kind: 'int', default: 120, min: 1, max: 3600, flag: true, doc: 'The longest `Retry-After` of a 429 that is waited out (every request to the portal waits); a longer one pauses the portal this long and defers the request to its source\'s next run.' },
  { key: 'connect_timeout_seconds', scope: 'global', kind: 'int', default: 10, min: 1, max: 300, flag: true, doc: 'Timeout to connect to the portal.' },
  { key: 'request_timeout_seconds', scope: 'global', kind: 'int', default: 30, min: 1, max: 600, flag: true, doc: 'Timeout for response headers, and for each wait between body chunks.' },
  { key: 'max_retries', scope: 'global', kind: 'int', default: 3, min: 0, max: 10, flag: true, doc: 'Retries of a request after 429, 500 (once), 502, 503, 504, a cut body or a network error; each retry waits for a slot of the same budget.' },
  { key: 'listen', scope: 'global', kind: 'string', default: '0.0.0.0:9877', flag: true, doc: '`serve`: HOST:PORT to listen on (`simulate` listens on 127.0.0.1:9878 unless this or `--listen` says otherwise).' },
  { key: 'web_config_file', scope: 'global', kind: 'string', flag: true, doc: '`serve`: a web configuration file (the Prometheus exporter toolkit\'s format: TLS, basic auth, response headers) for `/metrics`; re-read when it changes. See [docs/web-config.md](docs/web-config.md).' },
  { key: 'log_level', scope: 'global', kind: 'enum', values: ['debug', 'info', 'warn', 'error'], default: 'info', flag: true, doc: 'Log level (JSON lines on stderr).' },
  { key: 'state_dir', scope: 'global', kind: 'string', default: '$XDG_STATE_HOME/posture-exporter, else ~/.local/state/posture-exporter', flag: true, doc: 'A directory of this user\'s own (created 0700 when missing) where every process claims, atomically, each request it sends to each portal, so a restart, a second process or `once` from cron on this host counts the last 60 s of them all against the share. Refused at start (exit 2) when another user owns it or others can write it; no symlink inside it is followed. Processes that share it share the share. When it cannot be created: one warning, and the process counts only its own requests. See [docs/budget.md](docs/budget.md).' },
  { key: 'state_table', scope: 'global', kind: 'string', flag: true, doc: 'A DynamoDB table (its name or ARN) that is the ledger of every portal instead of the state directory: every process, Lambda container and host that uses it counts the others\' requests of the last 60 s against the share, each slot granted by a conditional write; it also remembers each portal entry\'s last resolved-alerts pass, so `once` and the Lambda make it once per interval across them all. Region, endpoint (`AWS_ENDPOINT_URL_DYNAMODB`) and credentials come from the AWS SDK\'s standard settings. A table that is missing, unreachable or refused fails the run before any request. See [docs/serverless.md](docs/serverless.md#the-budget-across-invocations).' },
  { key: 'format', scope: 'global', kind: 'enum', values: ['prometheus', 'openmetrics', 'json'], default: 'prometheus', flag: true, doc: '`once`: output format.' },
  { key: 'runbook_url', scope: 'global', kind: 'string', flag: true, doc: `\`rules\`: the \`runbook_url\` annotation of every alert it writes, a URL with \`{alert}\` (the alert's name, such as \`PostureObjectiveBurnRate\`) or \`{alert_lower}\` (the name in lower case, a Markdown heading's anchor), e.g. \`${EXAMPLE_RUNBOOK_URL}\`. \`npm run rules\` gives it to the shipped rule files too. Unset, the alerts carry no \`runbook_url\` (docs/runbooks.md holds the runbooks: publish them, and point this at them).` },
  { key: 'push', scope: 'global', kind: 'list', default: '', values: SINK_NAMES, flag: true, doc: 'Sinks to push to after each collection (serverless mode; `once` too): any of `otlp`, `remote_write`, `pushgateway`.' },
  { key: 'remote_write_url', scope: 'global', kind: 'string', flag: true, doc: 'Prometheus remote-write endpoint (AMP, Grafana Cloud, Mimir, VictoriaMetrics, Prometheus).' },
  { key: 'remote_write_sigv4_region', scope: 'global', kind: 'string', flag: true, doc: 'Sign remote writes with SigV4 for Amazon Managed Service for Prometheus in this region (credentials from the role).' },
  { key: 'remote_write_bearer_token', scope: 'global', kind: 'secret', flag: false, doc: 'Bearer token for remote write (prefer its SSM parameter or secret).' },
  ...storedSecret('remote_write_bearer_token', 'global', 'the remote-write bearer token'),
  { key: 'remote_write_username', scope: 'global', kind: 'string', flag: true, doc: 'Basic-auth user for remote write (Grafana Cloud: the instance id).' },
  { key: 'remote_write_password', scope: 'global', kind: 'secret', flag: false, doc: 'Basic-auth password for remote write (Grafana Cloud: an access token; prefer its SSM parameter or secret).' },
  ...storedSecret('remote_write_password', 'global', 'the remote-write basic-auth password'),
  { key: 'remote_write_headers', scope: 'global', kind: 'secret', flag: false, doc: 'Extra headers on every remote write, `Name=value,Name2=value2` (values percent-decoded, e.g. `%2C` for a comma), such as `X-Scope-OrgID` for Mimir or a proxy\'s own credential; values are redacted from logs and errors.' },
  { key: 'pushgateway_url', scope: 'global', kind: 'string', flag: true, doc: 'Pushgateway base URL; one group per portal and source, replaced on each push.' },
  { key: 'pushgateway_job', scope: 'global', kind: 'string', default: 'posture-exporter', flag: true, doc: 'The Pushgateway `job` of the groups.' },
  { key: 'pushgateway_username', scope: 'global', kind: 'string', flag: true, doc: 'Basic-auth user for the Pushgateway (its `--web.config.file` `basic_auth_users`, or a proxy in front).' },
  { key: 'pushgateway_password', scope: 'global', kind: 'secret', flag: false, doc: 'Basic-auth password for the Pushgateway (prefer its SSM parameter or secret).' },
  ...storedSecret('pushgateway_password', 'global', 'the Pushgateway basic-auth password'),
  { key: 'push_timeout_seconds', scope: 'global', kind: 'int', default: '10; OTLP: OTEL_EXPORTER_OTLP_(METRICS_)TIMEOUT, else 10', min: 1, max: 300, flag: true, doc: 'Timeout of each push request (remote write, Pushgateway, OTLP), also bounded by the time left before the cycle\'s deadline.' },
  { key: 'push_max_retries', scope: 'global', kind: 'int', default: 3, min: 0, max: 10, flag: true, doc: 'Retries of a remote write or Pushgateway request after 429, 5xx or a network error (backoff, `Retry-After` honoured), while the deadline allows.' },
  { key: 'push_concurrency', scope: 'global', kind: 'int', default: 8, min: 1, max: 64, flag: true, doc: 'Most requests each sink has in flight at once (Pushgateway groups, remote-write requests, OTLP exports); the rest wait their turn, and whatever has not started when the push deadline passes is reported as not pushed.' },
  { key: 'shard', scope: 'global', kind: 'string', flag: true, doc: 'With `POSTURE_TOTAL_SHARDS`: this process\'s shard, a number from 0 or a StatefulSet pod name such as `posture-exporter-2` (its ordinal); only the portals whose identity (the normalised base URL, so every entry of one portal) hashes to this shard (jump consistent hash) are collected. See [docs/sharding.md](docs/sharding.md).' },
  { key: 'total_shards', scope: 'global', kind: 'int', default: 1, min: 1, max: 1000, flag: true, doc: 'How many processes (shards) split the portals; each portal belongs to exactly one. Going from n to n+1 moves about 1/(n+1) of the portals.' },
  { key: 'lambda_margin_seconds', scope: 'global', kind: 'int', default: 10, min: 1, max: 300, flag: false, doc: 'Lambda: collection ends this long before the invocation\'s time runs out, leaving time to push.' },
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

/** A setting's default as the table writes it: the one place each default is written (settings whose default is a value, not a description). */
export function defaultOf(key: SettingKey): string | number {
  const d = SETTING_BY_KEY[key].default;
  if (d === undefined) throw new Error(`the setting ${key} has no default`);
  return d;
}

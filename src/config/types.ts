import type { LogLevel } from '../core/log.js';
import type { AlertSlas } from './alert-slas.js';
import type { SlowJob, Source } from '../domain.js';
import type { Objective } from './objectives.js';
import type { SettingKey, SinkName } from './settings.js';

/** Where a secret (the API key, a remote-write credential) comes from; resolved at the edge (file read, SSM, Secrets Manager). */
export type KeySource =
  | { kind: 'value'; value: string }
  /** `setting`: where the path was given when not the environment, e.g. `config file fleet.yaml: portals[2].api_key_file`. */
  | { kind: 'file'; path: string; setting?: string }
  | { kind: 'ssm'; name: string }
  | { kind: 'secret'; id: string };

/** How a user sets a setting: a flag, an environment variable, or a key of a config file. */
export interface SettingRef {
  readonly kind: 'flag' | 'env' | 'file';
  /** `--alerts-interval-seconds`, `POSTURE_ALERTS_INTERVAL_SECONDS`, or the key (`portals[0].alerts_interval_seconds`). */
  readonly name: string;
  /** The file (or POSTURE_CONFIG) holding the key. */
  readonly file?: string;
  /** The file does not hold the key (yet): a suggestion adds it there. */
  readonly absent?: boolean;
}

/** How a source's interval is set, and whether it is set for the source itself (else it is POSTURE_INTERVAL_SECONDS). */
export interface IntervalSetting extends SettingRef {
  readonly explicit: boolean;
}

/** One portal to collect. */
export interface PortalConfig {
  /** The `portal` label. */
  readonly name: string;
  readonly baseUrl: string;
  readonly key: KeySource;
  readonly apiKeyHeader: string;
  readonly requestsPerMinute: number;
  readonly pageSize: number;
  readonly vitalsTags: readonly string[];
  /** `serve`: seconds between runs of each source. */
  readonly intervals: Readonly<Record<Source, number>>;
  /** How each source's interval is set (unset: POSTURE_<SOURCE>_INTERVAL_SECONDS, not set explicitly). */
  readonly intervalSettings?: Readonly<Record<Source, IntervalSetting>>;
  /** How the share is set (unset: where it is best added), for the advice of `check-config`. */
  readonly requestsPerMinuteSetting?: SettingRef;
  /** How the Vitals tags are set (unset: where they are best added). */
  readonly vitalsTagsSetting?: SettingRef;
  /**
   * Seconds between runs of each slow job, its own interval (not POSTURE_INTERVAL_SECONDS): the
   * resolved-alerts pass (`resolved_alerts_interval_seconds`, default 3600), the access settings
   * (`access_interval_seconds`, 3600) and the directory's users (`directory_interval_seconds`, 86400).
   */
  readonly slowIntervals: Readonly<Record<SlowJob, number>>;
  /** How each is set (unset: its variable, not set explicitly). */
  readonly slowIntervalSettings?: Readonly<Record<SlowJob, IntervalSetting>>;
  /** The thresholds of `posture_directory_users_inactive`, whole days ascending (`directory_inactive_days`, default 45 and 90). */
  readonly directoryInactiveDays: readonly number[];
  /** Most series per label-valued family for this portal (the rest folded into `__other__`). */
  readonly maxSeriesPerFamily: number;
  /** Seconds an unresolved, unsnoozed alert of each severity may stay open (`alert_slas`). */
  readonly alertSlas: AlertSlas;
}

export type { SinkName } from './settings.js';

/** The validated configuration of the process. */
export interface Config {
  readonly portals: readonly PortalConfig[];
  readonly intervalSeconds: number;
  /** How POSTURE_INTERVAL_SECONDS is set (unset: the variable). */
  readonly intervalSetting?: SettingRef;
  /** Unset: two intervals of each source. */
  readonly maxStalenessSeconds?: number;
  /** An explicit cap on a run; unset: from the plan (once), the invocation (Lambda), the next run (serve). */
  readonly cycleTimeoutSeconds?: number;
  readonly maxRetryAfterSeconds: number;
  readonly connectTimeoutSeconds: number;
  readonly requestTimeoutSeconds: number;
  readonly maxRetries: number;
  readonly listen: { host: string; port: number };
  /** `serve`: the web configuration file for `/metrics` (TLS, basic auth, headers), when set. */
  readonly webConfigFile?: string;
  readonly logLevel: LogLevel;
  readonly format: 'prometheus' | 'openmetrics' | 'json';
  /** The `runbook_url` template of the rules (`{alert}`, `{alert_lower}`); unset, the rules carry no `runbook_url`. */
  readonly runbookUrl?: string;
  readonly push: {
    readonly sinks: readonly SinkName[];
    readonly remoteWriteUrl?: string;
    readonly remoteWriteSigv4Region?: string;
    /** From POSTURE_REMOTE_WRITE_BEARER_TOKEN (`value`), its SSM parameter or its secret; resolved when first pushed. */
    readonly remoteWriteBearerToken?: KeySource;
    readonly remoteWriteUsername?: string;
    /** From POSTURE_REMOTE_WRITE_PASSWORD (`value`), its SSM parameter or its secret; resolved when first pushed. */
    readonly remoteWritePassword?: KeySource;
    /** POSTURE_REMOTE_WRITE_HEADERS, parsed; the values are secrets. */
    readonly remoteWriteHeaders: Readonly<Record<string, string>>;
    readonly pushgatewayUrl?: string;
    readonly pushgatewayJob: string;
    readonly pushgatewayUsername?: string;
    /** From POSTURE_PUSHGATEWAY_PASSWORD (`value`), its SSM parameter or its secret; resolved when first pushed. */
    readonly pushgatewayPassword?: KeySource;
    /** Per push request; unset: 10 s (OTLP: its OTEL_* timeout). */
    readonly timeoutSeconds?: number;
    /** Retries of a remote write or Pushgateway request. */
    readonly maxRetries: number;
    /** Most requests each sink has in flight at once. */
    readonly concurrency: number;
  };
  readonly lambdaMarginSeconds: number;
  /** Absolute path of the state directory (POSTURE_STATE_DIR, else the XDG default): recorded requests, backfill progress. */
  readonly stateDir: string;
  /** Whether `stateDir` was set (flag, env, config file) rather than the default. */
  readonly stateDirSet: boolean;
  /** The DynamoDB table (name or ARN) that is every portal's ledger instead of the state directory (POSTURE_STATE_TABLE); unset: the state directory. */
  readonly stateTable?: string;
  /** This process's shard and the shard count (0 of 1 unsharded); `portals` holds only this shard's. */
  readonly shard: { readonly ordinal: number; readonly total: number; readonly portalsInAll: number };
  /** The posture objectives (config file `objectives`; the default one when the key is absent). */
  readonly objectives: readonly Objective[];
  /** Every secret value in the config (for log redaction); secrets from files or stores are added when read. */
  readonly secrets: readonly string[];
}

/** Inputs of the loader; precedence is flag > env > config file > default. */
export interface ConfigSources {
  env?: Record<string, string | undefined>;
  /** Flags by setting key (the CLI maps `--page-size` to `page_size`). */
  flags?: Partial<Record<SettingKey, string>>;
  /** Reads a file (injected for tests); default fs.readFileSync utf8. */
  readFile?: (path: string) => string;
}

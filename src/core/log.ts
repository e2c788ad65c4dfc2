/** Structured JSON-line logging with secret redaction. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** The level `text` names (e.g. POSTURE_LOG_LEVEL before the settings are loaded), else `info`. */
export function levelOr(text: string | undefined): LogLevel {
  const asked = text?.trim();
  return (Object.keys(ORDER) as LogLevel[]).find((l) => l === asked) ?? 'info';
}

export type LogFields = Record<string, unknown>;

/** What every component logs through; one JSON object a line. */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every line. */
  child(fields: LogFields): Logger;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Where lines go; defaults to stderr. */
  write?: (line: string) => void;
  /** Values that must never appear in output (API keys, tokens); replaced by `[REDACTED]`. */
  secrets?: readonly string[];
  clock?: { now(): number };
  base?: LogFields;
  /** Field names: `{ time, level, msg }` by default; `powertools` uses Powertools Logger's `timestamp`, `level` (upper case), `message`. */
  shape?: 'default' | 'powertools';
}

/** Replaces every occurrence of each secret (of 4+ characters) in `text`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) {
    if (s && s.length >= 4) out = out.split(s).join('[REDACTED]');
  }
  return out;
}

function serialiseError(err: unknown): unknown {
  if (err instanceof Error) {
    const o: Record<string, unknown> = { name: err.name, message: err.message };
    for (const k of ['status', 'code', 'retryAfterMs', 'source', 'endpoint'] as const) {
      const v = (err as unknown as Record<string, unknown>)[k];
      if (v !== undefined) o[k] = v;
    }
    if (err.cause !== undefined) o.cause = serialiseError(err.cause);
    return o;
  }
  return err;
}

/** Creates a JSON-lines logger. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const write = options.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const secrets = options.secrets ?? [];
  const clock = options.clock ?? { now: () => Date.now() };
  const make = (base: LogFields): Logger => {
    const emit = (lvl: LogLevel, msg: string, fields?: LogFields) => {
      if (ORDER[lvl] < ORDER[level]) return;
      const time = new Date(clock.now()).toISOString();
      const record: LogFields =
        options.shape === 'powertools'
          ? { level: lvl.toUpperCase(), message: msg, timestamp: time, ...base }
          : { time, level: lvl, msg, ...base };
      if (fields) {
        for (const [k, v] of Object.entries(fields)) record[k] = k === 'err' || v instanceof Error ? serialiseError(v) : v;
      }
      let line: string;
      try {
        line = JSON.stringify(record);
      } catch {
        line = JSON.stringify({ time, level: lvl, msg, note: 'unserialisable fields' });
      }
      write(redact(line, secrets));
    };
    return {
      debug: (m, f) => emit('debug', m, f),
      info: (m, f) => emit('info', m, f),
      warn: (m, f) => emit('warn', m, f),
      error: (m, f) => emit('error', m, f),
      child: (f) => make({ ...base, ...f }),
    };
  };
  return make(options.base ?? {});
}

/** A logger that drops everything. */
export const silentLogger: Logger = createLogger({ write: () => {} });

/** A logger that keeps its records in memory, for tests. */
export function memoryLogger(options: Omit<LoggerOptions, 'write'> = {}): Logger & { lines: string[]; records: () => LogFields[] } {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', ...options, write: (l) => lines.push(l) });
  return Object.assign(logger, { lines, records: () => lines.map((l) => JSON.parse(l) as LogFields) });
}

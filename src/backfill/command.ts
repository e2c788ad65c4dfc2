/** The `backfill` command's wiring: flags → settings, state, key, sinks → runBackfill → summary and exit code. */
import { existsSync } from 'node:fs';
import { loadConfig } from '../config/load.js';
import type { SettingKey } from '../config/settings.js';
import type { Clock } from '../core/clock.js';
import type { CliIo } from '../core/io.js';
import { createLogger } from '../core/log.js';
import { ConfigError, ConfigErrors } from '../errors.js';
import { safeUrl } from '../sinks/http.js';
import { RemoteWriteSink } from '../sinks/remote-write.js';
import { daysToFetch } from './plan.js';
import { defaultStatePath, loadState, saveState, type BackfillState } from './state.js';
import { openState } from '../state/index.js';
import { runBackfill, schedulerFetchDay } from './backfill.js';
import { Exporter } from '../exporter/exporter.js';
import { resolveSecret } from '../config/secrets.js';
import { pushSettingsOf } from '../sinks/configured.js';

/** Carriage return and erase-line, as the progress bar starts its line. */
const CLEAR_LINE = new RegExp(`^\r${String.fromCharCode(27)}\\[K`);

/** The backfill flags, as parsed. */
export interface BackfillFlags {
  days?: string;
  from?: string;
  to?: string;
  output?: string;
  resume?: boolean;
  state?: string;
}

/**
 * Runs `backfill`; returns the exit code (0 every day written, 1 some not); throws ConfigError(s)
 * for bad flags and settings (exit 2), and for `unknown`, the environment's `POSTURE_*` variables
 * that are not settings, before it sends or writes anything.
 */
export async function backfillCommand(flags: Partial<Record<SettingKey, string>>, bf: BackfillFlags, io: CliIo, clock: Clock, unknown: readonly ConfigError[]): Promise<number> {
  const days = daysToFetch(bf, clock.now());
  // Only --push on the command line sends history somewhere: a POSTURE_PUSH meant for the Lambda must not.
  const push = flags.push?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];
  const other = push.filter((s) => s !== 'remote_write');
  if (other.length) throw new ConfigError('--push', `backfill --push takes only remote_write (got ${other.join(', ')}): OTLP and the Pushgateway cannot carry past timestamps.`);
  if (bf.output === undefined && push.length === 0) throw new ConfigError('--output', 'backfill needs somewhere to write: --output FILE (OpenMetrics for promtool) and/or --push remote_write.');
  const config = loadConfig({ env: io.env, flags: { ...flags, push: push.join(',') } });
  // A typo leaves the setting meant at its default: a backfill must not run on it, as once must not.
  if (unknown.length) throw new ConfigErrors([...unknown]);

  // On a terminal the bar is redrawn in place: a log line first clears it, then the bar comes back.
  const isTTY = io.stderrIsTTY === true;
  let bar = '';
  const progress = (text: string) => {
    if (isTTY) bar = text.endsWith('\n') ? '' : text.replace(CLEAR_LINE, '');
    io.stderr(text);
  };
  const secrets = [...config.secrets];
  const logger = createLogger({
    level: config.logLevel,
    clock,
    secrets,
    write: (line) => io.stderr(isTTY && bar ? `\r\x1b[K${line}\n${bar}` : `${line}\n`),
  });

  // The state directory holds the requests sent to each portal and, unless --state says otherwise, the progress.
  const processState = openState(config.stateDir, logger, clock, bf.state === undefined ? "backfill's progress is not kept for --resume" : undefined);
  const statePath = bf.state ?? defaultStatePath(bf.output, config.stateDir);
  if (existsSync(statePath) && !bf.resume) {
    throw new ConfigError('--resume', `${statePath} holds an earlier backfill: add --resume to continue it (days already written are skipped), or remove the file to start over.`);
  }
  const state = loadState(statePath);
  for (const p of config.portals) {
    const known = state.portals[p.name];
    if (known && known.baseUrl !== p.baseUrl) throw new ConfigError('--state', `${statePath} belongs to portal ${p.name} at ${known.baseUrl}, not ${p.baseUrl}: give another --state.`);
  }
  const rwUrl = push.length && config.push.remoteWriteUrl ? safeUrl(config.push.remoteWriteUrl) : undefined;
  if (rwUrl && state.remoteWriteUrl && state.remoteWriteUrl !== rwUrl) {
    throw new ConfigError('--state', `${statePath} records pushes to ${state.remoteWriteUrl}, not ${rwUrl}: give another --state for another receiver.`);
  }
  if (rwUrl) state.remoteWriteUrl = rwUrl;
  // A state directory that cannot be written warned once: the run goes on, its progress in memory. A --state file is the user's own: its failure stops the run.
  const persist = (path: string, s: BackfillState) => {
    if (bf.state !== undefined) return saveState(path, s);
    if (!processState.dir.writable) return;
    try {
      saveState(path, s);
    } catch (err) {
      processState.dir.failed(err);
    }
  };

  // Read every key up front: a key that cannot be read stops here, and each is redacted from then on.
  for (const p of config.portals) secrets.push(await resolveSecret(p.key));
  let remoteWrite: RemoteWriteSink | undefined;
  if (push.length) {
    const settings = await pushSettingsOf(config, { onSecret: (s) => secrets.push(s) });
    remoteWrite = new RemoteWriteSink({ ...settings.remoteWrite!, historical: true });
  }

  const controller = new AbortController();
  void io.stopSignal?.then(() => controller.abort(new Error('backfill interrupted')));
  let requests = 0;
  // The portal's scheduler owns the budget, as in serve and once: one request at a time, within the share.
  // The DynamoDB table, when set, records the requests instead of the state directory (which keeps the progress).
  const ledgerOf = config.stateTable !== undefined ? (await import('../state/table.js')).openTable(config.stateTable, logger, clock).ledgerOf : processState.ledgerOf;
  const exporter = new Exporter(config, { clock, logger, runtime: 'once', onSecret: (x) => secrets.push(x), ledgerOf });
  const fetchDay = schedulerFetchDay(exporter, () => requests++);
  logger.info('backfill starting', {
    portals: config.portals.map((p) => ({ portal: p.name, requestsPerMinute: p.requestsPerMinute, tags: p.vitalsTags })),
    days: days.length,
    from: days[days.length - 1],
    to: days[0],
    output: bf.output,
    remoteWrite: rwUrl,
    state: statePath,
  });
  const result = await runBackfill(
    { portals: config.portals, days, output: bf.output, remoteWrite, statePath, state, pushTimeoutMs: (config.cycleTimeoutSeconds ?? 60) * 1000, signal: controller.signal },
    { fetchDay, clock, logger, progress, isTTY, requestsSpent: () => requests, push: { env: io.env }, saveState: persist },
  );

  const lines = [`backfill: ${result.written.length} day(s) written, ${result.alreadyWritten} already written earlier, ${result.failed.length} failed, ${result.requests} request(s) sent.`];
  if (bf.output !== undefined) lines.push(`backfill: ${bf.output} holds every complete day; load it with: promtool tsdb create-blocks-from openmetrics ${bf.output} <data dir> (see docs/backfill.md).`);
  for (const f of result.failed) lines.push(`backfill: not written: ${f.portal} ${f.day}: ${f.reason}`);
  if (result.failed.length) lines.push(`backfill: the failed day(s) are tried again by the next run with --resume (state: ${statePath}).`);
  if (result.notTried) lines.push(`backfill: interrupted with ${result.notTried} day(s) to go: run the same command with --resume to continue.`);
  io.stderr(lines.join('\n') + '\n');
  return result.failed.length === 0 && result.notTried === 0 ? 0 : 1;
}

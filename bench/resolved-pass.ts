// The measured process of bench/resolved.ts: one resolved-alerts pass against the portal in
// POSTURE_BASE_URL (key POSTURE_API_KEY), with the CLI's V8 settings, the real reader, scheduler
// and deadline. Prints the pass's counts as one JSON line on stdout.
import { setFlagsFromString } from 'node:v8';
import { DEFAULT_ALERT_SLAS } from '../src/config/alert-slas.js';
import type { PortalConfig } from '../src/config/load.js';
import { systemClock } from '../src/core/clock.js';
import { createLogger } from '../src/core/log.js';
import { tuneCompilerForShortRuns } from '../src/runtime/v8-flags.js';
import { Deadline } from '../src/schedule/deadline.js';
import type { RunContext } from '../src/schedule/request.js';
import { PortalScheduler } from '../src/schedule/scheduler.js';
import { runResolvedAlerts } from '../src/sources/resolved/run.js';
import { PortalReader } from '../src/upstream/reader.js';

// As src/runtime/bin.ts sets them for every command.
setFlagsFromString('--optimize-for-size');
tuneCompilerForShortRuns();

const baseUrl = process.env.POSTURE_BASE_URL!;
const apiKey = process.env.POSTURE_API_KEY!;
const clock = systemClock;
const logger = createLogger({ level: 'warn' });
const portal: PortalConfig = {
  name: 'bench', baseUrl, key: { kind: 'value', value: apiKey }, apiKeyHeader: 'X-Service-ApiKey', requestsPerMinute: 5, pageSize: 500, vitalsTags: [],
  intervals: { vitals: 300, alerts: 300, devices: 300 }, resolvedAlertsIntervalSeconds: 3600, maxSeriesPerFamily: 1000, alertSlas: DEFAULT_ALERT_SLAS,
};
const deadline = new Deadline(clock.monotonic() + 600_000, clock, undefined);
const ctx: RunContext = {
  portal, clock, logger, deadline, maxRetries: 3, random: Math.random, memory: {}, requests: new Map(),
  scheduler: new PortalScheduler({ share: portal.requestsPerMinute, clock, logger }),
  reader: new PortalReader({ baseUrl, apiKey, clock, logger }),
};
const pass = await runResolvedAlerts(ctx);
deadline.close();
const resolved30d = Object.fromEntries(Object.entries(pass.resolution).map(([severity, w]) => [severity, w[2]!.resolved]));
process.stdout.write(JSON.stringify({ nowSeconds: pass.nowSeconds, resolved30d, invalid: pass.invalid, requests: Object.fromEntries(ctx.requests) }) + '\n');

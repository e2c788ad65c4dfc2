import { afterEach } from 'vitest';
import { DEFAULT_ALERT_SLAS } from '../../src/config/alert-slas.js';
import type { PortalConfig } from '../../src/config/load.js';
import type { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { Deadline } from '../../src/schedule/deadline.js';
import type { RunContext } from '../../src/schedule/request.js';
import { PortalScheduler } from '../../src/schedule/scheduler.js';
import type { Simulator } from '../../src/simulator/index.js';
import { PortalReader, type PortalReaderOptions } from '../../src/upstream/reader.js';
import { loopbackAgent } from './upstream.js';

/** How a test's run differs from the usual one. */
export interface RunSetup {
  /** Requests per window the scheduler may spend. @default 10 */
  share?: number;
  /** @default 3 */
  maxRetries?: number;
  /** The longest Retry-After waited out. @default the scheduler's (120 s) */
  maxRetryAfterMs?: number;
  /** @default () => 0.5 (a retry waits half its backoff window: 500 ms, then 1 s, 2 s…) */
  random?: () => number;
  /** The deadline, on the clock. @default an hour from now */
  deadline?: number;
  /** How far the deadline may be extended (a one-shot run). @default not at all */
  cap?: number;
  /** Aborts the run (the Deadline's outer signal). */
  signal?: AbortSignal;
  /** Records per /alerts request. @default 0 (all in one) */
  pageSize?: number;
  reader?: Partial<PortalReaderOptions>;
}

/**
 * For a file whose tests run sources or requests against the simulated portal: returns `setup`,
 * which makes a run context for `sim` on `clock` (which also drives the scheduler, the reader and
 * the deadline) with a real PortalScheduler, PortalReader and Deadline. The deadlines are closed
 * after each test and the connections after the file. Call once, at the top of the file.
 */
export function runContexts() {
  const agent = loopbackAgent();
  const deadlines: Deadline[] = [];
  afterEach(() => {
    for (const d of deadlines.splice(0)) d.close();
  });
  return function setup(sim: Simulator, clock: FakeClock, options: RunSetup = {}) {
    const logger = memoryLogger();
    const scheduler = new PortalScheduler({ share: options.share ?? 10, clock, logger, ...(options.maxRetryAfterMs !== undefined ? { maxRetryAfterMs: options.maxRetryAfterMs } : {}) });
    const reader = new PortalReader({ baseUrl: sim.baseUrl, apiKey: sim.apiKey, clock, logger, dispatcher: agent, ...options.reader });
    const deadline = new Deadline(options.deadline ?? clock.now() + 3_600_000, clock, options.cap, options.signal);
    deadlines.push(deadline);
    const portal: PortalConfig = {
      name: 'test',
      baseUrl: sim.baseUrl,
      key: { kind: 'value', value: sim.apiKey },
      apiKeyHeader: 'X-Service-ApiKey',
      requestsPerMinute: options.share ?? 10,
      pageSize: options.pageSize ?? 0,
      maxSeriesPerFamily: 1000,
      alertSlas: DEFAULT_ALERT_SLAS,
      vitalsTags: [],
      intervals: { vitals: 300, devices: 300, alerts: 300 },
      slowIntervals: { resolved: 3600, access: 3600, directory: 86400 },
      directoryInactiveDays: [45, 90],
    };
    const ctx: RunContext = {
      portal,
      scheduler,
      reader,
      clock,
      logger,
      deadline,
      maxRetries: options.maxRetries ?? 3,
      random: options.random ?? (() => 0.5),
      memory: {},
      requests: new Map(),
    };
    const warnings = () => logger.records().filter((r) => r.level === 'warn');
    return { ctx, scheduler, logger, warnings, agent };
  };
}

import type { Config } from '../config/load.js';
import type { CycleResult } from '../collect/cycle.js';
import { PORTAL_LABEL, SOURCES } from '../metrics/catalogue.js';
import type { Sample } from '../metrics/sample.js';
import { createSinks } from '../sinks/index.js';
import type { PushBatch, PushSettings, RemoteWriteAuth, Sink } from '../sinks/types.js';

/** The sink settings a config asks for. */
export function pushSettingsOf(config: Config): PushSettings {
  const p = config.push;
  const auth: RemoteWriteAuth = p.remoteWriteSigv4Region
    ? { kind: 'sigv4', region: p.remoteWriteSigv4Region }
    : p.remoteWriteBearerToken
      ? { kind: 'bearer', token: p.remoteWriteBearerToken }
      : p.remoteWriteUsername && p.remoteWritePassword
        ? { kind: 'basic', username: p.remoteWriteUsername, password: p.remoteWritePassword }
        : { kind: 'none' };
  return {
    sinks: p.sinks,
    remoteWrite: p.remoteWriteUrl ? { url: p.remoteWriteUrl, auth } : undefined,
    pushgateway: p.pushgatewayUrl ? { url: p.pushgatewayUrl, job: p.pushgatewayJob } : undefined,
    otlp: {},
  };
}

/** The configured sinks. */
export function sinksOf(config: Config): Sink[] {
  return createSinks(pushSettingsOf(config));
}

/** One batch per portal: its samples and the sources it collected successfully this cycle. */
export function buildBatches(results: readonly CycleResult[], samples: readonly Sample[]): PushBatch[] {
  return results.map((r) => ({
    portal: r.portal,
    snapshot: { collectedAt: r.finishedAt, samples: samples.filter((s) => s.labels[PORTAL_LABEL] === r.portal) },
    succeeded: SOURCES.filter((s) => r[s].ok),
  }));
}

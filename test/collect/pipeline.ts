import { readFileSync } from 'node:fs';
import { foldAlerts } from '../../src/sources/alerts/fold.js';
import { foldResolved, withOpenAlerts } from '../../src/sources/resolved/fold.js';
import { toSamples, type PortalView } from '../../src/collect/samples.js';
import { foldVitals } from '../../src/sources/vitals.js';
import type { Sample } from '../../src/metrics/sample.js';

/** A fixture: upstream JSON in (test/fixtures/<scenario>/input.json). */
export interface FixtureInput {
  now: string;
  portal: string;
  vitals: Array<{ tag?: string; data: unknown[] }>;
  alerts: unknown[];
  devices: { active: number; inactive: number };
  /** Records of `/alerts?filter=resolved`: the resolved-alerts pass, read at `now` (absent: no pass yet). */
  resolved?: unknown[];
}

export function readFixture(scenario: string): FixtureInput {
  return JSON.parse(readFileSync(new URL(`../fixtures/${scenario}/input.json`, import.meta.url), 'utf8')) as FixtureInput;
}

/** The pure pipeline of one cycle: records → folds → samples (no HTTP). */
export function samplesOf(input: FixtureInput): Sample[] {
  const now = Date.parse(input.now);
  const vitals = input.vitals.map((v) => foldVitals(v.data, v.tag));
  const alerts = foldAlerts(input.alerts, now / 1000);
  const pass = input.resolved ? foldResolved(input.resolved, now / 1000) : undefined;
  const view: PortalView = {
    portal: input.portal,
    vitals: { value: vitals, success: true, lastSuccessAt: now, invalid: vitals.reduce((n, v) => n + v.invalid, 0) },
    alerts: { value: alerts, success: true, lastSuccessAt: now, invalid: alerts.invalid },
    devices: { value: input.devices, success: true, lastSuccessAt: now, invalid: 0 },
    // The pass beside the open alerts it was read with, as serve and once join them.
    ...(pass ? { resolved: { value: withOpenAlerts(pass, alerts), success: true, lastSuccessAt: now, invalid: pass.invalid } } : {}),
    intervals: { vitals: 300, alerts: 300, devices: 300, resolved: 3600 },
    cycle: {
      durations: { vitals: 250, devices: 400, alerts: 1250, ...(pass ? { resolved: 900 } : {}) },
      requests: new Map([
        ['/vitals\u0000200', input.vitals.length],
        ['/devices\u0000200', 2],
        ['/alerts\u0000200', pass ? 2 : 1],
      ]),
      alertsPageSize: 500,
      budget: { configuredShare: 5, effectiveShare: 5, rateLimitedLastHour: 0, rateLimitedTotal: 0 },
    },
  };
  return toSamples([view], { version: '0.0.0-test', runtime: 'once' });
}

/** The value of one series, or undefined when absent. */
export function valueOf(samples: readonly Sample[], name: string, labels: Record<string, string>): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).length === Object.keys(labels).length);
  if (found.length > 1) throw new Error(`ambiguous: ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

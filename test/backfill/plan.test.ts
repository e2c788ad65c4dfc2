import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/collect/catalogue.js';
import { foldVitals } from '../../src/sources/vitals.js';
import { renderTimestampedOpenMetrics } from '../../src/metrics/openmetrics-timestamped.js';
import { dayTimestamp, daysToFetch, etaSeconds, parseDay, progressBar, samplesOfDay } from '../../src/backfill/plan.js';
import { isAlreadyIngested, isDuplicateSample } from '../../src/sinks/remote-write.js';
import { configErrorOf } from '../support/errors.js';

const NOW = Date.UTC(2026, 10, 22, 0, 0, 1); // just after midnight UTC: yesterday is the 21st

describe('days to fetch', () => {
  it('--days N: the N full UTC days before today, yesterday first', () => {
    expect(daysToFetch({ days: '3' }, NOW)).toEqual(['20261121', '20261120', '20261119']);
    expect(daysToFetch({ days: '1' }, Date.UTC(2026, 10, 22, 23, 59, 59))).toEqual(['20261121']);
  });

  it('--from/--to: both days included, across a month and a leap day', () => {
    expect(daysToFetch({ from: '20240227', to: '20240301' }, NOW)).toEqual(['20240301', '20240229', '20240228', '20240227']);
    expect(daysToFetch({ from: '20261121', to: '20261121' }, NOW)).toEqual(['20261121']);
  });

  it.each([
    [{ days: '3661' }, '--days', '--days="3661" is not valid: give a whole number of days from 1 to 3660.'],
    [{ days: '-1' }, '--days', '--days="-1" is not valid'],
    [{ to: '20261101' }, '--from', '--to needs --from'],
    [{ from: '2026-11-01', to: '20261102' }, '--from', '--from="2026-11-01" is not a date: give yyyyMMdd'],
    [{ from: '20261101', to: '20260230' }, '--to', '--to="20260230" is not a date'],
    [{ from: '20200101', to: '20301231' }, '--to', 'is today or later'],
    [{ from: '20100101', to: '20261120' }, '--from', 'spans more than 3660 days'],
    [{}, '--days', 'give --days N'],
  ])('refuses %j naming %s', (flags, setting, message) => {
    const err = configErrorOf(() => daysToFetch(flags, NOW));
    expect(err.setting).toBe(setting);
    expect(err.message).toContain(message);
    expect(err.message).not.toContain('\n');
  });

  it.each(['20261301', '20261100', '19691231', '2026111', 'x0261101'])('parseDay(%s) is not a day', (d) => expect(parseDay(d)).toBeUndefined());

  it('stamps a day at 23:59:59 UTC', () => {
    expect(new Date(dayTimestamp('20261121')).toISOString()).toBe('2026-11-21T23:59:59.000Z');
  });
});

describe('samples of a day and their OpenMetrics file', () => {
  const whole = foldVitals([
    { key: 'jamf', name: 'Jamf "Pro"', vitalsEnabled: true, agentDeployedPossibleCompliant: 8, agentDeployedCompliant: 6, agentFunctioningPossibleCompliant: 6, agentFunctioningCompliant: 5, configurationPossibleCompliant: 5, configurationCompliant: 3 },
    { key: 'idle', name: 'Idle', vitalsEnabled: true, agentDeployedPossibleCompliant: 0, agentDeployedCompliant: 0, agentFunctioningPossibleCompliant: 0, agentFunctioningCompliant: 0, configurationPossibleCompliant: 0, configurationCompliant: 0 },
    { key: 'okta', name: 'Okta', vitalsEnabled: false, activeAgents: 41 },
  ]);
  const tagged = foldVitals([{ key: 'okta', name: 'Okta', vitalsEnabled: false, activeAgents: 7 }], 'servers');

  it('renders every family once, each series contiguous and in time order, with timestamps in seconds and # EOF', () => {
    const samples = [...samplesOfDay('acme', '20261121', [whole, tagged]), ...samplesOfDay('acme', '20261120', [whole])];
    const text = renderTimestampedOpenMetrics(samples, CATALOGUE);
    expect(text.split('\n').slice(0, 10)).toEqual(
      [
        '# HELP posture_vitals_integration_info Integrations reported by /vitals (value is always 1). Cached: read from the portal on the exporter\'s polling interval, not at scrape time.',
        '# TYPE posture_vitals_integration_info gauge',
        'posture_vitals_integration_info{portal="acme",integration="jamf",name="Jamf \\"Pro\\"",vitals_enabled="true"} 1 1795219199',
        'posture_vitals_integration_info{portal="acme",integration="jamf",name="Jamf \\"Pro\\"",vitals_enabled="true"} 1 1795305599',
        'posture_vitals_integration_info{portal="acme",integration="idle",name="Idle",vitals_enabled="true"} 1 1795219199',
        'posture_vitals_integration_info{portal="acme",integration="idle",name="Idle",vitals_enabled="true"} 1 1795305599',
        'posture_vitals_integration_info{portal="acme",integration="okta",name="Okta",vitals_enabled="false"} 1 1795219199',
        'posture_vitals_integration_info{portal="acme",integration="okta",name="Okta",vitals_enabled="false"} 1 1795305599',
        'posture_vitals_integration_info{portal="acme",integration="okta",name="Okta",vitals_enabled="false",tag="servers"} 1 1795305599',
        '# HELP posture_vitals_eligible_devices Vitals funnel: devices eligible for a stage (agentDeployedPossibleCompliant, agentFunctioningPossibleCompliant, configurationPossibleCompliant). Cached: read from the portal on the exporter\'s polling interval, not at scrape time.',
      ],
    );
    expect(text.match(/^# TYPE .*$/gm)).toEqual([
      '# TYPE posture_vitals_integration_info gauge',
      '# TYPE posture_vitals_eligible_devices gauge',
      '# TYPE posture_vitals_compliant_devices gauge',
      '# TYPE posture_vitals_health_ratio gauge',
      '# TYPE posture_vitals_funnel_consistent gauge',
      '# TYPE posture_vitals_active_agents gauge',
    ]);
    // No health ratio where nothing is eligible; 3/8 exactly.
    expect(text).toContain('posture_vitals_health_ratio{portal="acme",integration="jamf"} 0.375 1795219199\nposture_vitals_health_ratio{portal="acme",integration="jamf"} 0.375 1795305599\n# HELP');
    expect(text).not.toContain('posture_vitals_health_ratio{portal="acme",integration="idle"}');
    expect(text).toContain('posture_vitals_active_agents{portal="acme",integration="okta",tag="servers"} 7 1795305599\n# EOF\n');
    expect(text).not.toMatch(/posture_(alerts|devices|collection|exporter)/);
  });

  it('renders nothing but # EOF for no samples', () => {
    expect(renderTimestampedOpenMetrics([], CATALOGUE)).toBe('# EOF\n');
  });
});

describe('progress', () => {
  it('estimates the time left from the requests left at each portal\'s share; the slowest portal decides', () => {
    expect(etaSeconds({ left: [{ requests: 30, perMinute: 5 }, { requests: 4, perMinute: 2 }] })).toBe(360);
    expect(progressBar({ daysDone: 200, daysTotal: 365, failed: 1, requests: 600, left: [{ requests: 495, perMinute: 5 }] }, 10)).toBe(
      'backfill [#####-----] 200/365 days · 1 failed · 600 requests · ~99 min left',
    );
  });
});

describe('remote write refusals in backfill', () => {
  it('counts only duplicates as already there; too old, out of bounds and out of order are refusals', () => {
    const res = (body: string) => ({ status: 400, body });
    expect(isDuplicateSample(res('duplicate sample for timestamp'))).toBe(true);
    for (const body of ['out of bounds', 'out of order sample', 'too old sample', 'err-mimir-sample-timestamp-too-old', 'duplicate sample for timestamp; out of bounds']) {
      expect(isDuplicateSample(res(body)), body).toBe(false);
      expect(isAlreadyIngested(res(body)), body).toBe(true);
    }
  });
});

/** Helpers for the backfill tests: expected series computed straight from archive records, and the output file read back. */
import type { VitalsRecord } from '../../src/simulator/index.js';
import type { SimRequest, Simulator } from '../../src/simulator/index.js';
import { get } from '../simulator/helpers.js';

/** 23:59:59 UTC of a yyyyMMdd day, in Unix seconds (computed here, not by the code under test). */
export function endOfDaySeconds(day: string): number {
  return Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8)), 23, 59, 59) / 1000;
}

/** The yyyyMMdd of `n` days before the UTC day of `now`. */
export function daysBefore(now: number, n: number): string {
  const d = new Date(Math.floor(now / 86_400_000) * 86_400_000 - n * 86_400_000);
  return d.toISOString().slice(0, 10).replaceAll('-', '');
}

/** One archived day of the portal, read over HTTP (from a twin simulator without a rate limit). */
export async function archive(sim: Simulator, day: string, tag?: string): Promise<VitalsRecord[]> {
  const r = await get(sim, '/vitals', { query: tag === undefined ? { archiveDate: day } : { archiveDate: day, tag } });
  if (r.status !== 200) throw new Error(`archive ${day} ${tag ?? ''}: HTTP ${r.status}`);
  return r.json.data as VitalsRecord[];
}

/**
 * Every Vitals series a day's records must give, as `name{labels} seconds` → value, derived from
 * the spec's fields and the catalogue's rules (health absent when nothing is eligible).
 */
export function expectedSeries(portal: string, day: string, tag: string | undefined, records: readonly VitalsRecord[]): Map<string, number> {
  const ts = endOfDaySeconds(day);
  const t = tag === undefined ? '' : `,tag="${tag}"`;
  const out = new Map<string, number>();
  const put = (name: string, labels: string, value: number) => out.set(`${name}{portal="${portal}",${labels}${t}} ${ts}`, value);
  for (const r of records) {
    const i = `integration="${r.key}"`;
    put('posture_vitals_integration_info', `${i},name="${r.name}",vitals_enabled="${r.vitalsEnabled}"`, 1);
    if (r.vitalsEnabled) {
      const dp = r.agentDeployedPossibleCompliant!, dc = r.agentDeployedCompliant!, fp = r.agentFunctioningPossibleCompliant!;
      const fc = r.agentFunctioningCompliant!, cp = r.configurationPossibleCompliant!, cc = r.configurationCompliant!;
      put('posture_vitals_eligible_devices', `${i},stage="deployment"`, dp);
      put('posture_vitals_eligible_devices', `${i},stage="function"`, fp);
      put('posture_vitals_eligible_devices', `${i},stage="configuration"`, cp);
      put('posture_vitals_compliant_devices', `${i},stage="deployment"`, dc);
      put('posture_vitals_compliant_devices', `${i},stage="function"`, fc);
      put('posture_vitals_compliant_devices', `${i},stage="configuration"`, cc);
      if (dp > 0) put('posture_vitals_health_ratio', i, cc / dp);
      put('posture_vitals_funnel_consistent', i, fp === dc && cp === fc && dc <= dp && fc <= fp && cc <= cp ? 1 : 0);
    } else {
      put('posture_vitals_active_agents', i, r.activeAgents!);
    }
  }
  return out;
}

/** An OpenMetrics file with timestamps read back as `series seconds` → value (label values may hold spaces). */
export function readOpenMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const b = line.lastIndexOf(' ');
    const a = line.lastIndexOf(' ', b - 1);
    out.set(`${line.slice(0, a)} ${line.slice(b + 1)}`, Number(line.slice(a + 1, b)));
  }
  return out;
}

/** The largest number of requests in any 60 s window ending at a request. */
export function busiestMinute(requests: readonly SimRequest[]): number {
  let worst = 0;
  for (const r of requests) worst = Math.max(worst, requests.filter((x) => x.time > r.time - 60_000 && x.time <= r.time).length);
  return worst;
}

import { describe, expect, it } from 'vitest';
import { isSlowJob, JOBS, type Job } from '../../src/domain.js';
import { JOB_INTERVALS } from '../../src/config/intervals.js';
import { loadConfig } from '../../src/config/load.js';
import type { PortalConfig } from '../../src/config/types.js';
import { ConfigErrors } from '../../src/errors.js';
import { runMain } from '../support/cli.js';

const base = { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: 'k-secret-value-123' };

/** A job's interval as the portal carries it. */
const intervalOf = (p: PortalConfig, job: Job): number => (isSlowJob(job) ? p.slowIntervals[job] : p.intervals[job]);

/** The variable, flag and config key of a job's interval, spelt out from the README's naming rule. */
function names(job: Job) {
  const key = JOB_INTERVALS[job].key;
  return { key, env: `POSTURE_${key.toUpperCase()}`, flag: key.replace(/_/g, '-') };
}

describe('a per-portal interval is one row of JOB_INTERVALS', () => {
  it('has a row for every job, inheriting POSTURE_INTERVAL_SECONDS as the README says (the resolved pass hourly on its own)', () => {
    expect(Object.keys(JOB_INTERVALS).sort()).toEqual([...JOBS].sort());
    expect(Object.entries(JOB_INTERVALS).filter(([, row]) => row.inherits).map(([job]) => job).sort()).toEqual(['alerts', 'devices', 'vitals']);
    expect(JOB_INTERVALS.resolved).toMatchObject({ inherits: false, default: 3600 });
    expect(JOB_INTERVALS.access).toMatchObject({ inherits: false, default: 3600 });
    expect(JOB_INTERVALS.directory).toMatchObject({ inherits: false, default: 86400 });
  });

  describe.each(JOBS.map((job) => [job]))('the row of %s', (job) => {
    const { key, env, flag } = names(job);
    const row = JOB_INTERVALS[job];

    it('is read from its variable, its flag, the config file and a portals entry, in that order of precedence', () => {
      expect(intervalOf(loadConfig({ env: { ...base, [env]: '120' } }).portals[0]!, job)).toBe(120);
      expect(intervalOf(loadConfig({ env: { ...base, [env]: '120' }, flags: { [key]: '130' } }).portals[0]!, job)).toBe(130);
      expect(intervalOf(loadConfig({ env: { ...base, POSTURE_CONFIG: JSON.stringify({ [key]: 140 }) } }).portals[0]!, job)).toBe(140);
      const file = JSON.stringify({ [key]: 150, portals: [{ portal: 'a', base_url: 'https://a.example.com/public-api/v1', api_key: 'k1', [key]: 160 }, { portal: 'b', base_url: 'https://b.example.com/public-api/v1', api_key: 'k2' }] });
      expect(loadConfig({ env: { POSTURE_CONFIG: file } }).portals.map((p) => intervalOf(p, job))).toEqual([160, 150]);
    });

    it('defaults to POSTURE_INTERVAL_SECONDS when it inherits, else to its own default, whatever POSTURE_INTERVAL_SECONDS says', () => {
      const unset = intervalOf(loadConfig({ env: { ...base, POSTURE_INTERVAL_SECONDS: '240' } }).portals[0]!, job);
      expect(unset).toBe(row.inherits ? 240 : (row as { default: number }).default);
    });

    it('takes 10 to 86400 seconds, and refuses a value outside them naming the variable and its flag', () => {
      expect(intervalOf(loadConfig({ env: { ...base, [env]: '10' } }).portals[0]!, job)).toBe(10);
      expect(intervalOf(loadConfig({ env: { ...base, [env]: '86400' } }).portals[0]!, job)).toBe(86400);
      for (const bad of ['9', '86401', '1.5', 'hourly']) {
        let thrown: unknown;
        try {
          loadConfig({ env: { ...base, [env]: bad } });
        } catch (err) {
          thrown = err;
        }
        expect(thrown).toBeInstanceOf(ConfigErrors);
        expect((thrown as ConfigErrors).problems.map((p) => p.message)).toEqual([expect.stringMatching(new RegExp(`^${env} \\(--${flag}\\)="${bad.replace('.', '\\.')}" is not valid: set a whole number from 10 to 86400 \\(default `))]);
      }
    });

    it('is listed in --help with its flag beside its variable', async () => {
      const r = await runMain(['--help'], { env: {} });
      expect(r.stdout).toMatch(new RegExp(`--${flag} +${env}\n`));
    });
  });
});

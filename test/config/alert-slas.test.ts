import { describe, expect, it } from 'vitest';
import { alertSlaLines } from '../../src/config/alert-slas.js';
import { loadConfig, type ConfigSources } from '../../src/config/load.js';
import { ConfigErrors } from '../../src/errors.js';

const base = { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: 'k-secret-value-123' };
const FILE = '/etc/posture.yaml';
const H = 3600;
const D = 86_400;

/** The ConfigErrors' messages `sources` are refused with; fails the test when they load. */
function problems(sources: ConfigSources): string[] {
  let thrown: unknown;
  try {
    loadConfig(sources);
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(ConfigErrors);
  return (thrown as ConfigErrors).problems.map((p) => p.message);
}

const slasOf = (sources: ConfigSources) => loadConfig(sources).portals.map((p) => p.alertSlas);
const yaml = (text: string, env: Record<string, string> = {}): ConfigSources => ({ env: { ...base, ...env, POSTURE_CONFIG_FILE: FILE }, readFile: () => text });

describe('alert_slas', () => {
  it('defaults to red 1d, amber 7d, green 30d', () => {
    expect(slasOf({ env: base })).toEqual([{ red: D, amber: 7 * D, green: 30 * D }]);
  });

  it.each([
    ['every severity', 'red=12h,amber=3d,green=2w', { red: 12 * H, amber: 3 * D, green: 14 * D }],
    ['one severity: the others keep their defaults', 'red=4h', { red: 4 * H, amber: 7 * D, green: 30 * D }],
    ['spaces and an empty entry', ' amber = 1d1h , , green=90m ', { red: D, amber: D + H, green: 90 * 60 }],
    ['an empty value: the defaults', '', { red: D, amber: 7 * D, green: 30 * D }],
  ])('reads POSTURE_ALERT_SLAS with %s', (_what, value, slas) => {
    expect(slasOf({ env: { ...base, POSTURE_ALERT_SLAS: value } })).toEqual([slas]);
  });

  it('reads a mapping in a YAML config file, and the same as a string', () => {
    expect(slasOf(yaml('alert_slas:\n  red: 2h\n  green: 60d\n'))).toEqual([{ red: 2 * H, amber: 7 * D, green: 60 * D }]);
    expect(slasOf(yaml('alert_slas: red=2h,green=60d\n'))).toEqual([{ red: 2 * H, amber: 7 * D, green: 60 * D }]);
  });

  it('reads a mapping in inline JSON (POSTURE_CONFIG)', () => {
    expect(slasOf({ env: { ...base, POSTURE_CONFIG: JSON.stringify({ alert_slas: { amber: '36h' } }) } })).toEqual([{ red: D, amber: 36 * H, green: 30 * D }]);
  });

  it('takes the flag over the environment over the file, each value whole (what it leaves out is the default, not another layer\'s)', () => {
    const sources = yaml('alert_slas: {red: 2h, amber: 2d}\n', { POSTURE_ALERT_SLAS: 'red=3h' });
    expect(slasOf(sources)).toEqual([{ red: 3 * H, amber: 7 * D, green: 30 * D }]);
    expect(slasOf({ ...sources, flags: { alert_slas: 'green=1d' } })).toEqual([{ red: D, amber: 7 * D, green: D }]);
  });

  it('is set per portal in a `portals` list, over the top-level value', () => {
    const file = `
alert_slas: {red: 6h}
portals:
  - {portal: a, base_url: "https://a.example.com/public-api/v1", api_key: k-a-0123456789, alert_slas: {amber: 1d}}
  - {portal: b, base_url: "https://b.example.com/public-api/v1", api_key: k-b-0123456789}
`;
    const c = loadConfig({ env: { POSTURE_CONFIG_FILE: FILE }, readFile: () => file });
    expect(c.portals.map((p) => [p.name, p.alertSlas])).toEqual([
      ['a', { red: D, amber: D, green: 30 * D }],
      ['b', { red: 6 * H, amber: 7 * D, green: 30 * D }],
    ]);
  });

  const ENV = 'POSTURE_ALERT_SLAS (--alert-slas)';
  it.each([
    ['a duration that is not one', { POSTURE_ALERT_SLAS: 'red=1x' }, [`${ENV}: red="1x" is not valid: give a Prometheus duration above 0, such as 12h, 1d or 3d (default red=1d).`]],
    ['a zero duration', { POSTURE_ALERT_SLAS: 'green=0s' }, [`${ENV}: green="0s" is not valid: give a Prometheus duration above 0, such as 12h, 1d or 3d (default green=30d).`]],
    ['a number of seconds', { POSTURE_ALERT_SLAS: 'amber=3600' }, [`${ENV}: amber="3600" is not valid: give a Prometheus duration above 0, such as 12h, 1d or 3d (default amber=7d).`]],
    ['a severity that has no SLA', { POSTURE_ALERT_SLAS: 'unknown=1d' }, [`${ENV}: "unknown" is not a severity: give SLAs for red, amber or green (e.g. red=1d,amber=7d,green=30d).`]],
    ['a severity written as the API writes the state', { POSTURE_ALERT_SLAS: 'Red=1d' }, [`${ENV}: "Red" is not a severity: give SLAs for red, amber or green (e.g. red=1d,amber=7d,green=30d).`]],
    ['a severity given twice', { POSTURE_ALERT_SLAS: 'red=1d,red=2d' }, [`${ENV}: red is given twice: give each severity once.`]],
    ['an entry without =', { POSTURE_ALERT_SLAS: 'red:1d' }, [`${ENV}: "red:1d" is not severity=duration: write e.g. red=1d,amber=7d,green=30d.`]],
    [
      'two bad values: one line each',
      { POSTURE_ALERT_SLAS: 'red=soon,green=later' },
      [
        `${ENV}: red="soon" is not valid: give a Prometheus duration above 0, such as 12h, 1d or 3d (default red=1d).`,
        `${ENV}: green="later" is not valid: give a Prometheus duration above 0, such as 12h, 1d or 3d (default green=30d).`,
      ],
    ],
  ])('refuses %s, naming the setting and the fix', (_what, env, lines) => {
    expect(problems({ env: { ...base, ...env } })).toEqual(lines);
  });

  it.each([
    ['a number in the mapping', 'alert_slas: {red: 86400}\n', [`config file ${FILE}: alert_slas: red=86400 is not valid: give a Prometheus duration above 0, such as 12h, 1d or 3d (default red=1d).`]],
    ['a list', 'alert_slas: [red, 1d]\n', [`config file ${FILE}: alert_slas must be a mapping of severity to duration ({red: 1d, amber: 7d, green: 30d}) or a string such as red=1d,amber=7d,green=30d.`]],
    ['a misspelt severity in the mapping', 'alert_slas: {rde: 1d}\n', [`config file ${FILE}: alert_slas: "rde" is not a severity: give SLAs for red, amber or green (e.g. red=1d,amber=7d,green=30d).`]],
  ])('refuses %s in the config file, naming where', (_what, text, lines) => {
    expect(problems(yaml(text))).toEqual(lines);
  });

  it('refuses a bad flag value, naming the flag', () => {
    expect(problems({ env: base, flags: { alert_slas: 'amber=1w2w' } })).toEqual(['--alert-slas: amber="1w2w" is not valid: give a Prometheus duration above 0, such as 12h, 1d or 3d (default amber=7d).']);
  });

  it('is described once for check-config when every portal has the same, else per group of portals', () => {
    const same = { red: D, amber: 7 * D, green: 30 * D };
    expect(alertSlaLines([{ name: 'a', alertSlas: same }, { name: 'b', alertSlas: same }])).toEqual(['alert SLAs: red 1d, amber 7d, green 30d (posture_alerts_over_sla)']);
    expect(alertSlaLines([{ name: 'a', alertSlas: same }, { name: 'b', alertSlas: { red: 5400, amber: 36 * H, green: 0.5 } }, { name: 'c', alertSlas: same }])).toEqual([
      'alert SLAs of a, c: red 1d, amber 7d, green 30d',
      'alert SLAs of b: red 1h30m, amber 1d12h, green 500ms',
    ]);
  });
});

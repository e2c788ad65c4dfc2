import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';

const base = { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: 'k-secret-value-123' };

describe('POSTURE_MAX_SERIES_PER_FAMILY', () => {
  it('defaults to 1000 and is read from the environment, a flag, and per portal from a config file', () => {
    expect(loadConfig({ env: base }).portals[0]!.maxSeriesPerFamily).toBe(1000);
    expect(loadConfig({ env: { ...base, POSTURE_MAX_SERIES_PER_FAMILY: '2000' } }).portals[0]!.maxSeriesPerFamily).toBe(2000);
    expect(loadConfig({ env: base, flags: { max_series_per_family: '50' } }).portals[0]!.maxSeriesPerFamily).toBe(50);
    const yaml = `
max_series_per_family: 300
portals:
  - portal: eu
    base_url: https://eu.example.com/public-api/v1
    api_key_file: /run/eu
    max_series_per_family: 20
  - portal: us
    base_url: https://us.example.com/public-api/v1
    api_key_file: /run/us
`;
    const c = loadConfig({ env: { POSTURE_CONFIG_FILE: '/etc/posture.yaml' }, readFile: () => yaml });
    expect(c.portals.map((p) => [p.name, p.maxSeriesPerFamily])).toEqual([['eu', 20], ['us', 300]]);
  });

  it.each(['9', '1000001', 'many'])('refuses %s with a message naming the setting and its range', (value) => {
    expect(() => loadConfig({ env: { ...base, POSTURE_MAX_SERIES_PER_FAMILY: value } })).toThrow(
      `POSTURE_MAX_SERIES_PER_FAMILY (--max-series-per-family)=${JSON.stringify(value)} is not valid: set a whole number from 10 to 1000000 (default 1000).`,
    );
  });
});

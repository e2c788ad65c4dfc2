import { describe, expect, it } from 'vitest';
import { portalIdentity } from '../../src/config/identity.js';
import { loadConfig, type Config } from '../../src/config/load.js';
import { ConfigErrors } from '../../src/errors.js';
import { checkServeConfig } from '../../src/schedule/fit.js';
import { explainPlan } from '../../src/schedule/explain.js';
import { itMaps } from '../support/maps.js';

describe('portalIdentity', () => {
  itMaps('%s is the portal %s', portalIdentity, [
    ['https://acme.example.com/public-api/v1', 'https://acme.example.com/public-api/v1'],
    ['https://ACME.Example.COM/public-api/v1', 'https://acme.example.com/public-api/v1'],
    ['https://acme.example.com:443/public-api/v1', 'https://acme.example.com/public-api/v1'],
    ['https://acme.example.com/public-api/v1/', 'https://acme.example.com/public-api/v1'],
    ['HTTPS://acme.example.com:443/public-api/v1//', 'https://acme.example.com/public-api/v1'],
    ['http://127.0.0.1:80/public-api/v1', 'http://127.0.0.1/public-api/v1'],
    ['https://acme.example.com:8443/public-api/v1', 'https://acme.example.com:8443/public-api/v1'],
    // A fully qualified host (trailing dot) is the same host.
    ['https://acme.example.com./public-api/v1', 'https://acme.example.com/public-api/v1'],
    ['https://acme.example.com.:8443/public-api/v1', 'https://acme.example.com:8443/public-api/v1'],
    // Repeated slashes anywhere in the path.
    ['https://acme.example.com//public-api/v1', 'https://acme.example.com/public-api/v1'],
    ['https://acme.example.com/public-api///v1', 'https://acme.example.com/public-api/v1'],
    // Percent-encoded unreserved characters are the characters; other escapes in upper case.
    ['https://acme.example.com/public%2Dapi/%76%31', 'https://acme.example.com/public-api/v1'],
    ['https://acme.example.com/a%2fb/v1', 'https://acme.example.com/a%2Fb/v1'],
    // Dot segments.
    ['https://acme.example.com/x/../public-api/./v1', 'https://acme.example.com/public-api/v1'],
  ]);

  it('tells apart portals that differ in host, port or path', () => {
    const ids = [
      'https://acme.example.com/public-api/v1',
      'https://globex.example.com/public-api/v1',
      'https://acme.example.com:8443/public-api/v1',
      'https://acme.example.com/other/public-api/v1',
      // Paths are case-sensitive, and an encoded slash is not a slash.
      'https://acme.example.com/Public-API/v1',
      'https://acme.example.com/public-api%2Fv1',
      // Another scheme is another origin.
      'http://acme.example.com/public-api/v1',
    ].map(portalIdentity);
    expect(new Set(ids).size).toBe(7);
  });
});

const KEYS = { red: 'k-red-0123456789', blue: 'k-blue-0123456789', other: 'k-other-0123456789' };

/** A config file's `portals` as inline JSON, with `top` beside it. */
function configOf(portals: object[], top: object = {}, env: Record<string, string> = {}, flags: Record<string, string> = {}): Config {
  return loadConfig({ env: { POSTURE_CONFIG: JSON.stringify({ ...top, portals }), ...env }, flags });
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigErrors);
    return (err as ConfigErrors).problems.map((p) => p.message);
  }
  throw new Error('expected ConfigErrors');
}

describe('entries of one portal', () => {
  const two = [
    { portal: 'acme-red', base_url: 'https://acme.example.com/public-api/v1', api_key: KEYS.red },
    // The same portal written another way: upper case, default port, trailing slash.
    { portal: 'acme-blue', base_url: 'https://ACME.example.com:443/public-api/v1/', api_key: KEYS.blue },
  ];

  it('are one portal whether given by base URL or by Cloud ID and host', () => {
    const config = configOf([...two, { portal: 'acme-cloud', cloud_id: 'Acme', api_host: 'Example.com', api_key: KEYS.other }]);
    expect(new Set(config.portals.map((p) => portalIdentity(p.baseUrl)))).toEqual(new Set(['https://acme.example.com/public-api/v1']));
  });

  it('must agree on requests_per_minute: one line naming both entries and the portal', () => {
    expect(problemsOf(() => configOf([two[0]!, { ...two[1]!, requests_per_minute: 3 }]))).toEqual([
      'POSTURE_CONFIG: portals[0] (acme-red) and portals[1] (acme-blue) read the same portal https://acme.example.com/public-api/v1 but with requests_per_minute 5 and 3: the share belongs to the portal, so give both the same value.',
    ]);
    // The same value, given to one and inherited by the other, is fine.
    expect(configOf([{ ...two[0]!, requests_per_minute: 4 }, two[1]!], {}, { POSTURE_REQUESTS_PER_MINUTE: '4' }).portals).toHaveLength(2);
  });

  it('need names of their own (each keeps its series)', () => {
    const unnamed = two.map(({ portal: _portal, ...rest }) => rest);
    expect(problemsOf(() => configOf(unnamed))).toEqual(['POSTURE_CONFIG: portals[1] repeats the portal name "acme.example.com": give each portal a distinct `portal`.']);
  });

  it('land on one shard, whatever the shard count, and every entry on exactly one', () => {
    const others = Array.from({ length: 11 }, (_, i) => ({ portal: `p${i}`, base_url: `https://p${i}.example.com/public-api/v1`, api_key: KEYS.other }));
    const portals = [two[0]!, ...others.slice(0, 5), two[1]!, ...others.slice(5)];
    for (const total of [2, 3, 4, 7]) {
      const owned = Array.from({ length: total }, (_, shard) => configOf(portals, {}, {}, { shard: String(shard), total_shards: String(total) }).portals.map((p) => p.name));
      const all = owned.flat();
      expect(all.sort()).toEqual(portals.map((p) => p.portal).sort());
      const red = owned.findIndex((names) => names.includes('acme-red'));
      expect(owned[red], `${total} shards`).toContain('acme-blue');
    }
  });

  it('spend one share in serve: entries that fit alone but not together are refused, naming both', () => {
    // Each: vitals 1 + devices 2 + alerts 1 every 60 s = 240 per hour, 1 of its resolved-alerts pass, 3 of its access
    // settings and 0.04 of its directory, under the 300 of a share of 5; 488.1 together, 489, 1.63 times → 1.7. Or a share of 9 for both (8 allows 480): 8 requests a minute fit 9 per 61 s.
    const config = configOf(two, { interval_seconds: 60 });
    expect(checkServeConfig(config).map((e) => e.message)).toEqual([
      'portals acme-red, acme-blue read one portal (https://acme.example.com/public-api/v1) with one share: their intervals need 489 requests per hour together but the share allows 300 (5/min): lengthen their intervals about 1.7 times, or raise portals[0].requests_per_minute to 9 (a new key) in POSTURE_CONFIG and raise portals[1].requests_per_minute to 9 (a new key) in POSTURE_CONFIG, or read the portal with fewer keys.',
    ]);
    // Every 120 s they run together (every 110 s the slow sources' requests make a run late, see test/schedule/fit.test.ts).
    expect(checkServeConfig(configOf(two, { interval_seconds: 120 }))).toEqual([]);
    expect(explainPlan(config)[0]).toBe('portal acme-red (https://acme.example.com/public-api/v1, key from value): share 5 requests per 60 s (300 per hour), shared with acme-blue (the same portal)');
  });
});

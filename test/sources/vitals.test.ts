// The Vitals source (spec 2.7, 4.5): what it asks, which records it keeps, and the samples of
// each family for records built by hand. Expected values are worked out here from the spec's
// fields: eligible = the *PossibleCompliant counts, compliant = the *Compliant counts, health =
// configurationCompliant / agentDeployedPossibleCompliant, and the funnel rule (each stage's
// possible equals the previous stage's compliant; no compliant above its possible).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { ListMismatchError } from '../../src/errors.js';
import type { RunContext } from '../../src/schedule/request.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { fetchArchive, foldVitals, vitals, type VitalsList } from '../../src/sources/vitals.js';
import { VITALS_FAMILIES } from '../support/families.js';
import { runContexts } from '../support/run-context.js';

type Row = readonly [name: string, labels: Record<string, string>, value: number];

/** The samples of `lists` (no portal label: the caller adds it), sorted, and the folded counts. */
function samplesOf(lists: readonly VitalsList[], cap = 1000): { rows: Row[]; folded: Map<string, number> } {
  const rows: Row[] = [];
  const folded = new Map<string, number>();
  vitals.samples(lists, (name, labels, value) => rows.push([name, labels, value]), cap, folded);
  return { rows: sorted(rows), folded };
}

const keyOf = ([name, labels]: Row) => `${name}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
const sorted = (rows: Row[]) => [...rows].sort((x, y) => (keyOf(x) < keyOf(y) ? -1 : keyOf(x) > keyOf(y) ? 1 : 0));

const enabled = (key: string, name: string, counts: readonly [number, number, number, number, number, number]) => ({
  key,
  name,
  vitalsEnabled: true,
  agentDeployedPossibleCompliant: counts[0],
  agentDeployedCompliant: counts[1],
  agentFunctioningPossibleCompliant: counts[2],
  agentFunctioningCompliant: counts[3],
  configurationPossibleCompliant: counts[4],
  configurationCompliant: counts[5],
});
const disabled = (key: string, name: string, activeAgents: number) => ({ key, name, vitalsEnabled: false, activeAgents });

/** One integration's funnel samples: its eligible and its compliant devices at each stage, in the funnel's order. */
function funnel(integration: string, counts: { eligible: readonly number[]; compliant: readonly number[] }): Row[] {
  return ['deployment', 'function', 'configuration'].flatMap((stage, i): Row[] => [
    ['posture_vitals_eligible_devices', { integration, stage }, counts.eligible[i]!],
    ['posture_vitals_compliant_devices', { integration, stage }, counts.compliant[i]!],
  ]);
}

describe('Vitals samples of records built by hand', () => {
  const records = [
    enabled('crowdstrike', 'CrowdStrike Falcon', [100, 90, 90, 80, 80, 70]),
    enabled('empty', 'Nothing Yet', [0, 0, 0, 0, 0, 0]),
    disabled('jamf', 'Jamf Pro', 42),
  ];

  it('gives each family its labels and values: info 1, the funnel per stage, health, the rule, active agents', () => {
    const { rows, folded } = samplesOf([foldVitals(records)]);
    expect(rows).toEqual(
      sorted([
        ['posture_vitals_integration_info', { integration: 'crowdstrike', name: 'CrowdStrike Falcon', vitals_enabled: 'true' }, 1],
        ...funnel('crowdstrike', { eligible: [100, 90, 80], compliant: [90, 80, 70] }),
        ['posture_vitals_health_ratio', { integration: 'crowdstrike' }, 0.7],
        ['posture_vitals_funnel_consistent', { integration: 'crowdstrike' }, 1],
        // No eligible devices: every count 0, the rule holds, and no health ratio (0 / 0).
        ['posture_vitals_integration_info', { integration: 'empty', name: 'Nothing Yet', vitals_enabled: 'true' }, 1],
        ...funnel('empty', { eligible: [0, 0, 0], compliant: [0, 0, 0] }),
        ['posture_vitals_funnel_consistent', { integration: 'empty' }, 1],
        // Vitals disabled: only info and active agents.
        ['posture_vitals_integration_info', { integration: 'jamf', name: 'Jamf Pro', vitals_enabled: 'false' }, 1],
        ['posture_vitals_active_agents', { integration: 'jamf' }, 42],
      ]),
    );
    expect(Object.fromEntries(folded)).toEqual(Object.fromEntries(VITALS_FAMILIES.map((f) => [f, 0])));
  });

  it('adds the tag label to every series of a tag view', () => {
    const { rows } = samplesOf([foldVitals(records.slice(0, 1), 'laptops'), foldVitals([records[2]!], 'servers')]);
    expect(rows.filter(([name]) => name === 'posture_vitals_integration_info')).toEqual(
      sorted([
        ['posture_vitals_integration_info', { integration: 'crowdstrike', name: 'CrowdStrike Falcon', vitals_enabled: 'true', tag: 'laptops' }, 1],
        ['posture_vitals_integration_info', { integration: 'jamf', name: 'Jamf Pro', vitals_enabled: 'false', tag: 'servers' }, 1],
      ]),
    );
    for (const [name, labels] of rows) expect(labels.tag, name).toBe(labels.integration === 'jamf' ? 'servers' : 'laptops');
    expect(rows.find(([name]) => name === 'posture_vitals_health_ratio')).toEqual(['posture_vitals_health_ratio', { integration: 'crowdstrike', tag: 'laptops' }, 0.7]);
    expect(rows.find(([name]) => name === 'posture_vitals_active_agents')).toEqual(['posture_vitals_active_agents', { integration: 'jamf', tag: 'servers' }, 42]);
  });

  it('gives the same integration in the whole portal and in a tag view a series each', () => {
    const { rows } = samplesOf([foldVitals([records[2]!]), foldVitals([disabled('jamf', 'Jamf Pro', 7)], 'laptops')]);
    expect(rows.filter(([name]) => name === 'posture_vitals_active_agents')).toEqual(
      sorted([
        ['posture_vitals_active_agents', { integration: 'jamf' }, 42],
        ['posture_vitals_active_agents', { integration: 'jamf', tag: 'laptops' }, 7],
      ]),
    );
  });

  it.each([
    ['a funnel that holds', [10, 8, 8, 6, 6, 5], 1],
    ['every stage full (compliant equal to eligible)', [10, 10, 10, 10, 10, 10], 1],
    ['function eligible not the deployed compliant', [10, 8, 7, 6, 6, 5], 0],
    ['configuration eligible not the functioning compliant', [10, 8, 8, 6, 5, 5], 0],
    ['more deployed than eligible', [10, 11, 11, 6, 6, 5], 0],
    ['more functioning than eligible', [10, 8, 8, 9, 9, 5], 0],
    ['more configured than eligible', [10, 8, 8, 6, 6, 7], 0],
  ] as const)('says %s is consistent: %i', (_what, counts, consistent) => {
    const { rows } = samplesOf([foldVitals([enabled('x', 'X', counts)])]);
    expect(rows.find(([name]) => name === 'posture_vitals_funnel_consistent')?.[2]).toBe(consistent);
    expect(rows.find(([name]) => name === 'posture_vitals_health_ratio')?.[2]).toBe(counts[5] / counts[0]);
  });

  it('sums the invalid records of every list', () => {
    const whole = foldVitals([{ key: 'a' }, enabled('b', 'B', [1, 1, 1, 1, 1, 1])]);
    const tagged = foldVitals([null, 'x', disabled('c', 'C', 1)], 'laptops');
    expect([whole.invalid, tagged.invalid]).toEqual([1, 2]);
    expect(vitals.invalidOf([whole, tagged])).toBe(3);
    expect(vitals.invalidOf([])).toBe(0);
  });
});

describe('Vitals records the fold keeps', () => {
  it('skips a malformed record or a repeated key, counts each, and logs the first five with the field, never the record', () => {
    const logger = memoryLogger();
    const good = enabled('okta', 'Okta', [5, 5, 5, 5, 5, 5]);
    const list = foldVitals(
      [
        good,
        { ...good, agentDeployedCompliant: 'five' }, // 1: mistyped count
        disabled('', 'No Key', 3), // 2: empty key
        { ...good, name: 'Okta again' }, // 3: repeated key
        disabled('jamf', 'Jamf', -1), // 4: negative count
        disabled('intune', 'Intune', 9),
        { key: 'kandji', name: 'Kandji', vitalsEnabled: false }, // 6: no activeAgents
        { key: 'secret-looking', name: 'S', vitalsEnabled: 'yes' }, // 7: not logged (past five)
        { ...good, key: 'okta' }, // 8: repeated, not logged
      ],
      'laptops',
      logger,
    );
    expect(list.tag).toBe('laptops');
    expect(list.records.map((r) => [r.key, r.name])).toEqual([
      ['okta', 'Okta'],
      ['intune', 'Intune'],
    ]);
    expect(list.invalid).toBe(7);
    const warned = logger.records().filter((r) => r.level === 'warn');
    expect(warned.map((r) => [r.msg, r.source, r.index])).toEqual([
      ['skipped a malformed record', 'vitals (tag laptops)', 1],
      ['skipped a malformed record', 'vitals (tag laptops)', 2],
      ['skipped a malformed record', 'vitals (tag laptops)', 3],
      ['skipped a malformed record', 'vitals (tag laptops)', 4],
      ['skipped a malformed record', 'vitals (tag laptops)', 6],
    ]);
    expect(warned[0]!.reason).toContain('agentDeployedCompliant');
    expect(warned[2]!.reason).toBe('repeated integration key "okta"');
    expect(warned[3]!.reason).toContain('activeAgents');
    // The record itself (its name) is never logged.
    expect(logger.lines.join('\n')).not.toContain('Okta again');
  });

  it('names the whole portal\'s list "vitals" in its log lines', () => {
    const logger = memoryLogger();
    const list = foldVitals([42], undefined, logger);
    expect(list).toEqual({ tag: undefined, records: [], invalid: 1 });
    expect(logger.records().map((r) => [r.level, r.source, r.index])).toEqual([['warn', 'vitals', 0]]);
  });

  it('counts without logging when given no logger', () => {
    expect(foldVitals([1, 2, 3, 4, 5, 6, 7]).invalid).toBe(7);
  });
});

const withTags = (ctx: RunContext, vitalsTags: string[]): RunContext => ({ ...ctx, portal: { ...ctx.portal, vitalsTags } });

describe('a Vitals run against the simulated portal', () => {
  const setup = runContexts();
  let sim: Simulator;
  const clock = new FakeClock();
  beforeAll(async () => {
    sim = await startSimulator({ rateLimit: false, moving: false, clock });
  });
  afterAll(async () => {
    await sim.close();
  });

  const fixture = [
    { ...enabled('crowdstrike', 'CrowdStrike', [10, 9, 9, 8, 8, 7]), tags: ['laptops', 'servers'] },
    { ...disabled('jamf', 'Jamf', 4), tags: ['laptops'] },
    { ...disabled('intune', 'Intune', 3), tags: [] },
  ];

  it('asks /vitals for the whole portal, then each tag in order, one list each', async () => {
    sim.setFixture({ vitals: fixture });
    const ctx = withTags(setup(sim, clock).ctx, ['laptops', 'servers']);
    const from = sim.requests.length;
    const lists = await vitals.run(ctx);
    expect(lists.map((l) => [l.tag, l.records.map((r) => r.key), l.invalid])).toEqual([
      [undefined, ['crowdstrike', 'jamf', 'intune'], 0],
      ['laptops', ['crowdstrike', 'jamf'], 0],
      ['servers', ['crowdstrike'], 0],
    ]);
    const asked = sim.requests.slice(from).map((q) => [q.path, q.query.tag, q.query.archiveDate]);
    expect(asked).toEqual([
      ['/vitals', undefined, undefined],
      ['/vitals', 'laptops', undefined],
      ['/vitals', 'servers', undefined],
    ]);
    expect(ctx.requests.get('/vitals\u0000200')).toBe(3);
  });

  it.each([
    [[0, 1], '/vitals (tag laptops) returned 2 records but its total says 3: the list is incomplete.', 3, 2],
    [[1], '/vitals returned 3 records but its total says 4: the list is incomplete.', 4, 3],
  ])('fails the run with a ListMismatchError naming the list when a total disagrees with the records (total off by %j)', async (deltas, message, total, received) => {
    sim.setFixture({ vitals: fixture });
    const ctx = withTags(setup(sim, clock).ctx, ['laptops']);
    for (const delta of deltas) sim.addFault({ path: '/vitals', times: 1, fault: { kind: 'total-mismatch', delta } });
    const err = await vitals.run(ctx).catch((e: unknown) => e);
    sim.clearFaults();
    expect(err).toBeInstanceOf(ListMismatchError);
    expect(err).toMatchObject({ endpoint: '/vitals', message, expected: total, received });
  });

  it('asks one archived day of one list with archiveDate, and names the day when its total disagrees', async () => {
    sim.setFixture({ vitals: fixture });
    const { ctx } = setup(sim, clock);
    const from = sim.requests.length;
    const list = await fetchArchive(ctx, '20261120', 'laptops');
    expect([list.tag, list.records.map((r) => r.key)]).toEqual(['laptops', ['crowdstrike', 'jamf']]);
    expect(sim.requests.slice(from).map((q) => [q.path, q.query.tag, q.query.archiveDate])).toEqual([['/vitals', 'laptops', '20261120']]);
    sim.addFault({ path: '/vitals', times: 2, fault: { kind: 'total-mismatch', delta: 2 } });
    await expect(fetchArchive(ctx, '20261121', undefined)).rejects.toThrow('/vitals?archiveDate=20261121 returned 3 records but its total says 5: the list is incomplete.');
    await expect(fetchArchive(ctx, '20261121', 'laptops')).rejects.toThrow('/vitals?archiveDate=20261121 (tag laptops) returned 2 records but its total says 4: the list is incomplete.');
    sim.clearFaults();
  });
});

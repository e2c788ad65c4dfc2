/**
 * Numbers as JSON may write them. A count or a `total` is a whole number however it is written
 * (`5`, `5.0`, `5e0`, `50e-1`, `0.5E+1`): each is read as exactly that number. Up to 2^53 - 1
 * (Number.MAX_SAFE_INTEGER) every whole number is exact; past it a double cannot tell neighbours
 * apart (9007199254740993 reads as 9007199254740992), so such a count makes its record invalid
 * (counted and logged) and such a `total` makes the response invalid: never a wrong number.
 */
import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/collect/catalogue.js';
import { toSamples } from '../../src/collect/samples.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { InvalidResponseError } from '../../src/errors.js';
import { renderText } from '../../src/metrics/render.js';
import { foldVitals, type VitalsList } from '../../src/sources/vitals.js';
import { PortalReader } from '../../src/upstream/reader.js';
import { failure } from '../support/upstream.js';

const ORIGIN = 'http://127.0.0.1:9';
const BASE = `${ORIGIN}/public-api/v1`;
const KEY = 'mock-key-0c6e1b2a9d8f7e5c4b3a';

let agent: MockAgent;
beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
});
afterEach(async () => {
  agent.assertNoPendingInterceptors();
  await agent.close();
});

/** Reads a /vitals body written by hand (so the number texts reach the reader as written) and folds it. */
async function readVitals(body: string): Promise<{ list: VitalsList; total: number; logger: ReturnType<typeof memoryLogger> }> {
  agent.get(ORIGIN).intercept({ path: '/public-api/v1/vitals' }).reply(200, body);
  const logger = memoryLogger();
  const reader = new PortalReader({ baseUrl: BASE, apiKey: KEY, clock: new FakeClock(Date.UTC(2026, 10, 22)), logger, dispatcher: agent });
  const res = await reader.read({ endpoint: '/vitals', query: {} }, () => {
    const records: unknown[] = [];
    return { record: (r: unknown) => void records.push(r), finish: () => foldVitals(records, undefined, logger) };
  });
  return { list: res.result, total: res.total, logger };
}

const envelope = (total: string, records: readonly string[]) => `{"offset":0,"limit":0,"total":${total},"data":[${records.join(',')}],"success":true,"statusCode":200,"message":"Successfully retrieved vitals."}`;
const disabled = (key: string, activeAgents: string) => `{"key":"${key}","name":"${key}","vitalsEnabled":false,"activeAgents":${activeAgents}}`;
const enabled = (key: string, n: readonly string[]) =>
  `{"key":"${key}","name":"${key}","vitalsEnabled":true,"agentDeployedPossibleCompliant":${n[0]},"agentDeployedCompliant":${n[1]},"agentFunctioningPossibleCompliant":${n[2]},"agentFunctioningCompliant":${n[3]},"configurationPossibleCompliant":${n[4]},"configurationCompliant":${n[5]}}`;

async function exposition(list: VitalsList): Promise<string> {
  return renderText(toSamples([{ portal: 'acme', vitals: { value: [list], success: true }, alerts: { success: false }, devices: { success: false } }], { version: '0.0.0-test', runtime: 'once' }), 'prometheus', CATALOGUE);
}

describe('whole numbers written as floats', () => {
  it.each(['5', '5.0', '5.000', '5e0', '5E0', '5e+0', '50e-1', '0.5E+1', '500e-2'])('reads a count written %s as 5', async (five) => {
    const { list } = await readVitals(envelope('2', [disabled('a', five), enabled('b', [five, five, five, five, five, five])]));
    expect(list.invalid).toBe(0);
    const text = await exposition(list);
    expect(text).toContain('posture_vitals_active_agents{portal="acme",integration="a"} 5\n');
    expect(text).toContain('posture_vitals_compliant_devices{portal="acme",integration="b",stage="configuration"} 5\n');
    expect(text).toContain('posture_vitals_health_ratio{portal="acme",integration="b"} 1\n');
  });

  it.each(['1.0', '1e0', '10e-1', '0.1e1', '1.00E+0'])('reads a total written %s as 1', async (one) => {
    const { total } = await readVitals(envelope(one, [disabled('a', '3')]));
    expect(total).toBe(1);
  });
});

describe('totals up to 2^53', () => {
  it('keeps a count of 2^53 - 1 exact, down to the last digit of the exposition', async () => {
    const { list } = await readVitals(envelope('2', [disabled('a', '9007199254740991'), disabled('b', '9007199254740990.0')]));
    expect(list.invalid).toBe(0);
    const text = await exposition(list);
    expect(text).toContain('posture_vitals_active_agents{portal="acme",integration="a"} 9007199254740991\n');
    expect(text).toContain('posture_vitals_active_agents{portal="acme",integration="b"} 9007199254740990\n');
  });

  it.each(['9007199254740992', '9007199254740993', '9007199254740993.0', '1e16', '1e300', '12345678901234567890'])('makes a record whose count is %s invalid, logged, never a rounded number', async (big) => {
    const { list, logger } = await readVitals(envelope('2', [disabled('a', big), disabled('b', '7')]));
    expect(list.invalid).toBe(1);
    expect(list.records.map((r) => r.key)).toEqual(['b']);
    expect(logger.records().some((r) => r.msg === 'skipped a malformed record')).toBe(true);
    const text = await exposition(list);
    expect(text).not.toMatch(/integration="a"/);
  });

  it('reads a total of 2^53 - 1 as that number', async () => {
    const { total } = await readVitals(envelope('9007199254740991', [disabled('a', '1')]));
    expect(total).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each(['9007199254740992', '9007199254740993', '1e300'])('rejects a total of %s as an invalid response, naming it', async (big) => {
    const err = await failure(readVitals(envelope(big, [disabled('a', '1')])));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.message).toMatch(/invalid "total" .*expected a whole number from 0 to 2\^53 - 1/);
  });
});

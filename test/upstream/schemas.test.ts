import { describe, expect, it } from 'vitest';
import { checkAlertRecord, describeIssues, VitalsRecordSchema } from '../../src/upstream/schemas.js';
import { OversizedValue } from '../../src/upstream/limits.js';

/** What the log says about an invalid Vitals record (zod/mini with its English messages). */
function why(raw: unknown): string {
  const parsed = VitalsRecordSchema.safeParse(raw);
  if (parsed.success) throw new Error('expected the record to be invalid');
  return describeIssues(parsed.error, raw);
}

const enabled = {
  key: 'agent',
  name: 'Agent',
  vitalsEnabled: true,
  agentDeployedPossibleCompliant: 10,
  agentDeployedCompliant: 9,
  agentFunctioningPossibleCompliant: 8,
  agentFunctioningCompliant: 7,
  configurationPossibleCompliant: 6,
  configurationCompliant: 5,
};

describe('Vitals record schema', () => {
  it('accepts both shapes of the spec and keeps unknown fields', () => {
    expect(VitalsRecordSchema.parse({ ...enabled, extra: 'x' })).toMatchObject({ extra: 'x', configurationCompliant: 5 });
    expect(VitalsRecordSchema.parse({ key: 'patch', name: 'Patch', vitalsEnabled: false, activeAgents: 0 }).vitalsEnabled).toBe(false);
  });

  it('names each bad field with an English reason, at most three', () => {
    expect(why({ ...enabled, agentDeployedPossibleCompliant: -1, agentDeployedCompliant: 1.5, agentFunctioningPossibleCompliant: '3', configurationCompliant: null })).toBe(
      'agentDeployedPossibleCompliant: Too small: expected number to be >=0; agentDeployedCompliant: Invalid input: expected int, received number; agentFunctioningPossibleCompliant: Invalid input: expected number, received string',
    );
    expect(why({ key: '', name: 'n', vitalsEnabled: false, activeAgents: 2 })).toBe('key: Too small: expected string to have >=1 characters');
    expect(why({ key: 'k', name: 'n', vitalsEnabled: 'yes' })).toBe("vitalsEnabled: Invalid discriminator value. Expected 'true' | 'false'");
    expect(why('str')).toBe('(record): Invalid input: expected object, received string');
  });

  it('names a value too large to keep instead of its type', () => {
    const big = new OversizedValue(70_000, 'string');
    expect(why({ ...enabled, name: big })).toBe(`name: ${big.describe()}`);
  });
});

/** An alert record of spec 2.6, every field of its type. */
const alert = {
  state: 'Red',
  product: 'Okta, MFA',
  status: 'Incident',
  item: 'Zoë Yilmaz',
  issue: 'MFA not enrolled',
  details: 'No authenticator.',
  itemEntityType: 'user',
  ownerName: '',
  timestamp: '2026-11-20T08:00:00.0000000',
  acknowledgedTime: '0001-01-01T00:00:00.0000000',
  assignedTime: '0001-01-01T00:00:00.0000000',
  resolved: false,
  acknowledged: false,
  resolvedBy: '',
  resolvedTime: '0001-01-01T00:00:00.0000000',
  itemId: '45b69422-5cc4-446f-b7ba-48a4cbbb01c8',
  inactiveUntil: '0001-01-01T00:00:00.0000000',
  hasLinkedDevice: true,
};

describe('alert record check', () => {
  it('accepts a record of spec 2.6 as it is', () => {
    expect(checkAlertRecord(alert)).toBe(alert);
  });

  // The fields the folds read, with their types in spec 2.6; the others may be anything.
  const read = { state: 'string', product: 'string', status: 'string', ownerName: 'string', timestamp: 'string', resolved: 'boolean', acknowledged: 'boolean', inactiveUntil: 'string' };
  it.each(Object.entries(read))('refuses a record whose %s is not a %s, or is missing', (field, type) => {
    expect(checkAlertRecord({ ...alert, [field]: 5 })).toBe(`${field}: expected ${type}, received number`);
    const { [field as keyof typeof alert]: _left, ...without } = alert;
    expect(checkAlertRecord(without)).toBe(`${field}: expected ${type}, received undefined`);
  });

  it.each(['item', 'issue', 'details', 'itemEntityType', 'acknowledgedTime', 'assignedTime', 'resolvedBy', 'resolvedTime', 'itemId', 'hasLinkedDevice'])('does not check %s, which no fold reads', (field) => {
    expect(checkAlertRecord({ ...alert, [field]: null })).toEqual({ ...alert, [field]: null });
  });
});

describe('alert record check, several problems', () => {
  it('names the first three wrong fields in the order of spec 2.6, with what each held', () => {
    const big = new OversizedValue(80_000, 'string');
    expect(checkAlertRecord({ ...alert, state: null, product: [], status: big, ownerName: 1 })).toBe(
      `state: expected string, received null; product: expected string, received array; status: expected string, received ${big.describe()}`,
    );
    expect(checkAlertRecord({ ...alert, timestamp: {}, resolved: 'no', inactiveUntil: true })).toBe(
      'timestamp: expected string, received object; resolved: expected boolean, received string; inactiveUntil: expected string, received boolean',
    );
    expect(checkAlertRecord({ ...alert, acknowledged: null, inactiveUntil: undefined })).toBe('acknowledged: expected boolean, received null; inactiveUntil: expected string, received undefined');
  });

  it.each([
    ['null', null, 'null'],
    ['an array', [alert], 'array'],
    ['a string', 'Red', 'string'],
    ['a number', 5, 'number'],
    ['a record too large to keep', new OversizedValue(2_000_000, 'record'), new OversizedValue(2_000_000, 'record').describe()],
  ])('refuses a record that is %s as a whole', (_name, raw, said) => {
    expect(checkAlertRecord(raw)).toBe(`(record): expected object, received ${said}`);
  });
});

describe('describeIssues', () => {
  it('names a nested field by its path, and a value too large to keep at that path', () => {
    const schema = VitalsRecordSchema;
    const bad = { ...enabled, key: 7 };
    const parsed = schema.safeParse(bad);
    expect(parsed.success).toBe(false);
    const error = parsed.error!;
    // The path of an issue as given, an OversizedValue found along it described instead of the message.
    const nested = { ...error, issues: [{ ...error.issues[0]!, path: ['outer', 'inner'] }] } as typeof error;
    expect(describeIssues(nested, { outer: { inner: 1 } })).toBe(`outer.inner: ${error.issues[0]!.message}`);
    const big = new OversizedValue(99_999, 'string');
    expect(describeIssues(nested, { outer: { inner: big } })).toBe(`outer.inner: ${big.describe()}`);
    // A path that runs into a value that is not an object finds nothing there.
    expect(describeIssues(nested, { outer: 'text' })).toBe(`outer.inner: ${error.issues[0]!.message}`);
    expect(describeIssues(nested, { outer: null })).toBe(`outer.inner: ${error.issues[0]!.message}`);
    expect(describeIssues(nested)).toBe(`outer.inner: ${error.issues[0]!.message}`);
  });

  it('describes a whole record too large to keep, whatever the issues say', () => {
    const parsed = VitalsRecordSchema.safeParse(new OversizedValue(3_000_000, 'record'));
    expect(describeIssues(parsed.error!, new OversizedValue(3_000_000, 'record'))).toBe(`(record): a record of more than 1048576 bytes (3000000 bytes or more), not kept`);
  });
});

import { describe, expect, it } from 'vitest';
import { describeIssues, VitalsRecordSchema } from '../../src/upstream/schemas.js';
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

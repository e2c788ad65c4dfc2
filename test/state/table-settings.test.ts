/** POSTURE_STATE_TABLE: flag > env > config file, a table name or ARN; anything else refused with one line. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { ConfigErrors } from '../../src/errors.js';

const base = { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: 'k-secret-value-123' };

describe('the state table setting', () => {
  it.each([
    ['unset: the state directory is the ledger', {}, {}, undefined],
    ['the flag over the environment and the file', { POSTURE_STATE_TABLE: 'env-ledger', POSTURE_CONFIG: JSON.stringify({ state_table: 'file-ledger' }) }, { state_table: 'flag-ledger' }, 'flag-ledger'],
    ['the environment over the file', { POSTURE_STATE_TABLE: 'env-ledger', POSTURE_CONFIG: JSON.stringify({ state_table: 'file-ledger' }) }, {}, 'env-ledger'],
    ['the config file', { POSTURE_CONFIG: JSON.stringify({ state_table: 'posture-exporter-prod-ledger' }) }, {}, 'posture-exporter-prod-ledger'],
    ['an empty variable as unset (serverless.yml passes empty parameters)', { POSTURE_STATE_TABLE: '' }, {}, undefined],
    ['a name of 255 characters', { POSTURE_STATE_TABLE: 'a'.repeat(255) }, {}, 'a'.repeat(255)],
    ['a name with dots, dashes and underscores', { POSTURE_STATE_TABLE: 'Posture_exporter.prod-1' }, {}, 'Posture_exporter.prod-1'],
    ['an ARN', { POSTURE_STATE_TABLE: 'arn:aws:dynamodb:eu-west-1:123456789012:table/posture-ledger' }, {}, 'arn:aws:dynamodb:eu-west-1:123456789012:table/posture-ledger'],
    ['an ARN of another partition', { POSTURE_STATE_TABLE: 'arn:aws-cn:dynamodb:cn-north-1:123456789012:table/posture-ledger' }, {}, 'arn:aws-cn:dynamodb:cn-north-1:123456789012:table/posture-ledger'],
  ])('takes %s', (_what, env, flags, expected) => {
    expect(loadConfig({ env: { ...base, ...env }, flags }).stateTable).toBe(expected);
  });

  const refusal = (value: string) =>
    `POSTURE_STATE_TABLE (--state-table)=${JSON.stringify(value)} is not a DynamoDB table: give its name (3 to 255 letters, digits, _, - or .) or its ARN (arn:aws:dynamodb:<region>:<account>:table/<name>).`;

  it.each([
    ['a name of two characters', 'ab'],
    ['a name of 256 characters', 'b'.repeat(256)],
    ['a space', 'posture ledger'],
    ['a slash', 'posture/ledger'],
    ['an ARN of another service', 'arn:aws:s3:::posture-ledger'],
    ['an ARN without the account', 'arn:aws:dynamodb:eu-west-1::table/posture-ledger'],
  ])('refuses %s', (_what, value) => {
    let err: unknown;
    try {
      loadConfig({ env: { ...base, POSTURE_STATE_TABLE: value } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigErrors);
    const problems = (err as ConfigErrors).problems;
    expect(problems.map((p) => p.setting)).toEqual(['POSTURE_STATE_TABLE']);
    expect(problems[0]!.message).toBe(value.length > 80 ? refusal(`${value.slice(0, 77)}...`) : refusal(value));
  });
});

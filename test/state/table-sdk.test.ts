/**
 * The ledger table when the AWS SDK's DynamoDB client cannot be loaded (a broken install, a bundle
 * without it): each claim fails closed with one line naming the table, the package and why, and the
 * next claim tries to load it again.
 */
import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { LedgerError } from '../../src/errors.js';

describe('a table whose SDK cannot be loaded', () => {
  it('fails each claim with a LedgerError naming the table and the package, and tries again at the next', async () => {
    let loads = 0;
    // The package loads, but a module it needs does not: its client cannot be made.
    vi.doMock('@aws-sdk/client-dynamodb', () => ({
      DynamoDBClient: class {
        constructor() {
          loads++;
          throw new Error("Cannot find package '@smithy/core'");
        }
      },
    }));
    try {
      const { openTable } = await import('../../src/state/table.js');
      const ledger = openTable('posture-ledger', memoryLogger(), new FakeClock(0)).ledgerOf('https://acme.example.com/public-api/v1');
      for (let i = 0; i < 2; i++) {
        const err = await ledger.claim(5).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(LedgerError);
        expect((err as LedgerError).ledger).toBe('posture-ledger');
        expect((err as LedgerError).message).toMatch(
          /^the DynamoDB table posture-ledger \(POSTURE_STATE_TABLE\) cannot be used: the AWS SDK's DynamoDB client \(@aws-sdk\/client-dynamodb\) cannot be loaded \(Cannot find package '@smithy\/core'\); no request goes to the portal while its share cannot be counted$/,
        );
      }
      expect(loads).toBe(2);
    } finally {
      vi.doUnmock('@aws-sdk/client-dynamodb');
    }
  });
});

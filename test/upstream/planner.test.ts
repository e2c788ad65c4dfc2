import { describe, expect, it } from 'vitest';
import { planAlertsLimit } from '../../src/upstream/planner.js';

describe('planAlertsLimit', () => {
  it.each([
    // pageSize, remaining, available → limit
    [500, undefined, 5, 500, 'first page at the configured size while requests remain'],
    [500, undefined, 1, 0, 'everything in one request when only one request remains'],
    [500, 300, 1, 500, 'the configured size when the rest fits in one page'],
    [500, 1500, 3, 500, 'the configured size while the pages fit'],
    [500, 1600, 3, 534, 'a grown page when the pages would not fit'],
    [500, 99_500, 1, 0, 'the rest in one request when one request remains'],
    [500, 99_500, 0, 0, 'the rest in one request when none is planned to remain'],
    [100, 1000, 4, 250, 'a grown page that spreads the rest over the requests left'],
  ] as Array<[number, number | undefined, number, number, string]>)('pageSize %d, remaining %s, available %d → %d (%s)', (pageSize, remaining, available, expected) => {
    expect(planAlertsLimit({ pageSize, remaining, available })).toBe(expected);
  });
});

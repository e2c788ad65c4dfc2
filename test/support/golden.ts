import { readFileSync, writeFileSync } from 'node:fs';
import { expect } from 'vitest';

/** Compares `actual` with a committed golden file; `UPDATE_GOLDEN=1` rewrites it (review the diff!). */
export function expectGolden(path: string, actual: string): void {
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(path, actual);
  expect(actual).toBe(readFileSync(path, 'utf8'));
}

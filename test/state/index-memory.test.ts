/**
 * A process whose state directory cannot be written from the start (src/state/index.ts): its
 * resolved-alerts passes are remembered in its memory at once, with no try at the directory and no
 * warning beyond the one that says the directory cannot be written.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { openState } from '../../src/state/index.js';
import { tempDirPerTest } from '../support/temp-dir.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const PORTAL = 'https://acme.example.com/public-api/v1';
const HOUR = 3_600_000;

const dir = tempDirPerTest('posture-state-memory-');

it('remembers the passes in memory from the first, warning only that the directory cannot be written', async () => {
  writeFileSync(join(dir(), 'file'), '');
  const logger = memoryLogger();
  const state = openState(join(dir(), 'file', 'state'), logger, new FakeClock(T0));
  expect((await state.passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
  expect((await state.passes.claim(PORTAL, 'acme', HOUR)).due).toBe(false);
  const warnings = logger.records().filter((r) => r.level === 'warn');
  expect(warnings.map((w) => w.setting)).toEqual(['POSTURE_STATE_DIR']);
  expect(String(warnings[0]!.msg)).toMatch(/^POSTURE_STATE_DIR \(--state-dir\) .* cannot be written \(ENOTDIR\)/);
});

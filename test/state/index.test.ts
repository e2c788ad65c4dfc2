/**
 * A process's state as it opens it (src/state/index.ts): one warning that names what is lost when
 * the directory cannot be written, with what else the caller loses; the resolved-alerts passes
 * remembered in the process's memory, with one warning, once a claim in the directory fails.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { openState } from '../../src/state/index.js';
import { tempDirPerTest } from '../support/temp-dir.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const PORTAL = 'https://acme.example.com/public-api/v1';
const HOUR = 3_600_000;

const dir = tempDirPerTest('posture-state-index-');

describe('openState', () => {
  it("names in its one warning what else the caller loses without the directory (backfill's progress)", () => {
    writeFileSync(join(dir(), 'file'), '');
    const logger = memoryLogger();
    openState(join(dir(), 'file', 'state'), logger, new FakeClock(T0), "backfill's progress is not kept for --resume");
    expect(logger.records().map((r) => r.msg)).toEqual([
      `POSTURE_STATE_DIR (--state-dir) ${join(dir(), 'file', 'state')} cannot be written (ENOTDIR): the requests this process sends to each portal are not recorded, so a restart or another process does not count them against the share of the last 60 s, and backfill's progress is not kept for --resume; the process goes on from memory. Give a writable directory to keep them.`,
    ]);
  });

  it('remembers the passes in its memory once a claim in the directory fails (the passes folder a symlink), with one warning', async () => {
    const clock = new FakeClock(T0);
    const logger = memoryLogger();
    const root = join(dir(), 'state');
    const state = openState(root, logger, clock);
    mkdirSync(join(dir(), 'elsewhere'));
    // Made by the sweep when the directory opened; now a symlink.
    rmSync(join(root, 'passes'), { recursive: true });
    symlinkSync(join(dir(), 'elsewhere'), join(root, 'passes'));
    expect((await state.passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    // Remembered in memory: within the hour, not due; another entry is.
    expect((await state.passes.claim(PORTAL, 'acme', HOUR)).due).toBe(false);
    expect((await state.passes.claim(PORTAL, 'other', HOUR)).due).toBe(true);
    const warnings = logger.records().filter((r) => r.level === 'warn');
    expect(warnings).toEqual([
      expect.objectContaining({
        msg: `the last resolved-alerts pass cannot be remembered in the state directory (${join(root, 'passes')} in the state directory is a symlink: it is not followed; remove it): this process remembers it in its memory only`,
        setting: 'POSTURE_STATE_DIR',
        error: `${join(root, 'passes')} in the state directory is a symlink: it is not followed; remove it`,
      }),
    ]);
  });
});

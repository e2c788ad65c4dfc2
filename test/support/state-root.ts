/**
 * Global setup of both tiers (vitest.config.ts): one temporary folder per run, holding the state
 * directory of every test process (test/support/state-home.ts), removed when the run ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder under which each test process gets its temporary state directory. */
    postureStateRoot: string;
  }
}

export default function setup(project: TestProject): () => void {
  const root = mkdtempSync(join(tmpdir(), 'posture-test-home-'));
  project.provide('postureStateRoot', root);
  return () => rmSync(root, { recursive: true, force: true });
}

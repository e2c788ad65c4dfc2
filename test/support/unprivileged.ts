/**
 * The built CLI run as a user without privileges, so that a privileged port is refused as it is to
 * anyone: as root, `setpriv` to nobody (uid 65534). That user may be unable to read the checkout (a
 * clone in root's 0700 home), so the bundle is copied into a temporary directory anyone can read.
 * Every test that changes user goes through here; `.ci/run` runs those tests from a checkout under a
 * 0700 directory.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BUILT_CLI } from './cli.js';

const NOBODY = ['--reuid=65534', '--regid=65534', '--clear-groups'];

/** How to start the built CLI unprivileged: `command(args)` gives what to spawn, in `cwd`, with `env` added. */
export interface UnprivilegedCli {
  command(args: readonly string[]): [string, string[]];
  cwd: string | undefined;
  /** A home of its own for nobody (whose own, /nonexistent, has no room for the state directory). */
  env: Record<string, string>;
  /** Removes the copies (nothing when none were made). */
  remove(): void;
  /** The user id the CLI runs as. */
  uid: number;
}

function runsAsNobody(argv: string[]): { ok: boolean; said: string } {
  const r = spawnSync('setpriv', [...NOBODY, ...argv], { encoding: 'utf8', cwd: '/', env: { PATH: process.env.PATH } });
  return { ok: r.status === 0, said: (r.error?.message ?? r.stderr ?? '').trim().split('\n')[0] ?? '' };
}

/** Prepares the built CLI (`npm run build` first) for an unprivileged run; a user other than root needs nothing. */
export function unprivilegedCli(): UnprivilegedCli {
  if (process.getuid?.() !== 0) {
    return { command: (args) => [process.execPath, [BUILT_CLI, ...args]], cwd: undefined, env: {}, remove: () => {}, uid: process.getuid?.() ?? 0 };
  }
  const dir = mkdtempSync(join(tmpdir(), 'unprivileged-cli-'));
  try {
    // mkdtemp makes it 0700; the copies inside keep their modes (0644 files, 0755 cli.js).
    chmodSync(dir, 0o755);
    cpSync(dirname(BUILT_CLI), join(dir, 'dist'), { recursive: true });
    const cli = join(dir, 'dist', 'cli.js');
    const home = join(dir, 'home');
    mkdirSync(home);
    chownSync(home, 65534, 65534);
    // Node itself may sit in a private directory (nvm under /root): setpriv starts it with root's
    // capabilities, which go at the exec. What Node opens afterwards must be readable, hence the copy.
    const probe = runsAsNobody([process.execPath, cli, '--version']);
    if (!probe.ok) throw new Error(`uid 65534 cannot run the CLI copied to ${dir} (${probe.said}): point TMPDIR at a directory every user can enter`);
    return { command: (args) => ['setpriv', [...NOBODY, process.execPath, cli, ...args]], cwd: dir, env: { HOME: home }, remove: () => rmSync(dir, { recursive: true, force: true }), uid: 65534 };
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

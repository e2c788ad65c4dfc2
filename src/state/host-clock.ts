/**
 * The clocks the state directory compares its records on, and the rule that places a record's time
 * on this process's monotonic clock.
 *
 * A record holds its writer's host, boot id, monotonic time (CLOCK_MONOTONIC, the same for every
 * process of one boot) and wall time, and its file holds the time the kernel stamped it with when it
 * was written (its mtime, on the kernel's wall clock, which neither libfaketime nor a time namespace
 * moves). A writer's monotonic time is trusted only when it is this process's clock: same host and
 * boot, and the same offset from wall time within TRUST_MS (libfaketime fakes CLOCK_MONOTONIC unless
 * told not to, and a time namespace offsets it, with the boot id unchanged). Otherwise the record is
 * placed at the later of what its monotonic time (same boot) and its wall time say: one of the two
 * clocks is off, and the later is the careful side. A record placed in the future counts from the
 * moment its file was last written (its writer's last sign of life), so no clock ahead blocks a
 * portal longer than a window and the margin after that; a file stamped in the future too (this
 * host's wall clock stepped back since) falls back to the monotonic time of this boot.
 */
import { constants, closeSync, fstatSync, futimesSync, openSync, readFileSync, unlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { systemClock, type Clock } from '../core/clock.js';

/** How far two processes' offsets between wall and monotonic time may differ and still be one clock (NTP slews the wall clock slowly). */
export const TRUST_MS = 1_000;

export interface HostClock {
  readonly host: string;
  /** Names the span of `monotonic()`: records with the same host and boot may compare on it. */
  readonly boot: string;
  /** Ms on a clock every process of this boot shares and no wall-clock step moves. */
  monotonic(): number;
  /** Wall time, epoch ms. */
  wall(): number;
  /** Now on the clock files are stamped with (ms), read by writing a file in `folder`; undefined when none can be written. */
  fileNow(folder: string): number | undefined;
  /** Stamps a file this process wrote (its descriptor) on that clock, where the kernel does not (an injected clock). */
  stamp(fd: number): void;
}

/** A moment as a writer read its clocks. */
export interface Times {
  readonly mono: number;
  readonly wall: number;
}

/** Where a record was written. */
export interface Origin {
  readonly host: string;
  readonly boot: string;
}

/** This process's clocks read now, and what it needs to place a record written in the future. */
export interface Reading extends Times {
  readonly clock: HostClock;
  /** When a file stamped `mtimeMs` was written, on this process's monotonic clock (undefined: unknown). */
  writtenAt(mtimeMs: number): number | undefined;
}

/** Reads `clock` now; the file clock is read (a file written in `folder`) only if a record needs it. */
export function readingOf(clock: HostClock, folder: string): Reading {
  const mono = clock.monotonic();
  const wall = clock.wall();
  let files: number | undefined | null = null;
  return {
    clock,
    mono,
    wall,
    writtenAt(mtimeMs) {
      if (files === null) files = clock.fileNow(folder);
      return files === undefined ? undefined : mono - (files - mtimeMs);
    },
  };
}

/**
 * `t`, a time of a record from `origin` whose file was last written at `mtimeMs`, on the reader's
 * monotonic clock (see the module's doc).
 */
export function place(origin: Origin, t: Times, mtimeMs: number, now: Reading): number {
  const byWall = now.mono - (now.wall - t.wall);
  const thisBoot = origin.host === now.clock.host && origin.boot === now.clock.boot;
  let at = byWall;
  if (thisBoot) at = Math.abs(t.wall - t.mono - (now.wall - now.mono)) <= TRUST_MS ? t.mono : Math.max(t.mono, byWall);
  if (at <= now.mono) return at;
  // Dated in the future: it is no later than its file was written.
  const written = now.writtenAt(mtimeMs);
  if (written !== undefined && written <= now.mono) return written;
  // The file too (this host's wall clock stepped back since it was written): this boot's monotonic time has not moved.
  if (thisBoot && t.mono <= now.mono) return t.mono;
  return now.mono;
}

/** This boot's id (Linux); elsewhere one that never matches another process's, so every record compares on wall time. */
function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return `unknown-${process.pid}-${Date.now()}`;
  }
}

/** Flags of the file written to read the file clock: created here, never through a symlink. */
const PROBE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** The kernel's wall clock now, as it stamps a file written in `folder`; undefined when none can be written there. */
function kernelNow(folder: string): number | undefined {
  const path = join(folder, `.t-${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    const fd = openSync(path, PROBE, 0o600);
    try {
      return fstatSync(fd).mtimeMs;
    } finally {
      closeSync(fd);
      unlinkSync(path);
    }
  } catch {
    // None can be written there: no file clock.
  }
  return undefined;
}

let system: HostClock | undefined;

/**
 * The host clock of a process whose clock is `clock`: the machine's for the system clock; an
 * injected one (tests) is its own boot, shared by every ledger that uses it, whose files are
 * stamped with its wall time.
 */
export function hostClockOf(clock: Clock): HostClock {
  if (clock === systemClock) {
    system ??= {
      host: hostname(),
      boot: bootId(),
      monotonic: () => Number(process.hrtime.bigint() / 1_000n) / 1000,
      wall: () => Date.now(),
      fileNow: kernelNow,
      stamp: () => undefined,
    };
    return system;
  }
  return {
    host: hostname(),
    boot: 'injected-clock',
    monotonic: () => clock.monotonic(),
    wall: () => clock.now(),
    fileNow: () => clock.now(),
    stamp: (fd) => {
      const seconds = clock.now() / 1000;
      futimesSync(fd, seconds, seconds);
    },
  };
}

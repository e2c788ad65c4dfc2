/**
 * The clocks a ledger compares its records on. On one host, the system-wide monotonic clock
 * (CLOCK_MONOTONIC, the same for every process until the next boot) with the boot id: a wall-clock
 * step cannot move it. Records of another boot or host fall back to wall time.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { systemClock, type Clock } from '../core/clock.js';

export interface HostClock {
  readonly host: string;
  /** Names the span of `monotonic()`: records with the same host and boot compare on it. */
  readonly boot: string;
  /** Ms on a clock every process of this boot shares and no wall-clock step moves. */
  monotonic(): number;
  /** Wall time, epoch ms: for records of other boots and hosts only. */
  wall(): number;
}

/** This boot's id (Linux); elsewhere one that never matches another process's, so every record compares on wall time. */
function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return `unknown-${process.pid}-${Date.now()}`;
  }
}

let system: HostClock | undefined;

/**
 * The host clock of a process whose clock is `clock`: the machine's for the system clock; an
 * injected one (tests) is its own boot, shared by every ledger that uses it.
 */
export function hostClockOf(clock: Clock): HostClock {
  if (clock === systemClock) {
    system ??= { host: hostname(), boot: bootId(), monotonic: () => Number(process.hrtime.bigint() / 1_000n) / 1000, wall: () => Date.now() };
    return system;
  }
  return { host: hostname(), boot: 'injected-clock', monotonic: () => clock.monotonic(), wall: () => clock.now() };
}

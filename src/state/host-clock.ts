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

/** Where and when a record was written: its host and boot, and both clocks then. */
export interface Stamped {
  readonly host: string;
  readonly boot: string;
  readonly mono: number;
  readonly wall: number;
}

/**
 * When `record` was written, on `clock`'s monotonic clock now (`mono` and `wall` read together):
 * its own monotonic time when this boot wrote it; else (another boot or host, or a monotonic time
 * this boot has not reached, which only a faked clock writes) its wall time, a future one counting as now.
 */
export function startOnMonotonic(record: Stamped, clock: HostClock, mono: number, wall: number): number {
  if (record.host === clock.host && record.boot === clock.boot && record.mono <= mono) return record.mono;
  return mono - Math.max(0, wall - record.wall);
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

import { expect } from 'vitest';
import { ConfigError } from '../../src/errors.js';

/** Whatever `fn` throws; the test fails when it returns. */
export function anyThrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw, but it returned');
}

/** The error of class `kind` that `fn` throws; the test fails when `fn` returns or throws something else. */
export function thrownBy<E extends Error>(fn: () => unknown, kind: abstract new (...args: never[]) => E): E {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(kind);
  return err as E;
}

/** The ConfigError that `fn` throws; the test fails when it throws nothing or another error. */
export function configErrorOf(fn: () => unknown): ConfigError {
  return thrownBy(fn, ConfigError);
}

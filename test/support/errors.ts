import { expect } from 'vitest';
import { ConfigError } from '../../src/errors.js';

/** The ConfigError that `fn` throws; the test fails when it throws nothing or another error. */
export function configErrorOf(fn: () => unknown): ConfigError {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ConfigError);
  return err as ConfigError;
}

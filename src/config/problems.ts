import { ConfigError } from '../errors.js';

/** Accumulates one ConfigError per problem, so `check-config` can list them all. */
export class Problems {
  readonly list: ConfigError[] = [];
  add(setting: string, message: string): void {
    this.list.push(new ConfigError(setting, message));
  }
}

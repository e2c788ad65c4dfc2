/**
 * Every one-edit misspelling of every setting gets the setting meant: each variable, flag and config
 * file key with a character left out, one too many, one changed or two adjacent ones swapped. The
 * oracle is the name each misspelling was made from; where a misspelling is also one edit from
 * another setting, or is another setting's last words given alone, either may come first, and the
 * one meant is named beside it.
 */
import { describe, expect, it } from 'vitest';
import { SETTINGS, envName, flagName } from '../../src/config/settings.js';
import { nearestName, unknownKeyMessage, unknownSettings } from '../../src/config/unknown.js';
import { CLI_OPTIONS, main } from '../../src/runtime/cli.js';

/** Every string one edit from `word`, over `alphabet`; `word` itself left out. */
function oneEditFrom(word: string, alphabet: string): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i <= word.length; i++) {
    if (i < word.length) out.add(word.slice(0, i) + word.slice(i + 1));
    if (i + 1 < word.length) out.add(word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2));
    for (const c of alphabet) {
      out.add(word.slice(0, i) + c + word.slice(i));
      if (i < word.length) out.add(word.slice(0, i) + c + word.slice(i + 1));
    }
  }
  out.delete(word);
  return out;
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_';
const LOWER = 'abcdefghijklmnopqrstuvwxyz0123456789_';

/** The misspellings of each of `names` that are no name of `taken`, with the name each was made from. */
function misspellings(names: readonly string[], taken: readonly string[], alphabet: string, prefix = ''): Array<[typo: string, meant: string]> {
  const out: Array<[string, string]> = [];
  for (const meant of names) for (const typo of oneEditFrom(meant.slice(prefix.length), alphabet)) if (typo !== '' && !taken.includes(prefix + typo)) out.push([prefix + typo, meant]);
  return out;
}

/** Where a check went wrong: each typo with what it got, for one readable failure. */
function wrong<T>(cases: Array<[string, string]>, got: (typo: string) => T, names: (t: T) => Array<string | undefined>): string[] {
  return cases.filter(([typo, meant]) => !names(got(typo)).includes(meant)).map(([typo, meant]) => `${typo} (meant ${meant}): ${JSON.stringify(got(typo))}`);
}

describe('one-edit misspellings', () => {
  it('of every variable suggest it (the part after POSTURE_, in upper case)', () => {
    const env = SETTINGS.map((s) => envName(s));
    const cases = misspellings(env, env, UPPER, 'POSTURE_');
    expect(cases.length).toBeGreaterThan(50_000);
    expect(wrong(cases, (typo) => unknownSettings({ [typo]: 'x' })[0], (u) => (u?.close ? [u.nearest, u.also] : []))).toEqual([]);
  });

  it('POSTURE_API_KEYFILE suggests POSTURE_API_KEY_FILE, not POSTURE_API_KEY, whose value would then be the path', () => {
    expect(unknownSettings({ POSTURE_API_KEYFILE: '/run/secrets/key' })).toEqual([{ name: 'POSTURE_API_KEYFILE', nearest: 'POSTURE_API_KEY_FILE', close: true }]);
  });

  it('of every config file key at the top level suggest it', () => {
    const top = [...SETTINGS.map((s) => s.key).filter((k) => k !== 'config_file' && k !== 'config'), 'portals', 'objectives'];
    const all = SETTINGS.map((s) => s.key as string).concat('portals', 'objectives');
    const cases = misspellings(top, all, LOWER);
    expect(wrong(cases, (typo) => unknownKeyMessage(typo, false), (m) => [...m.matchAll(/`([a-z0-9_]+)`/g)].slice(1).map((x) => x[1]))).toEqual([]);
  });

  it('of every per-portal key inside a `portals` entry suggest it', () => {
    const perPortal = SETTINGS.filter((s) => s.scope === 'portal').map((s) => s.key as string);
    const all = SETTINGS.map((s) => s.key as string).concat('portals', 'objectives');
    const cases = misspellings(perPortal, all, LOWER);
    expect(wrong(cases, (typo) => unknownKeyMessage(typo, true), (m) => (/Rename it/.test(m) ? [...m.matchAll(/`([a-z0-9_]+)`/g)].slice(1).map((x) => x[1]) : []))).toEqual([]);
  });

  it('of every flag suggest it', () => {
    const flags = SETTINGS.filter((s) => s.flag).map((s) => flagName(s));
    const cases = misspellings(flags, Object.keys(CLI_OPTIONS), LOWER.replace('_', '-'));
    expect(wrong(cases, (typo) => nearestName(typo, Object.keys(CLI_OPTIONS), '-'), (n) => (n.close ? [n.nearest, n.also] : []))).toEqual([]);
  });

  it.each([
    ['--api-keyfile', 'usage error: unknown flag --api-keyfile: did you mean --api-key-file?\n'],
    ['--shards', 'usage error: unknown flag --shards: did you mean --total-shards or --shard?\n'],
  ])('the command line says it: %s', async (flag, line) => {
    let stderr = '';
    const code = await main(['check-config', flag, 'x'], { env: {}, stdout: () => undefined, stderr: (t) => (stderr += t) });
    expect({ code, stderr }).toEqual({ code: 2, stderr: line });
  });
});

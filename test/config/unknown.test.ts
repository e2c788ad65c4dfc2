import { describe, expect, it } from 'vitest';
import { editDistance, nearestName, oneEditApart, prefixDistance, unknownSettingMessage, unknownSettings } from '../../src/config/unknown.js';
import { itMaps } from '../support/maps.js';

describe('editDistance', () => {
  const rows = [
    ['', '', 0],
    ['abc', 'abc', 0],
    ['abc', 'ab', 1],
    ['ab', 'abc', 1],
    ['abc', 'axc', 1],
    ['abcd', 'abdc', 1],
    ['kitten', 'sitting', 3],
  ] as const;
  itMaps('%j to %j is %i', editDistance, rows);
  itMaps('%j to %j is %i the other way too', (a: string, b: string) => editDistance(b, a), rows);
});

describe('oneEditApart', () => {
  it('agrees with the edit-distance table on every pair of short words over a small alphabet', () => {
    const words = [''];
    for (let length = 1; length <= 4; length++) for (const w of words.filter((x) => x.length === length - 1)) for (const c of 'ab_') words.push(w + c);
    const disagree = words.flatMap((a) => words.filter((b) => oneEditApart(a, b) !== (editDistance(a, b) === 1)).map((b) => [a, b]));
    expect(words.length).toBe(1 + 3 + 9 + 27 + 81);
    expect(disagree).toEqual([]);
  });
});

describe('unknownSettings', () => {
  it.each([
    ['POSTURE_INTERVAL_SECOND', 'POSTURE_INTERVAL_SECONDS', true],
    ['POSTURE_INTERVALL_SECONDS', 'POSTURE_INTERVAL_SECONDS', true],
    ['POSTURE_BASEURL', 'POSTURE_BASE_URL', true],
    ['POSTURE_API_KEY_FLIE', 'POSTURE_API_KEY_FILE', true],
    ['POSTURE_REQUEST_PER_MINUTE', 'POSTURE_REQUESTS_PER_MINUTE', true],
    ['POSTURE_LOGLEVEL', 'POSTURE_LOG_LEVEL', true],
    ['posture_interval_seconds', 'POSTURE_INTERVAL_SECONDS', true],
    ['POSTURE_PAGESIZE', 'POSTURE_PAGE_SIZE', true],
    ['POSTURE_WEB_CONFIG', 'POSTURE_WEB_CONFIG_FILE', true],
    ['POSTURE_SOMETHING_ELSE_ENTIRELY', 'POSTURE_LOG_LEVEL', false],
    ['POSTURE_API_KEY_SSM', 'POSTURE_API_KEY_SSM_PARAMETER', true],
    // The beginning of a setting, mistyped: the setting it begins, not a short name at a smaller distance (POSTURE_LISTEN).
    ['POSTURE_INTERVL', 'POSTURE_INTERVAL_SECONDS', true],
    ['POSTURE_INTERV', 'POSTURE_INTERVAL_SECONDS', true],
    ['POSTURE_REMOTE_WRIT_URL', 'POSTURE_REMOTE_WRITE_URL', true],
    ['POSTURE_TOTAL_SHARD', 'POSTURE_TOTAL_SHARDS', true],
    ['POSTURE_TAGS', 'POSTURE_VITALS_TAGS', true],
    // A stray separator at the end: the setting without it.
    ['POSTURE_PUSH_', 'POSTURE_PUSH', true],
  ])('%s: nearest %s (close: %s)', (name, nearest, close) => {
    expect(unknownSettings({ [name]: '1' })).toEqual([{ name, nearest, close }]);
  });

  it('POSTURE_SHARDS: the count, whose last word was given alone, and the ordinal a letter away beside it', () => {
    expect(unknownSettings({ POSTURE_SHARDS: '3' })).toEqual([{ name: 'POSTURE_SHARDS', nearest: 'POSTURE_TOTAL_SHARDS', also: 'POSTURE_SHARD', close: true }]);
  });

  it('ignores settings, other variables and the stack script\'s namespace', () => {
    expect(
      unknownSettings({
        POSTURE_INTERVAL_SECONDS: '60',
        POSTURE_CONFIG_FILE: 'x.yaml',
        POSTURE_API_KEY: 'secret',
        PATH: '/usr/bin',
        POSTURES: '1',
        POSTURE_STACK_DEVICES: '10',
        POSTURE_UNSET: undefined,
      }),
    ).toEqual([]);
  });

  it('lists every unknown variable, sorted', () => {
    expect(unknownSettings({ POSTURE_PORTALL: 'a', POSTURE_BASE_URLL: 'b', POSTURE_PORTAL: 'ok' }).map((u) => u.name)).toEqual(['POSTURE_BASE_URLL', 'POSTURE_PORTALL']);
  });
});

describe('unknownSettingMessage', () => {
  it('names the variable and the nearest setting, never the value', () => {
    const [u] = unknownSettings({ POSTURE_API_KEYS: 'very-secret-value' });
    expect(u).toBeDefined();
    const message = unknownSettingMessage(u!);
    expect(message).toBe('POSTURE_API_KEYS is not a setting: did you mean POSTURE_API_KEY? Rename it, or unset it.');
    expect(message).not.toContain('very-secret-value');
  });

  it('says the nearest without guessing when nothing is close', () => {
    expect(unknownSettingMessage({ name: 'POSTURE_XYZZY_PLUGH_FOO', nearest: 'POSTURE_CONFIG', close: false })).toBe(
      'POSTURE_XYZZY_PLUGH_FOO is not a setting (the nearest is POSTURE_CONFIG): unset it, or see posture-exporter --help for the settings.',
    );
  });
});

describe('prefixDistance', () => {
  itMaps('%j to the nearest beginning of %j is %i', prefixDistance, [
    ['INTERVAL', 'INTERVAL_SECONDS', 0],
    ['INTERVL', 'INTERVAL_SECONDS', 1],
    ['INTERVALL', 'INTERVAL_SECONDS', 1],
    ['LISTEN', 'LISTEN', 0],
    ['INTERVL', 'LISTEN', 5],
  ]);
});

describe('nearestName for flags', () => {
  const flags = ['interval-seconds', 'alerts-interval-seconds', 'integrations', 'listen', 'log-level', 'shard', 'total-shards', 'write-config', 'portals'];
  it.each([
    ['intervall', 'interval-seconds'],
    ['intervl-seconds', 'interval-seconds'],
    ['interval', 'interval-seconds'],
    ['totalshards', 'total-shards'],
    ['writeconfig', 'write-config'],
    ['shrd', 'shard'],
  ])('--%s: did you mean --%s?', (typed, meant) => {
    expect(nearestName(typed, flags, '-')).toEqual({ nearest: meant, close: true });
  });

  it('--shards: --total-shards, or --shard a letter away', () => {
    expect(nearestName('shards', flags, '-')).toEqual({ nearest: 'total-shards', also: 'shard', close: true });
  });

  it('does not guess from a stem too short to point at one flag', () => {
    expect(nearestName('in', flags, '-').close).toBe(false);
  });
});

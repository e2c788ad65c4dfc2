import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_SERIES_PER_FAMILY, CAPPED_FAMILIES } from '../../src/collect/samples.js';
import { SETTING_BY_KEY } from '../../src/config/settings.js';
import { SLOW_JOBS, SOURCES } from '../../src/domain.js';
import { CATALOGUE } from '../../src/collect/catalogue.js';
import { SLOW_MODULES, SOURCE_MODULES } from '../../src/sources/index.js';

const root = new URL('../../src/', import.meta.url).pathname;

/** Quoted source names and property accesses such as `view.vitals` in the files of a folder. */
function sourceNamesIn(dir: string): string[] {
  const found: string[] = [];
  const pattern = new RegExp(String.raw`(['"\`])(${SOURCES.join('|')})\1|\.(${SOURCES.join('|')})\b`, 'g');
  for (const file of readdirSync(root + dir).filter((f) => f.endsWith('.ts'))) {
    readFileSync(`${root}${dir}/${file}`, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        // Import paths name the module they import, not a source.
        if (/^\s*import\b/.test(line)) return;
        for (const m of line.matchAll(pattern)) found.push(`${dir}/${file}:${i + 1}: ${m[0]}`);
      });
  }
  return found;
}

/** A module's capped families: none when it declares none. */
const cappedOf = (m: { readonly name: string; readonly capped?: readonly string[] }): readonly string[] => m.capped ?? [];

describe('the source registry', () => {
  it('has a module for every source of the domain, named by it', () => {
    expect(Object.keys(SOURCE_MODULES).sort()).toEqual([...SOURCES].sort());
    for (const s of SOURCES) expect(SOURCE_MODULES[s].name).toBe(s);
  });

  it('gives every catalogue family not of the exporter to exactly one module, the one its origin names', () => {
    // The sources of the domain, and the slow ones (the resolved-alerts pass, access, directory).
    const modules = [...SOURCES.map((s) => SOURCE_MODULES[s]), ...SLOW_JOBS.map((j) => SLOW_MODULES[j])];
    for (const family of CATALOGUE.filter((f) => f.origin !== 'exporter')) {
      const owners = modules.filter((m) => m.families.some((f) => f.name === family.name)).map((m) => m.name);
      expect(owners, family.name).toEqual([family.origin]);
    }
    // And every module's families are in the catalogue, in the module's order.
    for (const m of modules) {
      expect(CATALOGUE.filter((f) => f.origin === m.name).map((f) => f.name)).toEqual(m.families.map((f) => f.name));
    }
  });

  it('caps only families of the module that declares them', () => {
    const modules = [...SOURCES.map((s) => SOURCE_MODULES[s]), ...SLOW_JOBS.map((j) => SLOW_MODULES[j])];
    for (const m of modules) {
      const own = new Set<string>(m.families.map((f) => f.name));
      for (const name of cappedOf(m)) expect(own.has(name), name).toBe(true);
    }
    // The teams of the access settings are capped as the integrations are.
    expect(CAPPED_FAMILIES).toEqual([...modules.flatMap(cappedOf)]);
    expect(CAPPED_FAMILIES).toContain('posture_portal_team_members');
  });

  it('keeps the default series cap equal to the setting\'s default', () => {
    expect(DEFAULT_MAX_SERIES_PER_FAMILY).toBe(Number(SETTING_BY_KEY.max_series_per_family.default));
  });

  it('says in the help of every source family that it is cached, not read at scrape time', () => {
    const sentence = " Cached: read from the portal on the exporter's polling interval, not at scrape time.";
    const families = [...Object.values(SOURCE_MODULES), ...Object.values(SLOW_MODULES)].flatMap((m) => m.families as readonly { name: string; help: string }[]);
    expect(families.length).toBeGreaterThan(0);
    expect(families.filter((f) => !f.help.endsWith(sentence) || f.help.length === sentence.length).map((f) => f.name)).toEqual([]);
  });

  it('is what collect/ and exporter/ go through: they never name a source', () => {
    expect([...sourceNamesIn('collect'), ...sourceNamesIn('exporter')]).toEqual([]);
  });
});

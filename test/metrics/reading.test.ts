// docs/metrics.md's "Reading each family": a query for every family of the catalogue, and no other
// row; each reads its family, and a family of the resolved-alerts pass (pushed once a pass) through
// last_over_time over the 2h bridge the dashboards and recordings use.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/collect/catalogue.js';
import { readingQueries } from './reading.js';

const page = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');

describe('docs/metrics.md: reading each family', () => {
  const queries = readingQueries(page);

  it('has one query for every family of the catalogue, and no other', () => {
    expect([...queries.keys()]).toEqual(CATALOGUE.map((m) => m.name));
  });

  it.each(CATALOGUE.map((m) => [m.name] as const))('reads %s in its query', (name) => {
    expect(queries.get(name)).toMatch(new RegExp(`\\b${name}\\b`));
  });

  it.each(CATALOGUE.filter((m) => m.origin === 'resolved').map((m) => [m.name] as const))('reads %s, pushed once a pass, over the 2h bridge', (name) => {
    expect(queries.get(name)).toMatch(new RegExp(`last_over_time\\(${name}\\{[^}]*\\}\\[2h\\]\\)`));
  });
});

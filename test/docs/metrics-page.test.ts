import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/collect/catalogue.js';

const page = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');

/**
 * The "Families" table of docs/metrics.md as family → labels besides `portal` (`tag?` for an
 * optional label). A row may name several families: `` `posture_alerts_open`, `_snoozed` `` is
 * short for posture_alerts_snoozed (the first name's first two words, then the suffix).
 */
function familiesTable(markdown: string): Map<string, string[]> {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Families'));
  if (!section) throw new Error('docs/metrics.md has no "## Families" section');
  const out = new Map<string, string[]>();
  for (const row of section.split('\n').filter((l) => /^\| `posture_/.test(l))) {
    const [names, labels] = row.split('|').slice(1, 3).map((c) => c.trim());
    const listed = [...names!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
    const prefix = listed[0]!.split('_').slice(0, 2).join('_');
    const labelList = labels === '—' ? [] : labels!.split(',').map((l) => l.trim());
    for (const name of listed) out.set(name.startsWith('_') ? `${prefix}${name}` : name, labelList);
  }
  return out;
}

describe('docs/metrics.md', () => {
  it('lists every family of the catalogue with its labels, and no other', () => {
    const table = familiesTable(page);
    const expected = new Map(CATALOGUE.map((m) => [m.name, [...m.labels, ...(('optionalLabels' in m ? m.optionalLabels : undefined) ?? []).map((l: string) => `${l}?`)]]));
    expect(Object.fromEntries(table)).toEqual(Object.fromEntries(expected));
  });
});

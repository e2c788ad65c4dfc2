// docs/alerting.md names every rules file the project ships, so none is left unloaded.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;

describe('docs/alerting.md', () => {
  const doc = readFileSync(`${ROOT}docs/alerting.md`, 'utf8');
  const files = readdirSync(`${ROOT}infra/prometheus/rules`).filter((f) => /\.ya?ml$/.test(f));

  it.each(files)('names the rules file %s and how to load it', (file) => {
    expect(files.length).toBeGreaterThan(1);
    expect(doc).toContain(`\`${file}\``);
    expect(doc).toContain(`rules/${file}`);
  });
});

describe("docs/alerting.md's dashboards", () => {
  const doc = readFileSync(`${ROOT}docs/alerting.md`, 'utf8');
  const dashboards = readdirSync(`${ROOT}infra/grafana/dashboards`).filter((f) => f.endsWith('.json'));
  const section = doc.slice(doc.indexOf('\n## Dashboards\n'));

  it.each(dashboards)('lists %s under Dashboards', (file) => {
    expect(section).toContain(`- \`${file}\``);
  });

  it('lists no other, and counts them nowhere (a count goes stale)', () => {
    expect([...section.matchAll(/^- `([\w-]+\.json)`/gm)].map((m) => m[1]).sort()).toEqual([...dashboards].sort());
    expect(doc).not.toMatch(/\b(?:one|two|three|four|five|six|\d+) (?:Grafana )?dashboards\b/i);
  });
});

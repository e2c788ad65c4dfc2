import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderReadme } from '../../scripts/readme.js';
import { SETTINGS, envName } from '../../src/config/settings.js';
import { CATALOGUE } from '../../src/collect/catalogue.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('has the configuration and metrics tables the code generates (run npm run docs)', () => {
    expect(readme).toBe(renderReadme(readme));
  });

  it('lists every setting and every metric', () => {
    for (const s of SETTINGS) expect(readme).toContain(`\`${envName(s)}\``);
    for (const m of CATALOGUE) expect(readme).toContain(`\`${m.name}\``);
  });

  it('gives the two quick-start commands', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toMatch(/^npm test\b/m);
  });
});

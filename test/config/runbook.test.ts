import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig, loadObjectives } from '../../src/config/load.js';
import { ConfigErrors } from '../../src/errors.js';
import { thrownBy } from '../support/errors.js';

const base = { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: 'k-secret-value-123' };

describe('the runbook_url setting', () => {
  it('has no default: unset, the rules carry no runbook_url, and package.json names no repository or homepage', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    expect(pkg.repository).toBeUndefined();
    expect(pkg.homepage).toBeUndefined();
    expect(loadConfig({ env: base }).runbookUrl).toBeUndefined();
    expect(loadObjectives({ env: {} }).runbookUrl).toBeUndefined();
  });

  it('is read from the flag, the environment and the config file, in that order', () => {
    const file = 'runbook_url: https://file.example.com/{alert}\n';
    const sources = (env: Record<string, string>, flags: Record<string, string> = {}) => ({ env: { ...base, POSTURE_CONFIG_FILE: '/etc/p.yaml', ...env }, flags, readFile: () => file });
    expect(loadConfig(sources({})).runbookUrl).toBe('https://file.example.com/{alert}');
    expect(loadConfig(sources({ POSTURE_RUNBOOK_URL: 'https://env.example.com/{alert}' })).runbookUrl).toBe('https://env.example.com/{alert}');
    expect(loadConfig(sources({ POSTURE_RUNBOOK_URL: 'https://env.example.com/{alert}' }, { runbook_url: 'https://flag.example.com/{alert_lower}' })).runbookUrl).toBe('https://flag.example.com/{alert_lower}');
  });

  it.each([
    ['no alert name', 'https://wiki.example.com/runbooks', "it names no alert: put {alert} or {alert_lower} where the alert's name goes"],
    ['a misspelt placeholder', 'https://wiki.example.com/{alert}/{Alert}', 'it has a brace outside {alert} and {alert_lower}'],
    ['a Go template', 'https://wiki.example.com/{{alert}}', 'it has a brace outside {alert} and {alert_lower}'],
    ['a relative URL', 'runbooks.md#{alert_lower}', 'it is not an absolute URL'],
    ['another scheme', 'file:///srv/runbooks/{alert}', 'it is a file: URL, not http or https'],
  ])('refuses a template with %s, naming the setting and the fix', (_what, template, reason) => {
    const err = thrownBy(() => loadConfig({ env: { ...base, POSTURE_RUNBOOK_URL: template } }), ConfigErrors);
    expect(err.problems.map((p) => p.message)).toEqual([`POSTURE_RUNBOOK_URL (--runbook-url)=${JSON.stringify(template)} is not valid: ${reason}, e.g. https://wiki.example.com/posture/{alert} (or unset it for none).`]);
  });

  it('names the config file key when the file set it', () => {
    const err = thrownBy(() => loadObjectives({ env: { POSTURE_CONFIG: '{"runbook_url":"https://x.example.com/"}' } }), ConfigErrors);
    expect(err.problems.map((p) => p.message)).toEqual([`POSTURE_CONFIG: runbook_url="https://x.example.com/" is not valid: it names no alert: put {alert} or {alert_lower} where the alert's name goes, e.g. https://wiki.example.com/posture/{alert} (or unset it for none).`]);
  });
});

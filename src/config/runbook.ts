/**
 * The `runbook_url` setting: a URL template with the alert's name, which every rule
 * `posture-exporter rules` writes and every shipped rule file (`npm run rules`) carries as its
 * `runbook_url` annotation. Its default follows package.json's `repository`.
 */
import pkg from '../../package.json' with { type: 'json' };

/** The placeholders a template may hold: the alert's name as written, and in lower case (a Markdown heading's anchor). */
const PLACEHOLDERS = { '{alert}': (alert: string) => alert, '{alert_lower}': (alert: string) => alert.toLowerCase() } as const;

/** The repository's web address: package.json's `repository.url` without `git+` and `.git`. */
function repositoryWebUrl(url: string): string {
  return url.replace(/^git\+/, '').replace(/\.git$/, '');
}

/** The default template: each alert's section of docs/runbooks.md on the repository's main branch. */
export const DEFAULT_RUNBOOK_URL = `${repositoryWebUrl(pkg.repository.url)}/blob/main/docs/runbooks.md#{alert_lower}`;

/** The runbook URL of `alert` from `template`. */
export function runbookUrl(template: string, alert: string): string {
  let out = template;
  for (const [placeholder, value] of Object.entries(PLACEHOLDERS)) out = out.replaceAll(placeholder, value(alert));
  return out;
}

/** What is wrong with `template` as a runbook URL template, or undefined when nothing is. */
export function runbookUrlProblem(template: string): string | undefined {
  const names = Object.keys(PLACEHOLDERS);
  if (!names.some((p) => template.includes(p))) return `it names no alert: put ${names.join(' or ')} where the alert's name goes`;
  // Annotations are Go templates: a stray brace would be read as one, or refused.
  if (/[{}]/.test(names.reduce((t, p) => t.replaceAll(p, ''), template))) return `it has a brace outside ${names.join(' and ')}`;
  let url: URL;
  try {
    url = new URL(runbookUrl(template, 'PostureObjectiveBurnRate'));
  } catch {
    return 'it is not an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `it is a ${url.protocol} URL, not http or https`;
  if (/\s/.test(template)) return 'it holds white space';
  return undefined;
}

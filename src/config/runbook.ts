/**
 * The `runbook_url` setting: a URL template with the alert's name, which every rule
 * `posture-exporter rules` writes and every shipped rule file (`npm run rules`) carries as its
 * `runbook_url` annotation. It has no default: the project names no address of its own, so
 * without the setting the rules carry no `runbook_url`.
 */

/** The placeholders a template may hold: the alert's name as written, and in lower case (a Markdown heading's anchor). */
const PLACEHOLDERS = { '{alert}': (alert: string) => alert, '{alert_lower}': (alert: string) => alert.toLowerCase() } as const;

/** An example template, as the docs, the help and the rule files' headers give it. */
export const EXAMPLE_RUNBOOK_URL = 'https://wiki.example.com/posture/{alert}';

/** What writes a rule file: `posture-exporter rules` (a config file's objectives) or `npm run rules` (the shipped rule files). */
export type RulesWriter = 'rules' | 'npm';

/** The command that writes a rule file with `template`. */
function writeCommand(writer: RulesWriter, template: string): string {
  return writer === 'rules' ? `posture-exporter rules --runbook-url '${template}'` : `POSTURE_RUNBOOK_URL='${template}' npm run rules`;
}

/** What a rule file's header says about its runbook links, and how to set them (lines without `# `). */
export function runbookHeader(template: string | undefined, writer: RulesWriter): string[] {
  if (template === undefined) {
    return [
      'Runbook links: none (no runbook_url template was given). To give every alert a `runbook_url`,',
      `write this file with a URL template: ${writeCommand(writer, EXAMPLE_RUNBOOK_URL)}`,
      '({alert} is the alert\'s name, {alert_lower} the name in lower case; docs/alerting.md, "Loading the rules").',
    ];
  }
  return [`Runbook links: each alert's \`runbook_url\` is ${template} with the alert's name, written by`, `${writeCommand(writer, template)} (without the template, none).`];
}

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

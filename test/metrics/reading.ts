/** docs/metrics.md's "Reading each family" table, read as data. */

/** The rows of the section: family → query. */
export function readingQueries(markdown: string): Map<string, string> {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Reading each family'));
  if (!section) throw new Error('docs/metrics.md has no "## Reading each family" section');
  const rows = section.split('\n').filter((l) => l.startsWith('| `posture_'));
  return new Map(rows.map((row) => {
    const [family, query] = row.split('|').slice(1, 3).map((c) => c.trim().replace(/^`|`$/g, ''));
    return [family!, query!];
  }));
}

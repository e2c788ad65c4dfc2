/**
 * Writes the dashboards built in infra/grafana/src into infra/grafana/dashboards/*.json.
 * Run: node --import tsx infra/grafana/generate.ts [--check]
 * With --check it writes nothing and exits 1 when a committed file differs from the code.
 */
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { DASHBOARDS, renderDashboard } from './src/index.js';

/** Directory holding the generated dashboard JSON. */
export const DASHBOARDS_DIR = fileURLToPath(new URL('./dashboards/', import.meta.url));

async function main(check: boolean): Promise<number> {
  await mkdir(DASHBOARDS_DIR, { recursive: true });
  let stale = 0;
  for (const spec of DASHBOARDS) {
    const path = join(DASHBOARDS_DIR, spec.file);
    const text = renderDashboard(spec.build());
    const current = await readFile(path, 'utf8').catch(() => null);
    if (current === text) continue;
    if (check) {
      stale++;
      console.error(`${spec.file} is out of date: run node --import tsx infra/grafana/generate.ts`);
    } else {
      await writeFile(path, text);
      console.log(`wrote ${spec.file}`);
    }
  }
  return stale === 0 ? 0 : 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.includes('--check'));
}

/**
 * Where the tools built from their Go modules are: Prometheus 3 (prometheus, promtool) and the
 * OpenTelemetry Collector. `scripts/ensure-tools.sh` builds them into a cache outside the checkout
 * (`npm test` runs it first) and, with `--where`, names the paths for the versions it pins; this
 * module asks it once, when a test first needs a tool.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A tool that `scripts/ensure-tools.sh` builds. */
export type GoTool = 'prometheus3' | 'promtool3' | 'otelcol';

const SCRIPT = fileURLToPath(new URL('../../scripts/ensure-tools.sh', import.meta.url));
const WHAT: Record<GoTool, string> = {
  prometheus3: 'Prometheus 3',
  promtool3: "Prometheus 3's promtool",
  otelcol: 'the OpenTelemetry Collector',
};
let paths: Map<string, string> | undefined;

/** The path of `tool`'s binary; throws, naming the fix, when it is not built. */
export function goTool(tool: GoTool): string {
  paths ??= new Map(
    execFileSync('bash', [SCRIPT, '--where'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as [string, string]),
  );
  const path = paths.get(tool);
  if (path === undefined) throw new Error(`scripts/ensure-tools.sh --where names no ${tool}`);
  if (!existsSync(path)) {
    throw new Error(`${WHAT[tool]} is not built (${path} is missing): run bash scripts/ensure-tools.sh with Go 1.26 or later on PATH (npm test runs it first)`);
  }
  return path;
}

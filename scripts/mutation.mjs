// Mutation testing (`npm run mutation [-- PART...] [-- STRYKER FLAGS]`, docs/testing.md): one Stryker
// run per part of stryker.config.mjs, one after the other, then each part's score and the total.
// Each part keeps its own incremental file, so a re-run after a small change tests only the mutants
// that change touched. Exits 1 when a part scores below the break threshold or Stryker fails.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { PARTS } from '../stryker.config.mjs';

const args = process.argv.slice(2);
const parts = args.filter((a) => !a.startsWith('-'));
const flags = args.filter((a) => a.startsWith('-'));
const unknown = parts.find((p) => !(p in PARTS));
if (unknown !== undefined) {
  console.error(`mutation: '${unknown}' is not a part: give any of ${Object.keys(PARTS).join(', ')} (none: all of them)`);
  process.exit(2);
}

/** Stryker's score: detected (killed or timed out) over every mutant that was not ignored or left uncompiled; undefined when the run left no report (it failed before mutating). */
function scoreOf(part) {
  let report;
  try {
    report = JSON.parse(readFileSync(`reports/mutation/${part}/report.json`, 'utf8'));
  } catch {
    return undefined;
  }
  const counts = { Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0 };
  for (const file of Object.values(report.files)) {
    for (const m of file.mutants) if (m.status in counts) counts[m.status]++;
  }
  const detected = counts.Killed + counts.Timeout;
  return { detected, valid: detected + counts.Survived + counts.NoCoverage, survived: counts.Survived, noCoverage: counts.NoCoverage };
}

let failed = false;
const rows = [];
for (const part of parts.length > 0 ? parts : Object.keys(PARTS)) {
  console.log(`\n== mutation: ${part} (${PARTS[part].join(', ')})`);
  // A run that fails before mutating leaves no report: an earlier one must not stand for it.
  rmSync(`reports/mutation/${part}/report.json`, { force: true });
  const run = spawnSync('node_modules/.bin/stryker', ['run', 'stryker.config.mjs', ...flags], { stdio: 'inherit', env: { ...process.env, MUTATION_PART: part } });
  if (run.status !== 0) failed = true;
  const score = scoreOf(part);
  if (score) rows.push({ part, ...score });
  else console.error(`mutation: ${part} left no report (see Stryker's lines above)`);
}

const pct = (n, d) => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(2)} %`);
console.log('\npart        score      detected / mutants  survived  no coverage');
for (const r of rows) console.log(`${r.part.padEnd(11)} ${pct(r.detected, r.valid).padStart(8)}   ${`${r.detected} / ${r.valid}`.padStart(18)}  ${String(r.survived).padStart(8)}  ${String(r.noCoverage).padStart(11)}`);
const total = rows.reduce((t, r) => ({ detected: t.detected + r.detected, valid: t.valid + r.valid }), { detected: 0, valid: 0 });
console.log(`${'total'.padEnd(11)} ${pct(total.detected, total.valid).padStart(8)}   ${`${total.detected} / ${total.valid}`.padStart(18)}`);
process.exit(failed ? 1 : 0);

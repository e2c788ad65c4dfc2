/**
 * The package as npm publishes it: `npm pack` (its prepack builds the bundles and the declarations)
 * in a scratch copy of the project, unpacked into a consumer's node_modules; the consumer imports it
 * by name at run time and type-checks against its declarations, as a user's project does.
 *
 * The scratch copy (symlinks to src, scripts and node_modules, a copy of package.json) keeps the
 * build's `rm -rf dist` away from the CLI other tests run.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  main: string;
  types: string;
  bin: Record<string, string>;
  exports: Record<string, string | Record<string, string>>;
  dependencies: Record<string, string>;
};

/** `names` and everything they depend on, as npm hoists them into the project's node_modules. */
function installed(names: string[]): Set<string> {
  const seen = new Set<string>();
  const visit = (name: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    Object.keys(manifest.dependencies ?? {}).forEach(visit);
  };
  names.forEach(visit);
  return seen;
}

let work: string;
let consumer: string;
let packed: string[];

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'package-'));
  const project = join(work, 'project');
  mkdirSync(project);
  for (const entry of ['src', 'scripts', 'node_modules', 'tsconfig.json']) symlinkSync(join(ROOT, entry), join(project, entry));
  copyFileSync(join(ROOT, 'package.json'), join(project, 'package.json'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: project, timeout: 120_000 });
  // The prepack build prints a line before npm's JSON.
  const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  packed = info!.files.map((f) => f.path);

  // The consumer has the package from its tarball and what installing it brings (its dependencies,
  // and theirs), plus @types/node, all linked from the project's node_modules: a type the
  // declarations take from a devDependency does not resolve there.
  consumer = join(work, 'consumer');
  const modules = join(consumer, 'node_modules');
  mkdirSync(join(modules, 'posture-exporter'), { recursive: true });
  for (const name of installed([...Object.keys(pkg.dependencies), '@types/node'])) {
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', name), join(modules, name));
  }
  await run('tar', ['-xzf', join(work, info!.filename), '-C', join(modules, 'posture-exporter'), '--strip-components=1']);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
}, 180_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the published package', () => {
  it('holds every file package.json points at, and no sources or tests', () => {
    const pointedAt = [pkg.main, pkg.types, ...Object.values(pkg.bin), ...Object.values(pkg.exports).flatMap((e) => (typeof e === 'string' ? [e] : Object.values(e)))];
    for (const path of pointedAt) expect(packed, path).toContain(path.replace(/^\.\//, ''));
    expect(packed.filter((p) => /^(src|test|scripts)\//.test(p))).toEqual([]);
  });

  it('is imported by name at run time', async () => {
    const script = "const m = await import('posture-exporter'); console.log(JSON.stringify([m.VERSION, typeof m.startSimulator, typeof m.handler]));";
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: consumer });
    expect(JSON.parse(stdout)).toEqual([pkg.version, 'function', 'function']);
  });

  it('type-checks a consumer against its declarations, which carry real types (a wrong argument is an error)', async () => {
    const tsconfig = {
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, skipLibCheck: false, noEmit: true, types: ['node'] },
      files: ['use.ts', 'misuse.ts'],
    };
    writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify(tsconfig));
    const use = [
      "import { FakeClock, CATALOGUE, ConfigError, startSimulator, type Config, type Sample } from 'posture-exporter';",
      'const clock = new FakeClock(0);',
      'const names: string[] = CATALOGUE.map((m) => m.name);',
      'const sim = await startSimulator({ clock });',
      'export const used: [unknown, string[], Config | undefined, Sample[], boolean] = [sim, names, undefined, [], new Error() instanceof ConfigError];',
      'await sim.close();',
    ].join('\n');
    writeFileSync(join(consumer, 'use.ts'), use + '\n');
    writeFileSync(join(consumer, 'misuse.ts'), "import { FakeClock } from 'posture-exporter';\nexport const clock = new FakeClock('zero');\n");
    const errors = await run(process.execPath, [TSC, '-p', '.'], { cwd: consumer }).then(
      () => [],
      (e: { stdout: string }) => e.stdout.split('\n').filter((l) => / error TS/.test(l)),
    );
    expect(errors).toEqual([expect.stringMatching(/^misuse\.ts\(2,\d+\): error TS2345: /)]);
  });
});

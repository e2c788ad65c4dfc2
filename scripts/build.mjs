// Bundles the CLI and the Lambda handler with esbuild into dist/; with --declarations (npm pack and
// publish run it so, see prepack in package.json) also the library's type declarations.
import { build } from 'esbuild';
import { chmodSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// `--aws-sdk DIR` builds only the AWS SDK clients the bundles leave external (see buildAwsSdk), into DIR.
const awsSdkAt = process.argv.indexOf('--aws-sdk');
const unknown = process.argv.slice(2).filter((a, i) => a !== '--declarations' && a !== '--aws-sdk' && !(awsSdkAt > 0 && i + 2 === awsSdkAt + 1));
if (unknown.length > 0 || (awsSdkAt > 0 && !process.argv[awsSdkAt + 1])) {
  console.error(`build: unknown argument ${unknown[0] ?? '--aws-sdk without a directory'}; the others are --declarations and --aws-sdk DIR`);
  process.exit(2);
}

// A few CommonJS dependencies call require(); an ESM bundle needs one.
// zod's JIT compiles every object schema with `new Function` on its first parse: about 80 ms of
// start-up for schemas that run a handful of times (the configuration, a few Vitals records), so the
// bundles run it without (zod reads this global when it loads; the banner runs first in every chunk).
const banner =
  "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url); globalThis.__zod_globalConfig ??= { jitless: true };";

/**
 * Packages the code in src/ imports statically but many commands never use: an import from src/
 * resolves to a stand-in in scripts/lazy/ that loads the real package on first use from a file of
 * its own, chunks/<name>.cjs (buildLazy below). check-config sends no request and renders nothing,
 * so prom-client and yaml cost it nothing (re2js only when an objective names integrations), and no
 * process without a proxy variable loads the proxy's code. (zod stays eager: the configuration
 * schemas are built when their module loads.)
 */
const LAZY = ['prom-client', 'yaml', 're2js', 'https-proxy-agent', 'http-proxy-agent', 'proxy-from-env'];
/**
 * The chunk each stand-in loads, chunks/<chunk>.cjs, and what it is built from. The proxy's three
 * packages are one chunk (scripts/lazy/proxy-parts.cjs), loaded only when a proxy variable is set
 * (src/net/agents.ts).
 */
const LAZY_CHUNK = { 'https-proxy-agent': 'proxy', 'http-proxy-agent': 'proxy', 'proxy-from-env': 'proxy' };
const LAZY_ENTRY = { 'prom-client': 'prom-client', yaml: 'yaml', re2js: 're2js', proxy: 'scripts/lazy/proxy-parts.cjs' };
const lazyPackages = {
  name: 'lazy-packages',
  setup(b) {
    const filter = new RegExp(`^(${LAZY.join('|')})$`);
    b.onResolve({ filter }, (args) => {
      if (args.kind !== 'import-statement' || !/[\\/]src[\\/]/.test(args.importer)) return undefined;
      return { path: fileURLToPath(new URL(`./lazy/${args.path}.js`, import.meta.url)) };
    });
  },
};

/**
 * One chunk for what every start of the CLI loads. Code splitting puts each module in a chunk per
 * set of entries (and dynamic imports) reaching it, so the CLI's static imports were 17 ESM modules
 * of 0.2 to 68 KB, and Node's loader resolves, reads, compiles and links each: about 1 ms of CPU
 * apiece (docs/performance.md). Here each file src/ imports dynamically also imports `core` (the
 * CLI's dispatch, whose static imports are everything a start loads): every entry then reaches those
 * modules, and esbuild emits them as one chunk. The CLI has loaded them before it imports any such
 * file, and dist/index.js exports the CLI's `main`, so this loads nothing more anywhere.
 */
function oneStartChunk(core) {
  const corePath = fileURLToPath(new URL(`../${core}`, import.meta.url));
  const src = fileURLToPath(new URL('../src/', import.meta.url));
  // The files src/ imports dynamically (`import('./x.js')`, a .ts file on disk).
  const targets = new Set();
  for (const file of readdirSync(src, { recursive: true })) {
    if (!file.endsWith('.ts')) continue;
    const text = readFileSync(join(src, file), 'utf8');
    for (const m of text.matchAll(/(?<!typeof )\bimport\(\s*'(\.[^']+)\.js'\s*\)/g)) targets.add(resolve(src, dirname(file), `${m[1]}.ts`));
  }
  return {
    name: 'one-start-chunk',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        if (!targets.has(args.path)) return undefined;
        // On the file's first line, so the rest keeps its line numbers in the source map.
        return { contents: `import ${JSON.stringify(corePath)}; ${readFileSync(args.path, 'utf8')}`, loader: 'ts' };
      });
    },
  };
}

/** The AWS SDK clients src/ imports (external in the bundles), and the key each has in chunks/aws-sdk.cjs. */
const AWS_SDK_CLIENTS = { '@aws-sdk/client-dynamodb': 'dynamodb', '@aws-sdk/client-ssm': 'ssm', '@aws-sdk/client-secrets-manager': 'secretsManager' };

/**
 * The AWS SDK for a runtime without node_modules (the OCI image): the Lambda runtime ships the SDK,
 * the image does not, and POSTURE_STATE_TABLE, the _SSM_PARAMETER and _SECRET_ID settings need it.
 * One CommonJS file, `DIR/chunks/aws-sdk.cjs`, holds the three clients (they share most of their
 * code), each evaluated only when its package is first imported; `DIR/node_modules/@aws-sdk/<client>/`
 * is a package of one ES module that re-exports that client's names from it, so the bundles'
 * `import('@aws-sdk/client-dynamodb')` and named imports resolve from the bundle's directory as from
 * a node_modules install.
 */
async function buildAwsSdk(dir) {
  const { createRequire } = await import('node:module');
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const require = createRequire(import.meta.url);
  const entry = Object.entries(AWS_SDK_CLIENTS).map(([pkg, key]) => `  ${key}: () => require(${JSON.stringify(pkg)}),`).join('\n');
  await build({
    stdin: { contents: `module.exports = {\n${entry}\n};\n`, resolveDir: fileURLToPath(new URL('..', import.meta.url)), loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    minify: true,
    keepNames: true,
    legalComments: 'none',
    logLevel: 'warning',
    outfile: join(dir, 'chunks/aws-sdk.cjs'),
  });
  for (const [pkg, key] of Object.entries(AWS_SDK_CLIENTS)) {
    const names = Object.keys(require(pkg)).filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && n !== 'default');
    const home = join(dir, 'node_modules', pkg);
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'package.json'), `${JSON.stringify({ name: pkg, private: true, type: 'module', main: 'index.js' })}\n`);
    writeFileSync(
      join(home, 'index.js'),
      [
        `// ${pkg} for the image: its names, from the one bundle of the AWS SDK (scripts/build.mjs, buildAwsSdk).`,
        "import { createRequire } from 'node:module';",
        `const sdk = createRequire(import.meta.url)('../../../chunks/aws-sdk.cjs').${key}();`,
        `export const { ${names.join(', ')} } = sdk;`,
        'export default sdk;',
        '',
      ].join('\n'),
    );
  }
}

if (awsSdkAt > 0) {
  await buildAwsSdk(resolve(process.argv[awsSdkAt + 1]));
  console.log(`built the AWS SDK clients into ${process.argv[awsSdkAt + 1]}`);
  process.exit(0);
}

rmSync('dist', { recursive: true, force: true });
const common = {
  plugins: [lazyPackages],
  bundle: true,
  platform: 'node',
  format: 'esm',
  sourcemap: true,
  legalComments: 'none',
  // Less source text to hold and compile at start-up; keepNames keeps error class names.
  minify: process.env.BUILD_NO_MINIFY !== "1",
  keepNames: true,
  logLevel: 'warning',
  metafile: true,
  // The AWS SDK is only loaded for SSM / Secrets Manager keys; the Lambda runtime ships it.
  external: ['@aws-sdk/*'],
};
// Code splitting keeps what a command does not use (the simulator, the push sinks) out of its
// start-up: `once` must stay small in memory.
const cli = await build({
  ...common,
  plugins: [lazyPackages, oneStartChunk('src/runtime/cli.ts')],
  entryPoints: { cli: 'src/runtime/bin.ts', index: 'src/index.ts' },
  outdir: 'dist',
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  target: 'node20',
  banner: { js: '#!/usr/bin/env node\n' + banner },
});
// The Lambda bundle is split too, so the AWS SDK (for SSM / Secrets Manager keys) is imported
// only by the invocations that need it, not at every cold start. Its source maps carry the
// mappings alone: `--enable-source-maps` (serverless.yml's NODE_OPTIONS) needs no more to name the
// source lines of a stack trace, and the sources' text was most of the zip (docs/serverless.md).
const LAMBDA_MAPS = { sourcesContent: false };
const lambda = await build({
  ...common,
  ...LAMBDA_MAPS,
  entryPoints: { index: 'src/runtime/lambda-entry.ts' },
  outdir: 'dist/lambda',
  splitting: true,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  target: 'node22',
  banner: { js: banner },
});
await buildLazy(cli.metafile, 'dist', 'node20');
await buildLazy(lambda.metafile, 'dist/lambda', 'node22', LAMBDA_MAPS);
chmodSync('dist/cli.js', 0o755);

/**
 * chunks/<name>.cjs of each lazily loaded package a bundle's stand-ins load (scripts/lazy/load.js),
 * one CommonJS file each: required, not imported, so the stand-ins stay synchronous.
 */
async function buildLazy(metafile, outdir, target, maps = {}) {
  const inputs = Object.values(metafile.outputs).flatMap((o) => Object.keys(o.inputs));
  const used = new Set(LAZY.filter((name) => inputs.some((i) => i.endsWith(`scripts/lazy/${name}.js`))).map((name) => LAZY_CHUNK[name] ?? name));
  await build({
    ...common,
    ...maps,
    metafile: false,
    // Negotiate (Kerberos) proxy authentication is never asked for: its optional native module stays out.
    external: [...common.external, 'kerberos'],
    entryPoints: Object.fromEntries([...used].map((chunk) => [`chunks/${chunk}`, LAZY_ENTRY[chunk]])),
    outdir,
    format: 'cjs',
    outExtension: { '.js': '.cjs' },
    target,
  });
}

/**
 * dist/types/: declarations of src/index.ts and what its types reach, for the package's `types`.
 * tsc needs the whole checker for them (about 8 s of CPU, four times the bundles), so only a packed
 * package gets them; `npm test` type-checks the same sources with `tsc --noEmit`.
 */
async function emitDeclarations() {
  const { default: ts } = await import('typescript');
  const { config } = ts.readConfigFile('tsconfig.json', ts.sys.readFile);
  const overrides = { noEmit: false, declaration: true, emitDeclarationOnly: true, rootDir: 'src', outDir: 'dist/types' };
  const { options, fileNames } = ts.parseJsonConfigFileContent(config, ts.sys, '.', overrides);
  // Ambient declarations in src/ (a module that ships no types) are not imported: name them.
  const ambient = fileNames.filter((f) => /^(\.\/)?src\/.*\.d\.ts$/.test(f));
  const program = ts.createProgram(['src/index.ts', ...ambient], options);
  const { diagnostics, emitSkipped } = program.emit(undefined, undefined, undefined, true);
  if (diagnostics.length > 0 || emitSkipped) {
    const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: ts.sys.getCurrentDirectory, getNewLine: () => '\n' };
    console.error(ts.formatDiagnostics(diagnostics, host));
    throw new Error('build: the declarations of src/index.ts could not be emitted');
  }
}

if (process.argv.includes('--declarations')) {
  await emitDeclarations();
  console.log('built dist/cli.js, dist/index.js, dist/lambda/index.mjs and dist/types/');
} else {
  console.log('built dist/cli.js, dist/index.js and dist/lambda/index.mjs');
}

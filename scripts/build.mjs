// Bundles the CLI and the Lambda handler with esbuild into dist/.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// undici (and a few CommonJS dependencies) call require(); an ESM bundle needs one.
// zod's JIT compiles every object schema with `new Function` on its first parse: about 80 ms of
// start-up for schemas that run a handful of times (the configuration, a few Vitals records), so the
// bundles run it without (zod reads this global when it loads; the banner runs first in every chunk).
const banner =
  "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url); globalThis.__zod_globalConfig ??= { jitless: true };";

/**
 * Packages the code in src/ imports statically but many commands never use: an import from src/
 * resolves to a stand-in in scripts/lazy/ that require()s the real package on first use; esbuild
 * bundles that package in a lazily evaluated wrapper. check-config sends no request and renders
 * nothing, so undici, prom-client and yaml cost it nothing; a Lambda invocation loads them when
 * it gets there. (zod stays eager: the configuration schemas are built when their module loads.)
 */
const LAZY = ['undici', 'prom-client', 'yaml'];
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
  // The AWS SDK is only loaded for SSM / Secrets Manager keys; the Lambda runtime ships it.
  external: ['@aws-sdk/*'],
};
// Code splitting keeps what a command does not use (the simulator, the push sinks) out of its
// start-up: `once` must stay small in memory.
await build({
  ...common,
  entryPoints: { cli: 'src/runtime/bin.ts', index: 'src/index.ts' },
  outdir: 'dist',
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  target: 'node20',
  banner: { js: '#!/usr/bin/env node\n' + banner },
});
// The Lambda bundle is split too, so the AWS SDK (for SSM / Secrets Manager keys) is imported
// only by the invocations that need it, not at every cold start.
await build({
  ...common,
  entryPoints: { index: 'src/runtime/lambda.ts' },
  outdir: 'dist/lambda',
  splitting: true,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  target: 'node22',
  banner: { js: banner },
});
import { chmodSync } from 'node:fs';
chmodSync('dist/cli.js', 0o755);
console.log('built dist/cli.js, dist/index.js and dist/lambda/index.mjs');

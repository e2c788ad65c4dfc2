/**
 * The Lambda bundle's entry (scripts/build.mjs; serverless.yml's dist/lambda/index.handler): the
 * handler module, with V8 tuned as for the CLI (src/runtime/bin.ts). The library (src/index.ts)
 * exports the same handler without touching the V8 flags of the process that embeds it.
 */
import { tuneCompilerForShortRuns } from './v8-flags.js';

export * from './lambda.js';

tuneCompilerForShortRuns();

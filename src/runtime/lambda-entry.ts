/**
 * The Lambda bundle's entry (scripts/build.mjs; serverless.yml's dist/lambda/index.handler): the
 * handler module, with V8 tuned as for the CLI (src/runtime/bin.ts). The library (src/index.ts)
 * exports lambda.ts's handler, which leaves the V8 flags of the process that embeds it alone.
 */
import { handler as collect } from './lambda.js';
import { tuneCompilerForShortRuns } from './v8-flags.js';

export * from './lambda.js';

let tuned = false;

/** lambda.ts's handler; the first invocation sets the V8 flags, before its first request (the import does not load node:v8). */
export const handler: typeof collect = (...args) => {
  if (!tuned) {
    tuned = true;
    tuneCompilerForShortRuns();
  }
  return collect(...args);
};

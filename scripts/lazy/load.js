// Loads a package that scripts/build.mjs built as one CommonJS file, chunks/<name>.cjs, beside the
// bundle's chunks. Bundled into a chunk, a package's code is parsed by V8 at every start that
// imports that chunk, even when it never runs (a lazily evaluated wrapper is still parsed); a file
// of its own is read and compiled only when first required.
import { createRequire } from 'node:module';

/** The package `name` (its chunks/<name>.cjs), required on first use. */
export function loadLazy(name) {
  // The bundle file this code went into: an entry (dist/cli.js, dist/lambda/index.mjs) or one of its chunks.
  const here = import.meta.url;
  return createRequire(here)(/\/chunks\/[^/]*$/.test(here) ? `./${name}.cjs` : `./chunks/${name}.cjs`);
}

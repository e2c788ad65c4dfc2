// Build-time stand-in for 're2js' in the bundles (see scripts/build.mjs): chunks/re2js.cjs (about
// 260 KB) is loaded when a config's regular expression is first checked. Only what src/ uses is here.
import { loadLazy } from './load.js';

let real;

export const RE2JS = {
  compile(...args) {
    return (real ??= loadLazy('re2js')).RE2JS.compile(...args);
  },
};

// Build-time stand-in for 'yaml' in the bundles (see scripts/build.mjs): chunks/yaml.cjs is loaded
// when a YAML file is read or written. Only what src/ uses is here.
import { loadLazy } from './load.js';

let real;

export function parse(...args) {
  return (real ??= loadLazy('yaml')).parse(...args);
}

export function stringify(...args) {
  return (real ??= loadLazy('yaml')).stringify(...args);
}

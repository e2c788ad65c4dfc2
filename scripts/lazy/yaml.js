// Build-time stand-in for 'yaml' in the bundles (see scripts/build.mjs): evaluated when a YAML
// configuration file is read. Only what src/ uses is here.
let real;

export function parse(...args) {
  return (real ??= require('yaml')).parse(...args);
}

export function stringify(...args) {
  return (real ??= require('yaml')).stringify(...args);
}

// Build-time stand-in for 'prom-client' in the bundles (see scripts/build.mjs): chunks/prom-client.cjs
// is loaded on first use, so check-config and `once` do not load it (only serve's process metrics
// use it). Only what src/ uses is here.
import { loadLazy } from './load.js';

let real;
const prom = () => (real ??= loadLazy('prom-client'));

export class Registry {
  constructor(...args) {
    return new (prom().Registry)(...args);
  }
  static get PROMETHEUS_CONTENT_TYPE() {
    return prom().Registry.PROMETHEUS_CONTENT_TYPE;
  }
  static get OPENMETRICS_CONTENT_TYPE() {
    return prom().Registry.OPENMETRICS_CONTENT_TYPE;
  }
}

export function collectDefaultMetrics(...args) {
  return prom().collectDefaultMetrics(...args);
}

// Build-time stand-in for 'proxy-from-env' in the bundles (see scripts/build.mjs): chunks/proxy.cjs
// is loaded when a proxy variable is set and the first request's route is chosen (src/net/agents.ts).
import { loadLazy } from './load.js';

export function getProxyForUrl(...args) {
  return loadLazy('proxy').getProxyForUrl(...args);
}

// Build-time stand-in for 'http-proxy-agent' in the bundles (see scripts/build.mjs): chunks/proxy.cjs
// is loaded when the first request goes through a proxy (src/net/agents.ts). Only what src/ uses is here.
import { loadLazy } from './load.js';

export class HttpProxyAgent {
  constructor(...args) {
    return new (loadLazy('proxy').HttpProxyAgent)(...args);
  }
}

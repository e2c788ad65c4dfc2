// What the proxy's stand-ins (https-proxy-agent.js, http-proxy-agent.js, proxy-from-env.js) use:
// scripts/build.mjs builds it as chunks/proxy.cjs, one file for the three packages.
module.exports = {
  HttpsProxyAgent: require('https-proxy-agent').HttpsProxyAgent,
  HttpProxyAgent: require('http-proxy-agent').HttpProxyAgent,
  getProxyForUrl: require('proxy-from-env').getProxyForUrl,
};

// What the undici stand-in (undici.js) uses, by file: scripts/build.mjs builds it as chunks/undici.cjs.
module.exports = {
  apiRequest: require('undici/lib/api/api-request.js'),
  parseURL: require('undici/lib/core/util.js').parseURL,
  getGlobalDispatcher: require('undici/lib/global.js').getGlobalDispatcher,
};

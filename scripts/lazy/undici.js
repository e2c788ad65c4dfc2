// Build-time stand-in for 'undici' in the bundles (see scripts/build.mjs): the real modules are
// evaluated on the first request, so a command that sends none (check-config, --help) never
// pays for them. Only what src/ uses is here (an Agent and `request`); types come from undici.
//
// It requires undici's Agent and its `request` API by file instead of the package's index, which
// also loads fetch, WebSocket, EventSource, the caches and the mocks: about 290 KB of the 540 KB
// that every cold start of the Lambda (and every CLI start) would otherwise compile. `request`
// below is undici's own `makeDispatcher(api.request)` from its index.js, for the options src/ passes.
let real;
const undici = () =>
  (real ??= {
    Agent: require('undici/lib/dispatcher/agent.js'),
    apiRequest: require('undici/lib/api/api-request.js'),
    parseURL: require('undici/lib/core/util.js').parseURL,
    getGlobalDispatcher: require('undici/lib/global.js').getGlobalDispatcher,
  });

export class Agent {
  constructor(options) {
    return new (undici().Agent)(options);
  }
}

export function request(url, opts = {}) {
  const u = undici();
  const parsed = u.parseURL(url);
  const { dispatcher = u.getGlobalDispatcher() } = opts;
  return u.apiRequest.call(dispatcher, {
    ...opts,
    origin: parsed.origin,
    path: parsed.search ? `${parsed.pathname}${parsed.search}` : parsed.pathname,
    method: opts.method || (opts.body ? 'PUT' : 'GET'),
  });
}

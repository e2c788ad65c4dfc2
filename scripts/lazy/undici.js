// Build-time stand-in for 'undici' in the bundles (see scripts/build.mjs): the real modules are
// loaded on the first request, so a command that sends none (check-config, --help) never pays for
// them, and a Lambda cold start does not compile them at import. Only what src/ uses is here
// (`request`, for the pushes; the portal is read through src/upstream/transport.ts); types come from undici.
//
// chunks/undici.cjs (undici-parts.cjs) holds undici's `request` API and global Agent by file instead of
// the package's index, which also loads fetch, WebSocket, EventSource, the caches and the mocks:
// about 290 KB instead of 540 KB. `request` below is undici's own `makeDispatcher(api.request)` from
// its index.js, for the options src/ passes.
import { loadLazy } from './load.js';

let real;
const undici = () => (real ??= loadLazy('undici'));

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

// Build-time stand-in for 'undici' in the bundles (see scripts/build.mjs): the real module is
// evaluated on the first request, so a command that sends none (check-config, --help) never
// pays for it (about 55 ms of start-up). Only what src/ uses is here; types come from undici.
let real;
const undici = () => (real ??= require('undici'));

export class Agent {
  constructor(options) {
    return new (undici().Agent)(options);
  }
}

export function request(url, options) {
  return undici().request(url, options);
}

import pkg from '../../package.json' with { type: 'json' };

/** User-Agent of every push request. */
export const USER_AGENT = `posture-exporter/${pkg.version}`;

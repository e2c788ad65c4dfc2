import pkg from '../package.json' with { type: 'json' };

/** The exporter's version (from package.json, inlined by the bundler). */
export const VERSION: string = pkg.version;

/** User-Agent of every request the exporter sends: to the portal and to every push receiver. */
export const USER_AGENT = `posture-exporter/${VERSION}`;

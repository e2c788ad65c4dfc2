// proxy-from-env ships no types: the one function src/net/agents.ts calls.
declare module 'proxy-from-env' {
  /** The proxy for `url` from the *_PROXY variables of process.env, or '' when none is set or NO_PROXY names its host. */
  export function getProxyForUrl(url: string | URL): string;
}

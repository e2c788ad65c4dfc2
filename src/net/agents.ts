/**
 * The connections under every outward call (the portal, the pushes, the AWS SDK's clients): Node's
 * `http` and `https` Agents, kept alive, and the proxy the environment names, as curl reads it:
 * `https_proxy`/`HTTPS_PROXY` for https:// addresses, `http_proxy`/`HTTP_PROXY` for http:// ones,
 * `all_proxy`/`ALL_PROXY` for either, lower case first, and `no_proxy`/`NO_PROXY` for the hosts that
 * go direct (matched by proxy-from-env). A proxy is reached with https-proxy-agent (CONNECT, then TLS
 * to the host itself, so the certificate checked is the host's) or http-proxy-agent (a plain
 * http:// request in absolute form). Certificates are checked against Node's store, with
 * NODE_EXTRA_CA_CERTS added when the process starts. None of the proxy code is loaded unless a proxy
 * variable is set.
 */
import type { Agent, AgentOptions, ClientRequest } from 'node:http';
import { HttpProxyAgent } from 'http-proxy-agent';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { getProxyForUrl } from 'proxy-from-env';
import { ConfigError } from '../errors.js';

/** How long a kept connection may stay unused before it is closed (undici's default, 4 s). */
const IDLE_MS = 4_000;

/** The proxy variables, by the scheme of the address they serve, each lower case first. */
const PROXY_VARIABLES = {
  'https:': ['https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY'],
  'http:': ['http_proxy', 'HTTP_PROXY', 'all_proxy', 'ALL_PROXY'],
} as const;

/** Every proxy variable, for the check at start. */
const ALL_PROXY_VARIABLES = [...new Set([...PROXY_VARIABLES['https:'], ...PROXY_VARIABLES['http:']])];

type Env = Readonly<Record<string, string | undefined>>;

/** The proxy a variable names: a value without a scheme is an http:// proxy, as curl reads it. */
function proxyUrl(raw: string): URL {
  return new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`);
}

/**
 * One ConfigError per proxy variable of `env` that names no usable proxy (not a URL, or a scheme
 * other than http:// and https://, such as socks5://), naming the variable and the fix; the value
 * is not repeated, as it may hold the proxy's password.
 */
export function proxyProblems(env: Env): ConfigError[] {
  const problems: ConfigError[] = [];
  for (const name of ALL_PROXY_VARIABLES) {
    const raw = env[name]?.trim();
    if (!raw) continue;
    let url: URL | undefined;
    try {
      url = proxyUrl(raw);
    } catch {
      // Not a URL: reported below.
    }
    if (url === undefined || url.hostname === '') problems.push(new ConfigError(name, `${name} is not a proxy address: give http://HOST:PORT (or https://, with user:password@ when the proxy asks for them), or unset it.`));
    else if (url.protocol !== 'http:' && url.protocol !== 'https:') problems.push(new ConfigError(name, `${name} names a ${url.protocol.slice(0, -1)} proxy, which is not supported: give an http:// or https:// proxy (HTTP CONNECT), or unset it.`));
  }
  return problems;
}

/** How a request to an address is sent: the Agent that holds its connections, and the proxy in between (its origin, no credentials). */
export interface Route {
  readonly agent: Agent;
  readonly proxy?: string;
}

/** An http.Agent as Node's client calls it (addRequest is not in @types/node). */
type Routable = Agent & { addRequest(req: ClientRequest, options: { host?: string | null; port?: number | string | null }): void };

/**
 * One process's connections: a keep-alive Agent per scheme for the addresses reached directly, and
 * one per proxy and scheme; `routeOf` picks one by the environment's proxy variables at the time the
 * first request to an origin is made.
 */
export class Agents {
  private readonly direct = new Map<string, Agent>();
  private readonly proxied = new Map<string, Agent>();
  private readonly routes = new Map<string, Route>();
  private readonly options: AgentOptions;

  /** The environment the proxy variables are read from: the process's, as proxy-from-env reads NO_PROXY there. */
  private readonly env: Env = process.env;

  constructor(options: { idleMs?: number } = {}) {
    // `timeout` closes a kept connection left unused that long (Node's Agent destroys only free sockets on it).
    this.options = { keepAlive: true, timeout: options.idleMs ?? IDLE_MS };
  }

  /** The route of requests to `url`'s origin (remembered per origin: the environment is read once for it). */
  routeOf(url: URL): Route {
    let route = this.routes.get(url.origin);
    if (!route) {
      route = this.choose(url);
      this.routes.set(url.origin, route);
    }
    return route;
  }

  /**
   * An Agent for clients that take one Agent per scheme and reach hosts this code does not name (the
   * AWS SDK's): each request goes to its origin's route. It holds no connection itself, so a client
   * that destroys its Agent when it is destroyed (the SDK's does) cuts none of the shared ones.
   */
  agentFor(protocol: 'http:' | 'https:'): Agent {
    const { Agent: Base } = process.getBuiltinModule(protocol === 'https:' ? 'node:https' : 'node:http');
    const agentOf = (url: URL) => this.routeOf(url).agent as Routable;
    // Node's client hands each request to its Agent's addRequest; this one hands it on to the route's Agent.
    return new (class extends (Base as unknown as new () => Routable) {
      override addRequest(req: ClientRequest, options: { host?: string | null; port?: number | string | null }): void {
        const host = options.host ?? 'localhost';
        const url = new URL(`${protocol}//${host.includes(':') ? `[${host}]` : host}${options.port ? `:${options.port}` : ''}`);
        agentOf(url).addRequest(req, options);
      }
    })();
  }

  private anyProxy(protocol: 'http:' | 'https:'): boolean {
    return PROXY_VARIABLES[protocol].some((name) => (this.env[name] ?? '').trim() !== '');
  }

  private choose(url: URL): Route {
    const protocol = url.protocol === 'https:' ? 'https:' : 'http:';
    // Without a proxy variable the proxy code is never loaded.
    if (!this.anyProxy(protocol)) return { agent: this.directAgent(protocol) };
    // proxy-from-env decides whether NO_PROXY sends this address direct (it reads process.env).
    if (getProxyForUrl(url.href) === '') return { agent: this.directAgent(protocol) };
    const name = PROXY_VARIABLES[protocol].find((n) => (this.env[n] ?? '').trim() !== '')!;
    const proxy = proxyUrl(this.env[name]!.trim());
    const key = `${protocol} ${proxy.href}`;
    let agent = this.proxied.get(key);
    if (!agent) {
      agent = protocol === 'https:' ? new HttpsProxyAgent(proxy, this.options) : new HttpProxyAgent(proxy, this.options);
      this.proxied.set(key, agent);
    }
    return { agent, proxy: proxy.origin };
  }

  private directAgent(protocol: 'http:' | 'https:'): Agent {
    let agent = this.direct.get(protocol);
    if (!agent) {
      const { Agent: Kind } = process.getBuiltinModule(protocol === 'https:' ? 'node:https' : 'node:http');
      agent = new Kind(this.options);
      this.direct.set(protocol, agent);
    }
    return agent;
  }
}

let shared: Agents | undefined;

/** The process's Agents: every client that is not given its own uses these, so connections and the proxy are set in one place. */
export function processAgents(): Agents {
  return (shared ??= new Agents());
}

/** The AWS SDK's request handler options (its NodeHttpHandler's): the process's Agents, so the proxy too, and bounded waits. */
export interface AwsRequestHandler {
  httpAgent: Agent;
  httpsAgent: Agent;
  connectionTimeout: number;
  requestTimeout: number;
}

/**
 * The request handler of every AWS SDK client (SSM, Secrets Manager, DynamoDB, and the STS client
 * the SDK makes from it for web identity credentials): the process's Agents, so the proxy
 * variables apply as for every other call, and a store or table that does not answer fails within
 * seconds (the SDK retries twice). The instance metadata and container credential endpoints are
 * the SDK's own, reached directly.
 */
export function awsRequestHandler(): AwsRequestHandler {
  const agents = processAgents();
  return { httpAgent: agents.agentFor('http:'), httpsAgent: agents.agentFor('https:'), connectionTimeout: 3_000, requestTimeout: 5_000 };
}

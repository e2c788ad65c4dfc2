/**
 * How the one client stack picks a route from the environment's proxy variables, as curl reads
 * them (upper and lower case, lower first; a scheme-less proxy is http://; NO_PROXY names the hosts
 * that go direct), and which values it refuses at start. The traffic itself goes through a real
 * proxy in test/net/proxy.e2e.test.ts.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Agents, proxyProblems } from '../../src/net/agents.js';
import { runMain } from '../support/cli.js';

const PROXY_NAMES = ['https_proxy', 'HTTPS_PROXY', 'http_proxy', 'HTTP_PROXY', 'all_proxy', 'ALL_PROXY', 'no_proxy', 'NO_PROXY'];

/** A fresh environment with only `vars` among the proxy variables. */
function env(vars: Record<string, string>): void {
  for (const name of PROXY_NAMES) vi.stubEnv(name, vars[name] ?? '');
}

afterEach(() => vi.unstubAllEnvs());

describe('Agents.routeOf', () => {
  it('goes direct, on a keep-alive Agent per scheme, when no proxy variable is set', () => {
    env({});
    const agents = new Agents();
    const https = agents.routeOf(new URL('https://portal.example.com/public-api/v1/vitals'));
    const http = agents.routeOf(new URL('http://push.example.com:9091/metrics'));
    expect(https.proxy).toBeUndefined();
    expect(https.agent).toBeInstanceOf(HttpsAgent);
    expect(http.agent).not.toBeInstanceOf(HttpsAgent);
    expect(http.agent).toBeInstanceOf(HttpAgent);
    expect((https.agent as HttpAgent & { keepAlive: boolean }).keepAlive).toBe(true);
    // One Agent per scheme, whatever the host.
    expect(agents.routeOf(new URL('https://other.example.com/')).agent).toBe(https.agent);
  });

  // The variable each scheme reads, as curl reads them: HTTPS_PROXY for https:, HTTP_PROXY for http:, ALL_PROXY for either.
  it.each([
    ['HTTPS_PROXY', 'https://portal.example.com/'],
    ['https_proxy', 'https://portal.example.com/'],
    ['HTTP_PROXY', 'http://push.example.com/'],
    ['http_proxy', 'http://push.example.com/'],
    ['ALL_PROXY', 'https://portal.example.com/'],
  ])('sends a request through the proxy %s names', (name, target) => {
    const proxy = 'http://proxy.corp:3128';
    env({ [name]: proxy });
    expect(new Agents().routeOf(new URL(target)).proxy).toBe(proxy);
  });

  it('reads the lower-case variable first, as curl does, and drops the credentials from what it reports', () => {
    env({ https_proxy: 'http://user:secret@lower.corp:3128', HTTPS_PROXY: 'http://upper.corp:3128' });
    const route = new Agents().routeOf(new URL('https://portal.example.com/'));
    expect(route.proxy).toBe('http://lower.corp:3128');
    expect(route.agent).not.toBeInstanceOf(HttpsAgent);
  });

  it('keeps each scheme to its own variable: HTTPS_PROXY does not carry http:// requests', () => {
    env({ HTTPS_PROXY: 'http://proxy.corp:3128' });
    expect(new Agents().routeOf(new URL('http://push.example.com:9091/')).proxy).toBeUndefined();
  });

  it('reads a proxy without a scheme as an http:// proxy', () => {
    env({ HTTPS_PROXY: 'proxy.corp:3128' });
    expect(new Agents().routeOf(new URL('https://portal.example.com/')).proxy).toBe('http://proxy.corp:3128');
  });

  it.each([
    ['the host itself', 'portal.example.com', 'https://portal.example.com/', undefined],
    ['a leading dot, for its subdomains', '.example.com', 'https://portal.example.com/', undefined],
    ['*, for every host', '*', 'https://portal.example.com/', undefined],
    ['host:port, on that port', 'portal.example.com:8443', 'https://portal.example.com:8443/', undefined],
    ['host:port, not on another port', 'portal.example.com:8443', 'https://portal.example.com/', 'http://proxy.corp:3128'],
    ['an address', '127.0.0.1', 'https://127.0.0.1:9443/', undefined],
    ['another host', 'other.example.com', 'https://portal.example.com/', 'http://proxy.corp:3128'],
    ['the parent domain without a dot, which names that host only', 'example.com', 'https://portal.example.com/', 'http://proxy.corp:3128'],
  ])('NO_PROXY naming %s', (_what, noProxy, target, expected) => {
    env({ HTTPS_PROXY: 'http://proxy.corp:3128', NO_PROXY: noProxy });
    expect(new Agents().routeOf(new URL(target)).proxy).toBe(expected);
    env({ HTTPS_PROXY: 'http://proxy.corp:3128', no_proxy: noProxy });
    expect(new Agents().routeOf(new URL(target)).proxy).toBe(expected);
  });

  it('hands a request of a client with one Agent per scheme (the AWS SDK) to its host\'s route', () => {
    env({ HTTPS_PROXY: 'http://proxy.corp:3128', NO_PROXY: 'dynamodb.local' });
    const agents = new Agents();
    const seen: string[] = [];
    for (const [host, route] of [
      ['dynamodb.local', agents.routeOf(new URL('https://dynamodb.local:443/'))],
      ['ssm.eu-west-1.amazonaws.com', agents.routeOf(new URL('https://ssm.eu-west-1.amazonaws.com:443/'))],
    ] as const) {
      (route.agent as unknown as { addRequest: () => void }).addRequest = () => void seen.push(host);
    }
    const agent = agents.agentFor('https:') as unknown as { addRequest(req: unknown, options: object): void };
    agent.addRequest({}, { host: 'ssm.eu-west-1.amazonaws.com', port: 443 });
    agent.addRequest({}, { host: 'dynamodb.local', port: 443 });
    expect(seen).toEqual(['ssm.eu-west-1.amazonaws.com', 'dynamodb.local']);
  });

  it('gives such clients an Agent of their own that holds no connection, so destroying it cuts none of the shared ones', () => {
    env({});
    const agents = new Agents();
    const direct = agents.routeOf(new URL('https://a.example.com/')).agent;
    const destroyed: string[] = [];
    direct.destroy = () => void destroyed.push('direct');
    const sdk = agents.agentFor('https:');
    expect(sdk).not.toBe(direct);
    expect(sdk).toBeInstanceOf(HttpsAgent);
    sdk.destroy();
    expect(destroyed).toEqual([]);
  });
});

describe('proxyProblems', () => {
  it('accepts http:// and https:// proxies, and none', () => {
    expect(proxyProblems({})).toEqual([]);
    expect(proxyProblems({ HTTPS_PROXY: 'http://proxy:3128', http_proxy: 'https://u:p@proxy:3129', ALL_PROXY: 'proxy:3128', NO_PROXY: 'x' })).toEqual([]);
  });

  it.each([
    ['HTTPS_PROXY', 'socks5://proxy:1080', 'HTTPS_PROXY names a socks5 proxy, which is not supported: give an http:// or https:// proxy (HTTP CONNECT), or unset it.'],
    ['all_proxy', 'socks5h://proxy:1080', 'all_proxy names a socks5h proxy, which is not supported: give an http:// or https:// proxy (HTTP CONNECT), or unset it.'],
    ['http_proxy', 'http://', 'http_proxy is not a proxy address: give http://HOST:PORT (or https://, with user:password@ when the proxy asks for them), or unset it.'],
    ['HTTP_PROXY', 'http://[bad', 'HTTP_PROXY is not a proxy address: give http://HOST:PORT (or https://, with user:password@ when the proxy asks for them), or unset it.'],
  ])('refuses %s=%s with one line naming it, never its value', (name, value, message) => {
    const problems = proxyProblems({ [name]: `${value}` });
    expect(problems.map((p) => [p.setting, p.message])).toEqual([[name, message]]);
  });

  it('never repeats a value, which may hold the proxy password', () => {
    const [problem] = proxyProblems({ HTTPS_PROXY: 'socks5://user:hunter2@proxy:1080' });
    expect(problem?.message).not.toContain('hunter2');
  });
});

describe('a proxy variable the exporter cannot use, at start', () => {
  it('is refused by check-config and once with one line naming the variable, before any request', async () => {
    env({ HTTPS_PROXY: 'socks5://user:hunter2@proxy.corp:1080' });
    const base = { POSTURE_BASE_URL: 'https://portal.example.com/public-api/v1', POSTURE_API_KEY: 'proxy-test-key-0123456789' };
    for (const command of ['check-config', 'once']) {
      const r = await runMain([command], { env: base });
      expect(r.code, command).toBe(2);
      expect(r.stderr, command).toContain('config error: HTTPS_PROXY names a socks5 proxy, which is not supported: give an http:// or https:// proxy (HTTP CONNECT), or unset it.\n');
      expect(r.stderr + r.stdout).not.toContain('hunter2');
    }
  });
});

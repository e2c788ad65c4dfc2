/**
 * Every shell command the README and docs/*.md show (```sh, ```bash and ```console blocks) either
 * runs here, offline, with its exit code asserted, or is listed below with the reason it cannot.
 * A command that is in neither list fails the test, so a new command in the docs gets one or the
 * other. Commands run as a reader runs them: `bash -c` in a fresh working directory per block
 * (holding the repository's files as symlinks, so what a command writes stays there), with
 * `posture-exporter` on PATH (the built CLI) and the simulated portal where a portal is needed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETTINGS, envName } from '../../src/config/settings.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { BUILT_CLI } from '../support/cli.js';
import { freePort, startVictoriaMetrics, type Peer } from '../support/peers.js';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

/** One command of one block. */
interface DocCommand {
  file: string;
  /** 1-based line of the command's first line. */
  line: number;
  /** Index of the block in its file (commands of one block share a working directory). */
  block: number;
  /** The command as a shell reads it: continuation lines joined, trailing comment dropped. */
  text: string;
  /** The comment after the command, if any (`# 401`). */
  comment: string;
}

const FENCE = /^\s*(`{3,}|~{3,})\s*([A-Za-z0-9_-]*)/;

/** Every command of the ```sh, ```bash and ```console blocks of a Markdown text. */
function shellCommands(file: string, markdown: string): DocCommand[] {
  const out: DocCommand[] = [];
  const lines = markdown.split('\n');
  let fence: string | undefined;
  let shell = false;
  let console = false;
  let block = -1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const m = FENCE.exec(line);
    if (m && (fence === undefined || line.trim().startsWith(fence))) {
      if (fence === undefined) {
        fence = m[1]!;
        shell = ['sh', 'bash', 'shell', 'console'].includes(m[2]!);
        console = m[2] === 'console';
        if (shell) block++;
      } else {
        fence = undefined;
        shell = false;
      }
      continue;
    }
    if (!shell) continue;
    let text = line.trim();
    if (console) {
      if (!text.startsWith('$ ')) continue;
      text = text.slice(2);
    }
    if (text === '' || text.startsWith('#')) continue;
    const start = i;
    while (text.endsWith('\\') && i + 1 < lines.length) text = `${text.slice(0, -1).trimEnd()} ${lines[++i]!.trim()}`;
    // A comment is a `#` after whitespace; the docs put none inside quotes.
    const hash = /\s#\s?(.*)$/.exec(text);
    out.push({ file, line: start + 1, block, text: (hash ? text.slice(0, hash.index) : text).replace(/\s+/g, ' ').trim(), comment: hash?.[1]?.trim() ?? '' });
  }
  return out;
}

const ALL = DOCS.flatMap((file) => shellCommands(file, readFileSync(join(ROOT, file), 'utf8')));

/** Lines that only set variables (`POSTURE_PUSH=remote_write`): settings to copy, not commands. */
const ASSIGNMENTS_ONLY = /^(?:[A-Z_][A-Z0-9_]*=\S*\s*)+$/;

/** Commands that cannot run here, and why. Each entry must still match some command of the docs. */
const NOT_RUN: ReadonlyArray<{ match: RegExp; reason: string }> = [
  { match: /^npm test$/, reason: 'the whole suite, this file included (minutes: docs/testing.md)' },
  { match: /^npm run mutation\b/, reason: 'mutation testing: the unit tier once per mutant, an hour and more of CPU on a fresh checkout (docs/testing.md)' },
  { match: /^npm ci\b/, reason: 'npm ci reinstalls node_modules from the registry; the part after && runs below' },
  { match: /<cloud_id>|<region>|<id>|<account>/, reason: 'a real portal or AWS account, named by <placeholders>' },
  { match: /^aws /, reason: 'AWS CLI against a real account' },
  { match: /^npx osls deploy\b/, reason: 'deploys to AWS' },
  { match: /^node --import tsx bench\/fleet\.ts\b/, reason: 'a benchmark of 1,000 and 10,000 portals (minutes); npm run bench runs it' },
  { match: /^mkdir -p posture-config && cp portals\.yml posture-config\/$/, reason: 'packages your own portal list for the Lambda (no portals.yml here)' },
  { match: /^kubectl apply -k infra\/k8s\/overlays\/sharded$/, reason: 'applies to a cluster (test/k8s renders and validates the overlay offline)' },
  { match: /^kubectl create secret generic posture-exporter-keys\b/, reason: "creates a Secret in a cluster (test/k8s recreates the mounted keys offline and runs check-config for each pod)" },
  { match: /^read -rs /, reason: 'interactive: waits for a key typed at the terminal' },
  { match: /^npm run image\b/, reason: 'buildah image build (root, minutes): test/image runs npm run image -- --local-base' },
  { match: /^docker build\b/, reason: 'no Docker here; test/image builds the same Containerfile with buildah' },
  { match: /^sudo /, reason: 'moves blocks into the system Prometheus data directory as root' },
  { match: /^(?:BENCH_ONLY=\w+ )?npm run bench$/, reason: 'the benchmarks themselves (minutes of CPU on a shared machine); run on their own' },
  { match: /^node --import tsx bench\/profile\.ts \[--peer\|--receive\|--parse\] \[N\]$/, reason: 'a usage line with optional arguments in brackets, not a command' },
  { match: /^posture-exporter serve --web-config-file \/etc\//, reason: 'reads a file under /etc; the curl block below runs serve with a web config in its own directory' },
  { match: /^POSTURE_RUNBOOK_URL=\S+ npm run rules$/, reason: "rewrites the repository's shipped rule files (the block's folder links to them); test/objectives runs the same rewrite on a copy" },
];

interface Context {
  /** The block's working directory. */
  cwd: string;
  env: Record<string, string>;
  /** Replaces text of the command before it runs (a port the docs fix, for a free one). */
  rewrite?: (text: string) => string;
}

interface RunSpec {
  /** What runs instead, when the shown command chains a part that cannot run (`npm ci && …`). */
  runs?: string;
  /** Exit code (null: ended by the signal that stopped it). */
  code: number | null;
  /** Prepares the block's directory or environment (once per block, before its first command). */
  setup?: (ctx: Context) => Promise<void> | void;
  /**
   * Long-running commands: `serve` is up when `answered(ctx)` resolves true; then SIGTERM and the
   * exit code. `progress`: the command is stopped with SIGTERM once its stderr matches.
   */
  longRunning?: { answered: (ctx: Context, stderr: string) => Promise<boolean> | boolean; group?: boolean };
  /** Further checks on what it printed. */
  check?: (r: { stdout: string; stderr: string }, ctx: Context) => void;
  /** When it is killed (SIGKILL) if still running; default 60 s. */
  limitMs?: number;
}

/** How long a command may run before it is killed, unless its spec says otherwise. */
const LIMIT_MS = 60_000;

let sim: Simulator;
let vm: Peer | undefined;
let work: string;
let binDir: string;

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

async function listenOnFreePort(ctx: Context): Promise<void> {
  ctx.env.POSTURE_LISTEN = `127.0.0.1:${await freePort()}`;
}

const portal = (ctx: Context) => {
  ctx.env.POSTURE_BASE_URL = sim.baseUrl;
  ctx.env.POSTURE_API_KEY = sim.apiKey;
};

/** A backfill of many days takes minutes at the share: it has started when a day is written; SIGTERM then ends it with exit 1 ("interrupted"). */
const backfillStarted = { answered: (_ctx: Context, stderr: string) => /"status":"written"/.test(stderr) };
const interrupted = (r: { stderr: string }) => expect(r.stderr).toMatch(/interrupted with \d+ day\(s\) to go: run the same command with --resume/);
/** The backfill's progress went to the state directory `dir`, not beside its output. */
const progressIn = (dir: string, ctx: Context) => {
  expect(readdirSync(dir).some((f) => f.startsWith('backfill-vitals.om-'))).toBe(true);
  expect(readdirSync(ctx.cwd).filter((f) => f.startsWith('vitals.om') && f !== 'vitals.om')).toEqual([]);
};

const webConfig = async (ctx: Context) => {
  const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=posture-exporter',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', 'server.key', '-out', 'server.crt'], { cwd: ctx.cwd, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  writeFileSync(join(ctx.cwd, 'web.yml'), [
    'tls_server_config:', '  cert_file: server.crt', '  key_file: server.key',
    'basic_auth_users:', `  prometheus: ${bcrypt.hashSync('the-password', 4)}`, '',
  ].join('\n'));
  portal(ctx);
  const port = await freePort();
  const serve = spawn(process.execPath, [BUILT_CLI, 'serve', '--web-config-file', 'web.yml', '--listen', `127.0.0.1:${port}`], { cwd: ctx.cwd, env: { PATH: process.env.PATH, ...ctx.env }, stdio: 'ignore' });
  stopAfterAll.push(() => serve.kill('SIGTERM'));
  const until = Date.now() + 10_000;
  while (spawnSync('curl', ['-s', '-o', '/dev/null', '--cacert', 'server.crt', `https://127.0.0.1:${port}/healthz`], { cwd: ctx.cwd }).status !== 0) {
    if (Date.now() > until) throw new Error('serve with the web config did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  // The docs show the default port; this serve has a free one.
  ctx.rewrite = (text) => text.replaceAll('127.0.0.1:9877', `127.0.0.1:${port}`);
};
const stopAfterAll: Array<() => void> = [];

/** The walkthrough's second terminal: the fleet of its first block, running in this block's folder. */
const fleetRunning = async (ctx: Context) => {
  const fleet = spawn(process.execPath, [BUILT_CLI, 'simulate', '--portals', '9', '--listen', '127.0.0.1:0', '--write-config', 'fleet.yaml'], { cwd: ctx.cwd, env: { PATH: process.env.PATH }, stdio: 'ignore' });
  stopAfterAll.push(() => fleet.kill('SIGTERM'));
  const until = Date.now() + 10_000;
  while (!existsSync(join(ctx.cwd, 'fleet.yaml'))) {
    if (Date.now() > until) throw new Error('simulate --portals 9 wrote no fleet.yaml');
    await new Promise((r) => setTimeout(r, 100));
  }
};
/** The portals each of the walkthrough's `once` shards collected, in order. */
const collectedByShard: string[][] = [];
/** One shard's `once` over the walkthrough's fleet; after the last, every portal was collected by exactly one. */
const shardOnce = (r: { stdout: string }) => {
  collectedByShard.push([...r.stdout.matchAll(/^posture_devices\{portal="([^"]+)",activity="active"\}/gm)].map((m) => m[1]!));
  if (collectedByShard.length < 3) return;
  const all = collectedByShard.flat().sort();
  expect(all).toEqual(Array.from({ length: 9 }, (_, i) => `portal-0000${i}`));
};

/** How each runnable command runs (by its exact text) and what it must give. */
const RUN: Readonly<Record<string, RunSpec>> = {
  'npm ci && npm start': {
    runs: 'npm start',
    // SIGTERM goes to npm and the demo alike: the demo stops cleanly and npm ends with its code.
    code: 0,
    setup: listenOnFreePort,
    longRunning: { answered: (ctx) => answers(`http://${ctx.env.POSTURE_LISTEN}/metrics`), group: true },
    check: (r) => expect(r.stderr).toMatch(/"msg":"stopped"/),
  },
  'npm ci && npm run build': { runs: 'npm run build', code: 0, check: (_r, ctx) => expect(existsSync(join(ctx.cwd, 'dist/cli.js'))).toBe(true) },
  'npm run build': { code: 0, check: (_r, ctx) => expect(existsSync(join(ctx.cwd, 'dist/lambda/index.mjs'))).toBe(true) },
  'posture-exporter backfill --days 90 --output vitals.om': { code: 1, setup: portal, longRunning: backfillStarted, check: (r, ctx) => {
    interrupted(r);
    expect(readFileSync(join(ctx.cwd, 'vitals.om'), 'utf8')).toMatch(/^posture_vitals_health_ratio\{/m);
  } },
  // Right after the block's first backfill, which spent the portal's share of 5 before it was
  // stopped: the block's commands share one state directory, as a user's runs do, so this one waits
  // up to 60 s for those requests to leave the window before its first day (and the next for its).
  'posture-exporter backfill --from 20260101 --to 20260331 --push remote_write': {
    code: 1,
    limitMs: LIMIT_MS + 60_000,
    setup: async (ctx) => {
      portal(ctx);
      vm ??= await startVictoriaMetrics();
      ctx.env.POSTURE_REMOTE_WRITE_URL = `${vm.url}/api/v1/write`;
    },
    longRunning: { answered: (_ctx, stderr) => /"status":"written"/.test(stderr) },
    check: (r, ctx) => {
      interrupted(r);
      // Without --output the state goes to the XDG state folder.
      expect(r.stderr).toContain(`"state":"${join(ctx.env.XDG_STATE_HOME!, 'posture-exporter', 'backfill.state.json')}"`);
      expect(existsSync(join(ctx.env.XDG_STATE_HOME!, 'posture-exporter', 'backfill.state.json'))).toBe(true);
    },
  },
  // Right after the block's other runs, the resumed run first waits for their requests to leave the window (up to 60 s).
  'posture-exporter backfill --days 90 --output vitals.om --resume': {
    code: 1,
    limitMs: LIMIT_MS + 60_000,
    longRunning: { answered: (_ctx, stderr) => /waiting for the previous run's requests|"status":"written"/.test(stderr) },
    check: (r) => {
      interrupted(r);
      expect(r.stderr).not.toContain('holds an earlier backfill');
    },
  },
  'POSTURE_REQUESTS_PER_MINUTE=5 posture-exporter serve': {
    code: 0,
    setup: async (ctx) => {
      portal(ctx);
      await listenOnFreePort(ctx);
    },
    longRunning: { answered: (ctx) => answers(`http://${ctx.env.POSTURE_LISTEN}/metrics`) },
  },
  'POSTURE_REQUESTS_PER_MINUTE=4 POSTURE_STATE_DIR=~/.local/state/posture-backfill posture-exporter backfill --days 365 --output vitals.om': {
    code: 1,
    longRunning: backfillStarted,
    check: (r, ctx) => {
      interrupted(r);
      progressIn(join(ctx.env.HOME!, '.local', 'state', 'posture-backfill'), ctx);
    },
  },
  'posture-exporter backfill --days 365 --output vitals.om': { code: 1, setup: portal, longRunning: backfillStarted, check: interrupted },
  'promtool tsdb create-blocks-from openmetrics vitals.om ./blocks': { code: 0, check: (_r, ctx) => expect(readdirSync(join(ctx.cwd, 'blocks')).length).toBeGreaterThan(0) },
  'POSTURE_CONFIG_FILE=infra/k8s/base/config.yaml POSTURE_API_KEY_FILE=./key.txt posture-exporter check-config': {
    code: 0,
    // Step 3 of the page makes ./key.txt.
    setup: (ctx) => writeFileSync(join(ctx.cwd, 'key.txt'), 'a-key-of-step-3\n'),
    check: (r) => expect(r.stdout).toMatch(/^configuration is valid: 1 portal\(s\)/),
  },
  'posture-exporter simulate --portals 9 --write-config fleet.yaml': {
    code: 0,
    setup: listenOnFreePort,
    longRunning: { answered: (ctx) => existsSync(join(ctx.cwd, 'fleet.yaml')) },
    check: (r, ctx) => {
      expect(r.stdout).toContain('simulated fleet: 9 portal(s)');
      expect(readFileSync(join(ctx.cwd, 'fleet.yaml'), 'utf8').match(/api_key_file: ".*\/fleet-keys\/portal-0000\d"/g)).toHaveLength(9);
    },
  },
  'posture-exporter check-config --config fleet.yaml --shard 1 --total-shards 3': {
    code: 0,
    setup: fleetRunning,
    // Which portals a shard owns follows a hash of each portal's URL, whose port is random here: shard 1
    // owns none of the nine in (2/3)^9 = 2.6 % of runs, and then the line has no list.
    check: (r) => expect(r.stdout).toMatch(/^shard 1 of 3 owns (?:0 of 9 portal\(s\)$|[1-9] of 9 portal\(s\): portal-0000\d)/m),
  },
  'posture-exporter once --config fleet.yaml --shard 0 --total-shards 3': { code: 0, check: shardOnce },
  'posture-exporter once --config fleet.yaml --shard 1 --total-shards 3': { code: 0, check: shardOnce },
  'posture-exporter once --config fleet.yaml --shard 2 --total-shards 3': { code: 0, check: shardOnce },
  'posture-exporter rules --config posture.yaml --output posture-objectives.rules.yml': {
    code: 0,
    setup: (ctx) => writeFileSync(join(ctx.cwd, 'posture.yaml'), 'objectives:\n  - {name: edr-configured, integration: crowdstrike|sentinelone, target: 0.95}\n'),
    check: (_r, ctx) => expect(readFileSync(join(ctx.cwd, 'posture-objectives.rules.yml'), 'utf8')).toContain('name: posture-objective-edr-configured'),
  },
  // 14 error ratios (the dashboards' 7, the 28d objective's own 6 alert windows, 28d), the budget left, the target, 3 alerts.
  'promtool check rules posture-objectives.rules.yml': { code: 0, check: (r) => expect(r.stdout).toContain('SUCCESS: 19 rules found') },
  "posture-exporter rules --config posture.yaml --runbook-url 'https://wiki.example.com/posture/{alert}'": {
    code: 0,
    setup: (ctx) => writeFileSync(join(ctx.cwd, 'posture.yaml'), 'objectives:\n  - {name: edr-configured, integration: crowdstrike|sentinelone, target: 0.95}\n'),
    check: (r) => expect(r.stdout).toContain('runbook_url: https://wiki.example.com/posture/PostureObjectiveBudgetExhausted\n'),
  },
  "posture-exporter rules --config posture.yaml --runbook-url 'https://wiki.example.com/posture/{alert}' --output posture-objectives.rules.yml": {
    code: 0,
    setup: (ctx) => writeFileSync(join(ctx.cwd, 'posture.yaml'), 'objectives:\n  - {name: edr-configured, integration: crowdstrike|sentinelone, target: 0.95}\n'),
    check: (_r, ctx) => {
      const text = readFileSync(join(ctx.cwd, 'posture-objectives.rules.yml'), 'utf8');
      expect(text).toContain("# Runbook links: each alert's `runbook_url` is https://wiki.example.com/posture/{alert} with the alert's name, written by\n");
      expect(text).toContain('runbook_url: https://wiki.example.com/posture/PostureObjectiveBurnRate\n');
    },
  },
  'npm start -- --regress crowdstrike': {
    code: 0,
    setup: listenOnFreePort,
    longRunning: { answered: (ctx) => answers(`http://${ctx.env.POSTURE_LISTEN}/metrics`), group: true },
    check: (r) => expect(r.stderr).toContain('  regression (--regress): crowdstrike has 80 % fewer configuration-compliant devices from now on\n'),
  },
  'posture-exporter demo --regress crowdstrike=0.2': {
    code: 0,
    setup: listenOnFreePort,
    longRunning: { answered: (ctx) => answers(`http://${ctx.env.POSTURE_LISTEN}/metrics`) },
    check: (r) => expect(r.stderr).toContain('  regression (--regress): crowdstrike has 20 % fewer configuration-compliant devices from now on\n'),
  },
  'curl --cacert server.crt https://127.0.0.1:9877/metrics': { code: 0, setup: webConfig },
  'curl --cacert server.crt -u prometheus:WRONG https://127.0.0.1:9877/metrics': { code: 0 },
  'curl --cacert server.crt -u prometheus:the-password https://127.0.0.1:9877/metrics': { code: 0, check: (r) => expect(r.stdout).toMatch(/^posture_collection_success\{/m) },
  // No answer: curl's "empty reply from server".
  'curl http://127.0.0.1:9877/metrics': { code: 52 },
};

/** Runs one command to its end, or (long-running) until it answered, then SIGTERM. */
function run(text: string, spec: RunSpec, ctx: Context): Promise<{ code: number | null; stdout: string; stderr: string; answered: boolean }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', ['-c', text], { cwd: ctx.cwd, env: { ...ctx.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: spec.longRunning?.group === true });
    let stdout = '';
    let stderr = '';
    let answered = false;
    let polling = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const kill = (signal: NodeJS.Signals) => {
      if (spec.longRunning?.group) process.kill(-child.pid!, signal);
      else child.kill(signal);
    };
    const hardLimit = setTimeout(() => kill('SIGKILL'), spec.limitMs ?? LIMIT_MS);
    const poll = spec.longRunning && setInterval(() => {
      if (polling || answered) return;
      polling = true;
      void Promise.resolve(spec.longRunning!.answered(ctx, stderr)).then((ok) => {
        polling = false;
        if (ok && !answered) {
          answered = true;
          kill('SIGTERM');
        }
      });
    }, 200);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(hardLimit);
      if (poll) clearInterval(poll);
      resolvePromise({ code, stdout, stderr, answered });
    });
  });
}

function link(from: string, to: string): void {
  symlinkSync(to, from);
}

/** A fresh working directory that holds the repository's files (symlinked) but its own dist/. */
function workspace(): string {
  const dir = mkdtempSync(join(work, 'block-'));
  for (const entry of readdirSync(ROOT)) {
    if (['dist', '.git', 'coverage'].includes(entry)) continue;
    link(join(dir, entry), join(ROOT, entry));
  }
  mkdirSync(join(dir, 'dist'));
  return dir;
}

beforeAll(async () => {
  expect(existsSync(BUILT_CLI), 'npm run build first').toBe(true);
  work = mkdtempSync(join(tmpdir(), 'doc-commands-'));
  binDir = join(work, 'bin');
  mkdirSync(binDir);
  writeFileSync(join(binDir, 'posture-exporter'), `#!/bin/sh\nexec "${process.execPath}" "${BUILT_CLI}" "$@"\n`);
  chmodSync(join(binDir, 'posture-exporter'), 0o755);
  // No rate limit at the portal: the exporter's own share is the budget, and blocks run back to back.
  sim = await startSimulator({ rateLimit: false });
});

afterAll(async () => {
  for (const stop of stopAfterAll) stop();
  await vm?.stop();
  await sim?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('shell commands in the README and docs', () => {
  it('finds the commands of every shell block', () => {
    expect(ALL.length).toBeGreaterThan(30);
    expect(ALL.map((c) => c.text)).toContain('npm ci && npm start');
  });

  it('runs or lists every command, and lists nothing the docs no longer show', () => {
    const unknown: string[] = [];
    for (const c of ALL) {
      if (ASSIGNMENTS_ONLY.test(c.text)) continue;
      const listed = NOT_RUN.filter((n) => n.match.test(c.text));
      // A command run in part (`runs`) names the reason for the rest; a command not run needs a reason.
      if (Object.hasOwn(RUN, c.text) ? listed.length !== (RUN[c.text]!.runs ? 1 : 0) : listed.length === 0) unknown.push(`${c.file}:${c.line}: ${c.text}`);
    }
    expect(unknown, 'each command must be run (RUN) or listed with a reason (NOT_RUN), not both').toEqual([]);
    const texts = ALL.map((c) => c.text);
    expect(Object.keys(RUN).filter((t) => !texts.includes(t))).toEqual([]);
    expect(NOT_RUN.filter((n) => !texts.some((t) => n.match.test(t))).map((n) => String(n.match))).toEqual([]);
  });

  it('sets only real settings in blocks of environment variables', () => {
    const settings = new Set([...SETTINGS.map(envName), 'POSTURE_REMOTE_WRITE_PASSWORD', 'POSTURE_REMOTE_WRITE_BEARER_TOKEN']);
    const assigned = ALL.filter((c) => ASSIGNMENTS_ONLY.test(c.text)).flatMap((c) => c.text.split(/\s+/).map((a) => a.split('=')[0]!));
    expect(assigned.length).toBeGreaterThan(5);
    expect(assigned.filter((name) => !settings.has(name))).toEqual([]);
  });

  const blocks = [...new Set(ALL.map((c) => `${c.file}#${c.block}`))]
    .map((id) => ALL.filter((c) => `${c.file}#${c.block}` === id && Object.hasOwn(RUN, c.text)))
    .filter((cs) => cs.length > 0);

  // A block's commands share its state directory, and so the portal's budget: a block may wait out one window (docs/backfill.md's first does).
  it.each(blocks.map((cs) => ({ where: `${cs[0]!.file}:${cs[0]!.line}`, cs })))('runs the block at $where', async ({ cs }) => {
    mkdirSync(join(work, 'home'), { recursive: true });
    const ctx: Context = {
      cwd: workspace(),
      env: { PATH: `${binDir}:${process.env.PATH}`, HOME: join(work, 'home'), XDG_STATE_HOME: join(work, `state-${cs[0]!.line}`) },
    };
    for (const c of cs) {
      const spec = RUN[c.text]!;
      await spec.setup?.(ctx);
      const text = ctx.rewrite ? ctx.rewrite(spec.runs ?? c.text) : (spec.runs ?? c.text);
      const r = await run(text, spec, ctx);
      const said = `${c.file}:${c.line} \`${text}\`\n${r.stderr.slice(-1500)}`;
      // A long-running command must have started and answered before it was stopped.
      expect(r.answered || !spec.longRunning, `started and answered: ${said}`).toBe(true);
      expect(r.code, said).toBe(spec.code);
      spec.check?.(r, ctx);
    }
  }, 240_000);
});

describe('links and wording of the README and docs', () => {
  const texts = DOCS.map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }));

  it.each(texts)('$file speaks of the project, not of tracker issues', ({ text }) => {
    expect(text.match(/\bissues?\s*#?\d+/gi) ?? []).toEqual([]);
  });

  it.each(texts)('$file names no path outside the repository', ({ text }) => {
    expect(text.match(/(?:file:\/\/|\/work\/|\/home\/|\/Users\/)\S*/g) ?? []).toEqual([]);
  });

  it.each(texts)('$file links only to files of the repository (relative links resolve) and to the web', ({ file, text }) => {
    const broken: string[] = [];
    for (const m of text.matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      if (/^https?:\/\//.test(target) || target.startsWith('#')) continue;
      const path = resolve(dirname(join(ROOT, file)), decodeURIComponent(target.split('#')[0]!));
      if (relative(ROOT, path).startsWith('..') || !existsSync(path)) broken.push(target);
    }
    expect(broken).toEqual([]);
  });
});

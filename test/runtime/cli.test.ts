import { describe, expect, it } from 'vitest';
import { portalForAll } from '../support/closing.js';
import { CLI_OPTIONS, main } from '../../src/runtime/cli.js';
import { runMain } from '../support/cli.js';

const KEY = 'sim-cli-key-0123456789abcdef';
const sim = portalForAll({ keys: [{ key: KEY }], rateLimit: false, moving: false });

const cli = (argv: string[], env: Record<string, string> = {}) => runMain(argv, { env: { POSTURE_BASE_URL: sim().baseUrl, POSTURE_API_KEY: KEY, ...env } });

describe('posture-exporter once', () => {
  it('prints the Prometheus text on stdout, JSON logs on stderr, and exits 0', async () => {
    const r = await cli(['once']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^# HELP posture_vitals_integration_info /);
    expect(r.stdout).toContain('posture_collection_success{portal="127.0.0.1",source="alerts"} 1');
    for (const line of r.stderr.trim().split('\n')) expect(JSON.parse(line)).toHaveProperty('level');
    expect(r.stderr + r.stdout).not.toContain(KEY);
  });

  it.each([
    ['openmetrics', (s: string) => expect(s.endsWith('# EOF\n')).toBe(true)],
    ['json', (s: string) => expect(JSON.parse(s).samples.length).toBeGreaterThan(10)],
  ])('prints --format %s', async (format, check) => {
    const r = await cli(['once', '--format', format]);
    expect(r.code).toBe(0);
    check(r.stdout);
  });

  it('exits 1 naming the failed source, and still prints the rest', async () => {
    sim().addFault({ path: '/alerts', times: 10, fault: { kind: 'status', status: 500 } });
    try {
      const r = await cli(['once', '--max-retries', '0']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('collection failed for: alerts');
      expect(r.stdout).toContain('posture_collection_success{portal="127.0.0.1",source="alerts"} 0');
      expect(r.stdout).toContain('posture_devices{');
      expect(r.stdout).not.toContain('posture_alerts_open{');
    } finally {
      sim().clearFaults();
    }
  });

  it('exits 2 with one line per bad setting', async () => {
    const r = await cli(['once'], { POSTURE_PAGE_SIZE: '0', POSTURE_REQUESTS_PER_MINUTE: '11' });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(2);
    expect(r.stderr).toContain('POSTURE_PAGE_SIZE (--page-size)="0" is not valid');
  });
});

describe('posture-exporter check-config', () => {
  it('says what it will do when the settings are valid', async () => {
    const r = await cli(['check-config']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('configuration is valid: 1 portal(s)\nportal 127.0.0.1 (http://127.0.0.1');
    // One window leaves /alerts 5 − 1 − 2 = 2 pages, and 5 requests every 300 s run on time: 2 per run.
    expect(r.stdout).toMatch(/^ {2}alerts {2}every {3}300 s: 2 request\(s\) per run .*, 24 per hour$/m);
    // 60 of the sources and 1 of the resolved-alerts pass, every 3600 s.
    expect(r.stdout).toMatch(/^ {2}resolved every {2}3600 s: 1 request\(s\) per run .*, 1 per hour$/m);
    expect(r.stdout).toMatch(/serve: 64\.0 of 300 requests per hour; once\/Lambda: one run of every source and every slow one with 3 retries takes up to \d+ s/);
  });

  it('prints each objective with its error budget, then its burn-rate windows and thresholds', async () => {
    const config = JSON.stringify({ objectives: [{ name: 'edr', integration: 'crowdstrike', target: 0.99, window: '7d' }, { name: 'deployed', stage: 'deployment', target: 0.9 }] });
    const r = await cli(['check-config'], { POSTURE_CONFIG: config });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('objective edr: configuration stage of integrations matching /crowdstrike/, target 99 %: error budget 1 % of devices over 7d\n');
    expect(r.stdout).toContain('objective deployed: deployment stage of every integration, target 90 %: error budget 10 % of devices over 28d\n');
    // Then its windows and thresholds, and the pair that cannot fire at 90 %.
    expect(r.stdout).toContain('\n  page (critical): burn rate above 14.4 over 56m and 5m (error ratio above 1.44), or above 6 over 5h36m and 28m (error ratio above 0.6)\n  ticket (warning): burn rate above 3 over 22h24m and 1h52m (error ratio above 0.3), or above 1 over 2d19h12m and 5h36m (error ratio above 0.1)\n  the pair 14.4 over 56m and 5m can never fire: the burn rate is at most 1 / 0.1 = 10 (every device non-compliant); the other pairs still alert\n');
    expect(r.stdout).toContain('objective edr: configuration stage of integrations matching /crowdstrike/, target 99 %: error budget 1 % of devices over 7d\n  page (critical): burn rate above 14.4 over 14m and 5m (error ratio above 0.144), or above 6 over 1h24m and 7m (error ratio above 0.06)\n');
  });

  it('prints the alert SLAs, the defaults for severities left out', async () => {
    const r = await cli(['check-config'], { POSTURE_ALERT_SLAS: 'red=4h' });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('\nalert SLAs: red 4h, amber 7d, green 30d (posture_alerts_over_sla)\n');
  });

  it.each([
    ['a bad alert SLA', ['--alert-slas', 'red=tomorrow'], {}, '--alert-slas: red="tomorrow" is not valid: give a Prometheus duration above 0, such as 12h, 1d or 3d (default red=1d).'],
    ['an invalid objective', [], { POSTURE_CONFIG: JSON.stringify({ objectives: [{ name: 'edr', target: 95 }] }) }, 'POSTURE_CONFIG: objectives[0].target=95 is not valid: give a number between 0 and 1, both excluded (0.95 for 95 % of devices).'],
    ['a base URL that does not end in /public-api/v1', [], { POSTURE_BASE_URL: 'https://acme.example.com/api/v1' }, 'POSTURE_BASE_URL="https://acme.example.com/api/v1" does not end in /public-api/v1: give https://<cloud_id>.<host>/public-api/v1 (the portal answers 404 elsewhere).'],
    ['a key file it cannot read', [], { POSTURE_API_KEY: '', POSTURE_API_KEY_FILE: '/nonexistent/posture-key' }, 'cannot read the API key from POSTURE_API_KEY_FILE (/nonexistent/posture-key) (ENOENT): check it exists and the process may read it.'],
  ])('refuses %s with one line naming the setting, exit 2', async (_what, flags: string[], env: Record<string, string>, line) => {
    const r = await cli(['check-config', ...flags], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`config error: ${line}\n`);
  });

  describe('--lambda: as the Lambda function checks its environment at start', () => {
    const NO_SINK = 'POSTURE_PUSH is empty: the Lambda pushes its metrics, set it to any of otlp, remote_write, pushgateway.';

    it('requires a push sink, which once and serve do not', async () => {
      expect(await cli(['check-config', '--lambda'])).toMatchObject({ code: 2, stderr: `config error: ${NO_SINK}\n` });
      expect((await cli(['check-config'])).code).toBe(0);
      const r = await cli(['check-config', '--lambda'], { POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: 'http://127.0.0.1:9/' });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^configuration is valid: 1 portal\(s\); push to pushgateway\n/);
    });

    it('refuses what check-config refuses, each problem with its line, the settings\' first', async () => {
      const r = await cli(['check-config', '--lambda'], { POSTURE_PUSH: 'remote_write', POSTURE_BASE_URL: 'https://acme.example.com/api' });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        'config error: POSTURE_BASE_URL="https://acme.example.com/api" does not end in /public-api/v1: give https://<cloud_id>.<host>/public-api/v1 (the portal answers 404 elsewhere).\n' +
          "config error: POSTURE_PUSH includes remote_write but POSTURE_REMOTE_WRITE_URL is not set: give the receiver's remote-write URL.\n",
      );
    });

    it('leaves the key files to the shards\' invocations, as the function does', async () => {
      const env = { POSTURE_API_KEY: '', POSTURE_API_KEY_FILE: '/nonexistent/posture-key', POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: 'http://127.0.0.1:9/' };
      expect((await cli(['check-config', '--lambda'], env)).code).toBe(0);
      expect((await cli(['check-config'], env)).code).toBe(2);
    });

    it('belongs to check-config alone', async () => {
      expect(await cli(['once', '--lambda'])).toMatchObject({ code: 2, stdout: '', stderr: 'usage error: --lambda belongs to check-config: it checks the settings as the Lambda function does at start (see posture-exporter check-config --help)\n' });
    });
  });

  it('refuses an interval that cannot fit the budget, naming the smallest that fits', async () => {
    const r = await cli(['check-config', '--interval-seconds', '60', '--cycle-timeout-seconds', '30', '--requests-per-minute', '2', '--vitals-tags', 'a,b']);
    expect(r.code).toBe(2);
    // Named as given (a flag), so applying it alone fits. 6 requests per interval at 2 per 61 s: 180 s
    // by the hour, exactly the share, which falls behind minute by minute (each window counts from the end of a request's
    // second in flight); 200 s runs. The resolved-alerts pass's
    // request every hour, and the access settings' 3, leave /alerts no room below 180 s. Or a share of 7 (6 allows 360 of the 365 per hour).
    expect(r.stderr).toContain('set --interval-seconds=200, or raise --requests-per-minute to 7.');
    expect(r.stdout).toContain('smallest intervals that fit: POSTURE_VITALS_INTERVAL_SECONDS=200 POSTURE_ALERTS_INTERVAL_SECONDS=180 POSTURE_DEVICES_INTERVAL_SECONDS=200');
  });
});

describe('posture-exporter simulate', () => {
  it('prints the simulated portal\'s base URL and key, and stops on the stop signal', async () => {
    let stop!: () => void;
    let stdout = '';
    const stopped = main(['simulate', '--listen', '127.0.0.1:0', '--alerts', '5', '--devices', '20'], {
      env: {},
      stdout: (t) => (stdout += t),
      stderr: () => {},
      stopSignal: new Promise<void>((r) => (stop = r)),
      onReady: async ({ portalUrl }) => {
        const key = /API key \(simulated\): (\S+)/.exec(stdout)![1]!;
        const res = await fetch(`${portalUrl}/devices?filter=all&limit=1`, { headers: { 'X-Service-ApiKey': key } });
        expect(((await res.json()) as { total: number }).total).toBe(20);
        stop();
      },
    });
    expect(await stopped).toBe(0);
    expect(stdout).toMatch(/simulated portal: http:\/\/127\.0\.0\.1:\d+\/public-api\/v1/);
  });
});

describe('usage', () => {
  it('refuses an unknown flag with one usage line', async () => {
    const r = await cli(['once', '--nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('usage error: unknown flag --nope (see posture-exporter --help).\n');
  });

  it.each([
    [['check-config', '--intervl-seconds', '400'], 'unknown flag --intervl-seconds: did you mean --interval-seconds?'],
    [['check-config', '--interval-second=400'], 'unknown flag --interval-second: did you mean --interval-seconds?'],
    [['backfill', '--dayz', '3'], 'unknown flag --dayz: did you mean --days?'],
    [['check-config', '--interval'], 'unknown flag --interval: did you mean --interval-seconds?'],
    [['backfill', '--days'], '--days needs a value: give --days VALUE or --days=VALUE.'],
    [['backfill', '--resume=yes'], '--resume takes no value: give --resume alone.'],
  ])('%j: one line with the nearest flag, exit 2', async (argv, line) => {
    const r = await cli(argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`usage error: ${line}\n`);
  });

  it.each([['--api-key', 'sk-live-cli-9f8e7d'], ['--api-key=sk-live-cli-9f8e7d']])('%s points to POSTURE_API_KEY and --api-key-file, never echoing the value', async (...argv) => {
    const r = await cli(['check-config', ...argv]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('usage error: --api-key is not a flag (secrets on the command line show in ps): set POSTURE_API_KEY in the environment, or give --api-key-file FILE.\n');
    expect(r.stdout + r.stderr).not.toContain('sk-live-cli-9f8e7d');
  });

  it.each([[['--help']], [['backfill', '--help']]])('%j lists the backfill flags', async (argv) => {
    const r = await cli(argv);
    expect(r.code).toBe(0);
    for (const flag of ['--days', '--from', '--to', '--output', '--push', '--resume', '--state']) expect(r.stdout).toMatch(new RegExp(`^ {2}${flag} `, 'm'));
  });

  it('refuses an unknown command', async () => {
    expect((await cli(['twice'])).code).toBe(2);
  });

  describe('each command has its own --help', () => {
    const COMMANDS = ['once', 'serve', 'simulate', 'demo', 'check-config', 'backfill', 'rules'];
    /** The flags a help lists, as written at the start of its lines. */
    const flagsOf = (help: string) => [...help.matchAll(/^ {2}(--[a-z0-9-]+)/gm)].map((m) => m[1]!);

    it.each(COMMANDS)('%s --help: its usage line, what it does, exit 0; help %s says the same', async (command) => {
      const r = await cli([command, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^posture-exporter \\S+: ${command}\n\nUsage: posture-exporter ${command} `));
      expect(r.stdout).not.toBe((await cli(['--help'])).stdout);
      expect((await cli(['help', command])).stdout).toBe(r.stdout);
    });

    it('differ from command to command', async () => {
      const helps = await Promise.all(COMMANDS.map(async (c) => (await cli([c, '--help'])).stdout));
      expect(new Set(helps).size).toBe(COMMANDS.length);
    });

    it("rules --help lists the flags rules takes, and rules refuses the flags it does not list", async () => {
      const help = (await cli(['rules', '--help'])).stdout;
      expect(flagsOf(help).sort()).toEqual(['--config', '--output', '--runbook-url']);
      // What rules itself refuses: another setting's flag.
      expect((await cli(['rules', '--page-size', '10'])).stderr).toContain('rules takes only --config, --runbook-url and --output');
    });

    it("simulate --help lists --listen and the simulated portal's flags, and no portal setting", async () => {
      const flags = flagsOf((await cli(['simulate', '--help'])).stdout);
      expect(flags.sort()).toEqual(['--alerts', '--devices', '--integrations', '--listen', '--portals', '--regress', '--seed', '--write-config']);
    });

    it('check-config --help lists --lambda; once --help lists --format and the push settings, serve --help --listen and --web-config-file but no push', async () => {
      expect(flagsOf((await cli(['check-config', '--help'])).stdout)).toContain('--lambda');
      const once = flagsOf((await cli(['once', '--help'])).stdout);
      expect(once).toEqual(expect.arrayContaining(['--format', '--push', '--remote-write-url', '--pushgateway-url', '--base-url']));
      expect(once).not.toContain('--listen');
      const serve = flagsOf((await cli(['serve', '--help'])).stdout);
      expect(serve).toEqual(expect.arrayContaining(['--listen', '--web-config-file', '--interval-seconds', '--base-url']));
      expect(serve).not.toContain('--push');
      expect(serve).not.toContain('--format');
    });

    it('names every flag the CLI takes in some help', async () => {
      const all = new Set((await Promise.all([['--help'], ...COMMANDS.map((c) => [c, '--help'])].map(async (argv) => flagsOf((await cli(argv)).stdout)))).flat());
      const taken = Object.keys(CLI_OPTIONS).filter((f) => f !== 'help' && f !== 'version').map((f) => `--${f}`);
      expect(taken.filter((f) => !all.has(f))).toEqual([]);
    });

    it('an unknown command with --help is a usage error, exit 2', async () => {
      expect(await cli(['twice', '--help'])).toMatchObject({ code: 2, stdout: '', stderr: 'usage error: unknown command "twice": use once, serve, simulate, demo, check-config, backfill or rules (see --help)\n' });
      expect((await cli(['help', 'twice'])).code).toBe(2);
    });
  });

  it('documents every flag in --help', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--requests-per-minute');
    expect(r.stdout).toContain('POSTURE_REQUESTS_PER_MINUTE');
  });
});

describe('beforeReading: the process edge tunes V8 for the commands that read a portal only', () => {
  it('is called once before once reads the portal, and not for check-config, rules or --version', async () => {
    const calls: string[] = [];
    const before = sim().requests.length;
    // Each call with the requests the portal had answered by then: none of this run's.
    const run = (argv: string[]) => runMain(argv, { env: { POSTURE_BASE_URL: sim().baseUrl, POSTURE_API_KEY: KEY }, beforeReading: () => calls.push(`${argv[0]} after ${sim().requests.length - before}`) });
    expect((await run(['once'])).code).toBe(0);
    expect(calls).toEqual(['once after 0']);
    expect(sim().requests.length).toBeGreaterThan(before);
    expect((await run(['check-config'])).code).toBe(0);
    await run(['rules']);
    expect((await run(['--version'])).code).toBe(0);
    expect(calls).toEqual(['once after 0']);
  });
});

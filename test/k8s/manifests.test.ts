import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { prometheusRule, TARGETS } from '../../scripts/k8s.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const CLI = join(ROOT, 'dist/cli.js');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

// Offline schema validation: each kind's model validates against the Kubernetes (or Prometheus
// Operator) OpenAPI schema and throws on a wrong type, a missing required field or a bad enum.
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

// Loose views of the rendered objects, for the assertions below.
interface Container {
  name: string;
  image: string;
  args: string[];
  env: { name: string; value: string }[];
  ports: { name: string; containerPort: number }[];
  readinessProbe: Record<string, any>;
  livenessProbe: Record<string, any>;
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: Record<string, any>;
  volumeMounts: { name: string; mountPath: string; subPath?: string; readOnly?: boolean }[];
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: any;
  data?: Record<string, string>;
}

/** `kubectl kustomize dir`, parsed; a missing kubectl fails the tests that need it with the reason (CI installs it: .ci/run). */
function render(dir: string): K8sObject[] {
  let text: string;
  try {
    text = execFileSync('kubectl', ['kustomize', join(ROOT, dir)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new Error(`kubectl is not on PATH: these tests render ${dir} with \`kubectl kustomize\`; install kubectl (CI checks for it in .ci/run)`, { cause: err });
    throw new Error(`kubectl kustomize ${dir} failed: ${e.stderr?.trim() || e.message}`, { cause: err });
  }
  return parseAllDocuments(text).map((d) => d.toJS() as K8sObject);
}

function one(objects: K8sObject[], kind: string, name?: string): K8sObject {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  expect(found, name ?? kind).toHaveLength(1);
  return found[0]!;
}

function containerOf(objects: K8sObject[]): Container {
  const containers = one(objects, 'Deployment').spec.template.spec.containers as Container[];
  expect(containers).toHaveLength(1);
  return containers[0]!;
}

function envOf(c: Container, name: string): string | undefined {
  return c.env.find((e) => e.name === name)?.value;
}

/** The volume mounted at the directory (or file) holding `path`. */
function mountHolding(c: Container, path: string): Container['volumeMounts'][number] {
  const m = c.volumeMounts.find((v) => path === v.mountPath || path.startsWith(v.mountPath + '/'));
  expect(m, `a volume mount holding ${path}`).toBeDefined();
  return m!;
}

function validateAll(objects: K8sObject[]): void {
  for (const o of objects) {
    const Model = MODELS[`${o.apiVersion}/${o.kind}`];
    expect(Model, `a schema for ${o.apiVersion} ${o.kind}`).toBeDefined();
    expect(() => new Model!(o as never).validate(), `${o.kind} ${o.metadata.name}`).not.toThrow();
  }
}

describe('kubectl kustomize infra/k8s', () => {
  let base: K8sObject[];
  beforeAll(() => {
    base = render('infra/k8s');
  });

  it('renders the five objects, each valid against its Kubernetes or Prometheus Operator schema', () => {
    expect(base.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'PrometheusRule', 'PrometheusRule', 'Service', 'ServiceMonitor']);
    validateAll(base);
  });

  it('uses a validator that rejects a wrong object (so the check above means something)', () => {
    const bad = structuredClone(one(base, 'Deployment'));
    bad.spec.replicas = 'one';
    expect(() => new Deployment(bad as never).validate()).toThrow(/replicas/);
    const badMonitor = structuredClone(one(base, 'ServiceMonitor'));
    badMonitor.spec.endpoints[0].port = 9877;
    expect(() => new ServiceMonitor(badMonitor as never).validate()).toThrow(/port/);
  });

  it('runs serve in one replica, replaced with Recreate (never two exporters spending one budget)', () => {
    const d = one(base, 'Deployment');
    expect(d.spec.replicas).toBe(1);
    expect(d.spec.strategy).toEqual({ type: 'Recreate' });
    const c = containerOf(base);
    expect(c.args).toEqual(['serve']);
    expect(c.image).toBe(`localhost/posture-exporter:${pkg.version}`);
  });

  it('locks the pod down: non-root as the image user, read-only root, no capabilities, RuntimeDefault seccomp', () => {
    const pod = one(base, 'Deployment').spec.template.spec;
    const imageUser = /^USER (\d+):(\d+)$/m.exec(readFileSync(join(ROOT, 'Containerfile'), 'utf8'));
    expect(imageUser).not.toBeNull();
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: Number(imageUser![1]), runAsGroup: Number(imageUser![2]), seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(containerOf(base).securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    // Writable scratch space only where it is mounted.
    const tmp = pod.volumes.find((v: { name: string }) => v.name === mountHolding(containerOf(base), '/tmp').name);
    expect(tmp.emptyDir).toBeDefined();
    // The state directory (the requests of the last 60 s) on an emptyDir, which outlives container restarts.
    const stateDir = envOf(containerOf(base), 'POSTURE_STATE_DIR')!;
    expect(/^ENV [^]*POSTURE_STATE_DIR=(\S+)/m.exec(readFileSync(join(ROOT, 'Containerfile'), 'utf8'))?.[1]).toBe(stateDir);
    const state = pod.volumes.find((v: { name: string }) => v.name === mountHolding(containerOf(base), stateDir).name);
    expect(state.emptyDir).toBeDefined();
    expect(state.name).not.toBe(tmp.name);
  });

  it('reads the key from the Secret as a file and the settings from the ConfigMap', () => {
    const c = containerOf(base);
    const pod = one(base, 'Deployment').spec.template.spec;
    expect(envOf(c, 'POSTURE_API_KEY')).toBeUndefined();
    const keyFile = envOf(c, 'POSTURE_API_KEY_FILE')!;
    const keyMount = mountHolding(c, keyFile);
    const keyVolume = pod.volumes.find((v: { name: string }) => v.name === keyMount.name);
    expect(keyVolume.secret.secretName).toBe('posture-exporter-api-key');
    expect(keyVolume.secret.items).toEqual([{ key: 'api-key', path: keyFile.slice(keyMount.mountPath.length + 1) }]);
    expect(keyVolume.secret.defaultMode).toBe(0o440);
    expect(pod.securityContext.fsGroup).toBe(pod.securityContext.runAsGroup);

    const configFile = envOf(c, 'POSTURE_CONFIG_FILE')!;
    const configMount = mountHolding(c, configFile);
    const configVolume = pod.volumes.find((v: { name: string }) => v.name === configMount.name);
    const cm = one(base, 'ConfigMap');
    expect(configVolume.configMap.name).toBe(cm.metadata.name);
    expect(Object.keys(cm.data!)).toContain(configMount.subPath);
  });

  it('ships a ConfigMap whose settings the exporter accepts (check-config of the built CLI)', () => {
    const c = containerOf(base);
    const cm = one(base, 'ConfigMap');
    const subPath = mountHolding(c, envOf(c, 'POSTURE_CONFIG_FILE')!).subPath!;
    const dir = mkdtempSync(join(tmpdir(), 'k8s-config-'));
    try {
      writeFileSync(join(dir, 'config.yaml'), cm.data![subPath]!);
      writeFileSync(join(dir, 'api-key'), 'not-a-real-key\n');
      const r = spawnSync(process.execPath, [CLI, 'check-config'], {
        env: { PATH: process.env.PATH, POSTURE_CONFIG_FILE: join(dir, 'config.yaml'), POSTURE_API_KEY_FILE: join(dir, 'api-key') },
        encoding: 'utf8',
      });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^configuration is valid: 1 portal\(s\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('probes /healthz on the metrics port, which the image exposes and the Service and ServiceMonitor name', () => {
    const c = containerOf(base);
    const exposed = /^EXPOSE (\d+)$/m.exec(readFileSync(join(ROOT, 'Containerfile'), 'utf8'));
    expect(exposed).not.toBeNull();
    expect(c.ports).toEqual([{ name: 'metrics', containerPort: Number(exposed![1]), protocol: 'TCP' }]);
    expect(envOf(c, 'POSTURE_LISTEN')).toBe(`0.0.0.0:${exposed![1]}`);
    for (const probe of [c.readinessProbe, c.livenessProbe]) expect(probe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });

    const svc = one(base, 'Service');
    const podLabels = one(base, 'Deployment').spec.template.metadata.labels as Record<string, string>;
    expect(Object.keys(svc.spec.selector).length).toBeGreaterThan(0);
    expect(podLabels).toMatchObject(svc.spec.selector);
    expect(svc.spec.ports).toEqual([{ name: 'metrics', port: Number(exposed![1]), targetPort: 'metrics', protocol: 'TCP' }]);

    const sm = one(base, 'ServiceMonitor');
    expect(svc.metadata.labels).toMatchObject(sm.spec.selector.matchLabels);
    expect(sm.spec.endpoints).toEqual([{ port: 'metrics', path: '/metrics', interval: '60s', scrapeTimeout: '10s' }]);
  });

  it('sets resources from the measurement docs/kubernetes.md gives', () => {
    const { resources } = containerOf(base);
    expect(resources).toEqual({ requests: { cpu: '10m', memory: '128Mi' }, limits: { memory: '256Mi' } });
    const doc = readFileSync(join(ROOT, 'docs/kubernetes.md'), 'utf8');
    expect(doc).toContain('requests: cpu 10m, memory 128Mi; limit: memory 256Mi');
  });

  it('has a PrometheusRule equal to the ops kit rule file (one source of truth)', () => {
    const rulesText = readFileSync(join(ROOT, 'infra/prometheus/rules/posture.rules.yml'), 'utf8');
    const rules = parse(rulesText) as { groups: unknown[] };
    expect(rules.groups.length).toBeGreaterThan(0);
    expect(one(base, 'PrometheusRule', 'posture-exporter').spec).toEqual({ groups: rules.groups });
    // And the committed file is what `npm run k8s` writes now.
    expect(readFileSync(join(ROOT, 'infra/k8s/base/prometheusrule.yaml'), 'utf8')).toBe(prometheusRule(rulesText));
  });

  it('has a PrometheusRule equal to the objectives rule file', () => {
    const target = TARGETS.find((t) => t.name === 'posture-exporter-objectives')!;
    const rulesText = readFileSync(target.rulesFile, 'utf8');
    const rules = parse(rulesText) as { groups: unknown[] };
    expect(rules.groups.length).toBeGreaterThan(0);
    expect(one(base, 'PrometheusRule', 'posture-exporter-objectives').spec).toEqual({ groups: rules.groups });
    expect(readFileSync(target.outFile, 'utf8')).toBe(prometheusRule(rulesText, target));
  });
});

/** The base and an overlay, rendered once before the tests of the describe that calls it. */
function renderedWith(overlayDir: string): { base: () => K8sObject[]; overlay: () => K8sObject[] } {
  let base: K8sObject[] = [];
  let overlay: K8sObject[] = [];
  beforeAll(() => {
    base = render('infra/k8s');
    overlay = render(overlayDir);
  });
  return { base: () => base, overlay: () => overlay };
}

describe('kubectl kustomize infra/k8s/overlays/web-config', () => {
  const rendered = renderedWith('infra/k8s/overlays/web-config');

  it('renders valid objects that point the exporter at a web config file from a Secret', () => {
    expect(rendered.overlay().map((o) => o.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'PrometheusRule', 'PrometheusRule', 'Service', 'ServiceMonitor']);
    validateAll(rendered.overlay());
    const c = containerOf(rendered.overlay());
    const webConfig = envOf(c, 'POSTURE_WEB_CONFIG_FILE')!;
    const mount = mountHolding(c, webConfig);
    const volume = one(rendered.overlay(), 'Deployment').spec.template.spec.volumes.find((v: { name: string }) => v.name === mount.name);
    expect(volume.secret.secretName).toBe('posture-exporter-web-config');
    // Everything else of the base is kept.
    expect(envOf(c, 'POSTURE_API_KEY_FILE')).toBe(envOf(containerOf(rendered.base()), 'POSTURE_API_KEY_FILE'));
    for (const probe of [c.readinessProbe, c.livenessProbe]) expect(probe).toMatchObject({ tcpSocket: { port: 'metrics' } });
    for (const probe of [c.readinessProbe, c.livenessProbe]) expect(probe.httpGet).toBeUndefined();
    const sm = one(rendered.overlay(), 'ServiceMonitor');
    expect(sm.spec.endpoints).toHaveLength(1);
    expect(sm.spec.endpoints[0]).toMatchObject({ port: 'metrics', scheme: 'https', basicAuth: { username: { name: 'posture-exporter-scrape-auth' } } });
  });
});

describe('kubectl kustomize infra/k8s/overlays/sharded', () => {
  const rendered = renderedWith('infra/k8s/overlays/sharded');

  const statefulSet = () => one(rendered.overlay(), 'StatefulSet');
  const exporter = () => {
    const containers = statefulSet().spec.template.spec.containers as Container[];
    expect(containers).toHaveLength(1);
    return containers[0]!;
  };
  /** The value after `flag` in the args, with $(VAR) resolved from the container env the way the kubelet does. */
  const argValue = (flag: string) => {
    const args = exporter().args;
    const at = args.indexOf(flag);
    expect(at, `${flag} in ${args.join(' ')}`).toBeGreaterThan(0);
    return args[at + 1]!;
  };
  const envFrom = (name: string) => (exporter().env as { name: string; valueFrom?: any }[]).find((e) => e.name === name);

  it('renders valid objects: a StatefulSet and no Deployment, a headless Service, a PodMonitor and no ServiceMonitor', () => {
    expect(rendered.overlay().map((o) => o.kind).sort()).toEqual(['ConfigMap', 'ConfigMap', 'PodMonitor', 'PrometheusRule', 'PrometheusRule', 'PrometheusRule', 'Service', 'StatefulSet']);
    validateAll(rendered.overlay());
    const bad = structuredClone(statefulSet());
    bad.spec.podManagementPolicy = 7;
    expect(() => new StatefulSet(bad as never).validate()).toThrow(/podManagementPolicy/);
  });

  it('sets replicas and --total-shards from the one total-shards value, and starts the pods in parallel', () => {
    const sts = statefulSet();
    expect(sts.spec.podManagementPolicy).toBe('Parallel');
    expect(Number.isInteger(sts.spec.replicas)).toBe(true);
    expect(sts.spec.replicas).toBeGreaterThan(1);
    expect(exporter().args[0]).toBe('serve');
    expect(argValue('--total-shards')).toBe('$(TOTAL_SHARDS)');
    const ref = envFrom('TOTAL_SHARDS')!.valueFrom.configMapKeyRef as { name: string; key: string };
    const shards = rendered.overlay().filter((o) => o.kind === 'ConfigMap' && o.metadata.name === ref.name);
    expect(shards).toHaveLength(1);
    expect(Number(shards[0]!.data![ref.key])).toBe(sts.spec.replicas);
    // The one place the count is written: the overlay's kustomization.
    const kustomization = parse(readFileSync(join(ROOT, 'infra/k8s/overlays/sharded/kustomization.yaml'), 'utf8')) as { configMapGenerator: { literals: string[] }[] };
    expect(kustomization.configMapGenerator[0]!.literals).toEqual([`total-shards=${sts.spec.replicas}`]);
  });

  it("passes the pod's own name to --shard through the downward API", () => {
    expect(argValue('--shard')).toBe('$(POD_NAME)');
    expect(envFrom('POD_NAME')!.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    // The StatefulSet's pods are <name>-<ordinal>, which --shard reads.
    expect(statefulSet().metadata.name).toBe('posture-exporter');
  });

  it('keeps the base pod unchanged otherwise (image, security, probes, resources), the fleet\'s keys for the one key', () => {
    const basePod = structuredClone(one(rendered.base(), 'Deployment').spec.template);
    const pod = structuredClone(statefulSet().spec.template);
    const c = pod.spec.containers[0];
    c.args = ['serve'];
    c.env = c.env.filter((e: { name: string }) => e.name !== 'POD_NAME' && e.name !== 'TOTAL_SHARDS');
    // The keys: the base's one key file goes, the fleet's directory of keys comes.
    const b = basePod.spec.containers[0];
    b.env = b.env.filter((e: { name: string }) => e.name !== 'POSTURE_API_KEY_FILE');
    b.volumeMounts = b.volumeMounts.filter((m: { name: string }) => m.name !== 'api-key');
    basePod.spec.volumes = basePod.spec.volumes.filter((v: { name: string }) => v.name !== 'api-key');
    c.volumeMounts = c.volumeMounts.filter((m: { name: string }) => m.name !== 'keys');
    pod.spec.volumes = pod.spec.volumes.filter((v: { name: string }) => v.name !== 'keys');
    // The settings: the fleet's ConfigMap (another content, so another hashed name) in the same volume.
    const config = (p: typeof pod) => p.spec.volumes.find((v: { name: string }) => v.name === 'config').configMap;
    expect(config(pod).name).toMatch(/^posture-exporter-config-/);
    config(pod).name = config(basePod).name;
    expect(pod).toEqual(basePod);
  });

  it('mounts one Secret of keys as a directory, read-only, and no single key file', () => {
    const c = exporter();
    expect(c.env.map((e) => e.name)).not.toContain('POSTURE_API_KEY_FILE');
    const mount = c.volumeMounts.find((m) => m.name === 'keys')!;
    expect(mount).toEqual({ name: 'keys', mountPath: '/etc/posture-exporter/keys', readOnly: true });
    const volume = statefulSet().spec.template.spec.volumes.find((v: { name: string }) => v.name === 'keys');
    expect(volume.secret).toEqual({ secretName: 'posture-exporter-keys', defaultMode: 0o440 });
    expect(statefulSet().spec.template.spec.volumes.map((v: { name: string }) => v.name)).not.toContain('api-key');
  });

  describe('the fleet example, its files recreated as a pod sees them', () => {
    let root: string;
    let fleet: { portals: { portal: string; api_key_file: string }[] };
    /** The pod's files under `root`: the ConfigMap's settings file and one key per portal in the keys directory. */
    beforeAll(() => {
      root = mkdtempSync(join(tmpdir(), 'k8s-fleet-'));
      const c = exporter();
      const configFile = envOf(c, 'POSTURE_CONFIG_FILE')!;
      const configMount = mountHolding(c, configFile);
      const cmName = statefulSet().spec.template.spec.volumes.find((v: { name: string }) => v.name === configMount.name).configMap.name;
      const cm = rendered.overlay().find((o) => o.kind === 'ConfigMap' && o.metadata.name === cmName)!;
      const text = cm.data![configMount.subPath!]!;
      fleet = parse(text) as typeof fleet;
      const keysMount = c.volumeMounts.find((m) => m.name === 'keys')!;
      for (const p of fleet.portals) {
        // Each key file is a key of the one Secret: a file directly in its mounted directory.
        expect(dirname(p.api_key_file), p.portal).toBe(keysMount.mountPath);
        mkdirSync(join(root, keysMount.mountPath), { recursive: true });
        writeFileSync(join(root, p.api_key_file), `key-of-${p.portal}-0123456789\n`);
      }
      mkdirSync(join(root, dirname(configFile)), { recursive: true });
      writeFileSync(join(root, configFile), text.replaceAll(`${keysMount.mountPath}/`, `${join(root, keysMount.mountPath)}/`));
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    /** `check-config` with the pod's settings file and the shard flags of its args, `$(VAR)` resolved as the kubelet does. */
    const checkConfigFor = (pod: string) => {
      const c = exporter();
      const total = one(rendered.overlay(), 'StatefulSet').spec.replicas as number;
      const vars: Record<string, string> = { POD_NAME: pod, TOTAL_SHARDS: String(total) };
      const args = c.args.slice(1).map((a) => a.replace(/\$\((\w+)\)/g, (_m, v: string) => vars[v]!));
      return spawnSync(process.execPath, [CLI, 'check-config', ...args], {
        env: { PATH: process.env.PATH, POSTURE_CONFIG_FILE: join(root, envOf(c, 'POSTURE_CONFIG_FILE')!), POSTURE_LISTEN: envOf(c, 'POSTURE_LISTEN') },
        encoding: 'utf8',
      });
    };

    it('lists three portals, each with its api_key_file in the keys directory', () => {
      expect(fleet.portals.map((p) => p.portal)).toHaveLength(3);
      expect(new Set(fleet.portals.map((p) => p.api_key_file)).size).toBe(3);
    });

    it('check-config accepts it for every pod, and the pods together own every portal once', () => {
      const total = statefulSet().spec.replicas as number;
      const owned: string[] = [];
      for (let i = 0; i < total; i++) {
        const r = checkConfigFor(`posture-exporter-${i}`);
        expect(r.stderr, `pod ${i}`).toBe('');
        expect(r.status, `pod ${i}`).toBe(0);
        expect(r.stdout).toMatch(new RegExp(`^configuration is valid: \\d portal\\(s\\)\nshard ${i} of ${total} owns \\d of 3 portal\\(s\\)`));
        const names = /owns \d of 3 portal\(s\)(?:: (.*))?$/m.exec(r.stdout)![1];
        owned.push(...(names ? names.split(', ') : []));
      }
      expect(owned.sort()).toEqual(fleet.portals.map((p) => p.portal).sort());
    });

    it("names a portal's missing key by that portal's api_key_file, for the pod that owns it", () => {
      const missing = fleet.portals[1]!;
      rmSync(join(root, missing.api_key_file));
      try {
        const owner = [0, 1, 2].find((i) => checkConfigFor(`posture-exporter-${i}`).status !== 0)!;
        const r = checkConfigFor(`posture-exporter-${owner}`);
        expect(r.status).toBe(2);
        expect(r.stderr).toBe(`config error: cannot read the API key from config file ${join(root, '/etc/posture-exporter/config.yaml')}: portals[1].api_key_file (${join(root, missing.api_key_file)}) (ENOENT): check it exists and the process may read it.\n`);
      } finally {
        writeFileSync(join(root, missing.api_key_file), 'key-again-0123456789\n');
      }
    });
  });

  it('has a headless Service naming the StatefulSet, and a PodMonitor scraping every pod', () => {
    const sts = statefulSet();
    const svc = one(rendered.overlay(), 'Service');
    expect(svc.spec.clusterIP).toBe('None');
    expect(sts.spec.serviceName).toBe(svc.metadata.name);
    const podLabels = sts.spec.template.metadata.labels as Record<string, string>;
    expect(podLabels).toMatchObject(svc.spec.selector);
    expect(podLabels).toMatchObject(sts.spec.selector.matchLabels);
    const pm = one(rendered.overlay(), 'PodMonitor');
    expect(Object.keys(pm.spec.selector.matchLabels).length).toBeGreaterThan(0);
    expect(podLabels).toMatchObject(pm.spec.selector.matchLabels);
    expect(pm.spec.podMetricsEndpoints).toEqual([{ port: 'metrics', path: '/metrics', interval: '60s', scrapeTimeout: '10s' }]);
    expect(exporter().ports.map((p) => p.name)).toContain('metrics');
  });

  it('has the base PrometheusRule and one equal to the sharding rule file (one source of truth)', () => {
    const rules = rendered.overlay().filter((o) => o.kind === 'PrometheusRule');
    const target = TARGETS.find((t) => t.name === 'posture-exporter-shards')!;
    const rulesText = readFileSync(target.rulesFile, 'utf8');
    const shardRule = rules.find((r) => r.metadata.name === 'posture-exporter-shards')!;
    expect(shardRule.spec).toEqual({ groups: (parse(rulesText) as { groups: unknown[] }).groups });
    expect(rules.find((r) => r.metadata.name === 'posture-exporter')!.spec).toEqual(one(rendered.base(), 'PrometheusRule', 'posture-exporter').spec);
    expect(readFileSync(target.outFile, 'utf8')).toBe(prometheusRule(rulesText, target));
  });
});

describe('the image, set in one place', () => {
  /** Every `images:` entry of the kustomizations under infra/k8s, by file. */
  const imageEntries = (dir: string) =>
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('kustomization.yaml'))
      .flatMap((f) => ((parse(readFileSync(join(dir, f), 'utf8')) as { images?: { name: string }[] }).images ?? []).map((i) => ({ file: f, ...i })));

  it('has one images entry in all of infra/k8s, in the base, for the image the pod names', () => {
    const entries = imageEntries(join(ROOT, 'infra/k8s'));
    expect(entries).toEqual([{ file: 'base/kustomization.yaml', name: 'posture-exporter', newName: 'localhost/posture-exporter', newTag: pkg.version }]);
    expect(parse(readFileSync(join(ROOT, 'infra/k8s/base/deployment.yaml'), 'utf8')).spec.template.spec.containers[0].image).toBe('posture-exporter');
  });

  it('changed there as `kustomize edit set image` in infra/k8s/base writes it, moves the base and every overlay', () => {
    const doc = readFileSync(join(ROOT, 'docs/kubernetes.md'), 'utf8');
    expect(doc).toContain('cd infra/k8s/base && kustomize edit set image posture-exporter=REGISTRY/posture-exporter:TAG');
    const copy = mkdtempSync(join(tmpdir(), 'k8s-image-'));
    try {
      cpSync(join(ROOT, 'infra/k8s'), copy, { recursive: true });
      // What the command writes: the entry named posture-exporter gets the new name and tag.
      const file = join(copy, 'base/kustomization.yaml');
      const k = parse(readFileSync(file, 'utf8')) as { images: { name: string; newName: string; newTag: string }[] };
      k.images = k.images.map((i) => (i.name === 'posture-exporter' ? { name: i.name, newName: 'registry.example.com/team/posture-exporter', newTag: '9.9.9' } : i));
      writeFileSync(file, stringify(k));
      for (const dir of ['.', 'overlays/web-config', 'overlays/sharded']) {
        const text = execFileSync('kubectl', ['kustomize', join(copy, dir)], { encoding: 'utf8' });
        const images = [...text.matchAll(/^\s+image: (\S+)$/gm)].map((m) => m[1]);
        expect(images, dir).toEqual(['registry.example.com/team/posture-exporter:9.9.9']);
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});

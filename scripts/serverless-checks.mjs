// A plugin of serverless.yml (`plugins:`), run by `osls package` and so by `osls deploy`: refuses
// to package a function that would fail every invocation, and packs the source maps only when the
// runtime uses them. It reads the function's environment as serverless.yml resolved it from the
// parameters (`--param`, or `params:` per stage), and checks it with the built CLI's
// `check-config --lambda`, the function's own check at start: the same lines, each led by the
// parameters that set what it names.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

/** Where serverless.yml packs a fleet's config file (package.patterns): /var/task/ is the zip's root. */
const PACKED = '/var/task/posture-config/';

/** Whether NODE_OPTIONS turns source maps on (`--enable-source-maps`, the last of it and `--no-…` wins), the one thing that reads them at run time. */
function usesSourceMaps(nodeOptions) {
  const options = (nodeOptions ?? '').split(/\s+/);
  return options.lastIndexOf('--enable-source-maps') > options.lastIndexOf('--no-enable-source-maps');
}

/** The packaged config file's problems: it must be in the folder that is packaged, and exist there. */
function configFileProblems(file, serviceDir) {
  if (!file || !file.startsWith('/var/task/')) return [];
  const inZip = posix.relative('/var/task', posix.normalize(file));
  if (!posix.normalize(file).startsWith(PACKED)) return [`configFile=${file} is not under ${PACKED}: only that folder is packaged beside the bundle.`];
  if (!existsSync(join(serviceDir, inZip))) return [`configFile=${file}: ${inZip} does not exist beside serverless.yml, so it would not be packaged.`];
  return [];
}

/** Each environment variable set from a parameter (`NAME: ${param:name, default}` in serverless.yml, as written), with the parameter's name. */
function parametersOf(serverlessYml) {
  return new Map([...serverlessYml.matchAll(/^\s+([A-Z][A-Z0-9_]*):\s*\$\{param:(\w+)/gm)].map((m) => [m[1], m[2]]));
}

/**
 * The function's environment as the running function sees it: its values as strings (the ledger's
 * table by its name, which CloudFormation gives it), and a packaged config file read where it sits
 * beside serverless.yml. NODE_OPTIONS is the function's runtime's, not the check's.
 */
function functionEnv(env, tableName, serviceDir) {
  const out = {};
  for (const [name, value] of Object.entries(env)) {
    if (name === 'NODE_OPTIONS') continue;
    if (typeof value === 'string' || typeof value === 'number') out[name] = String(value);
    else if (name === 'POSTURE_STATE_TABLE') out[name] = tableName;
  }
  const file = out.POSTURE_CONFIG_FILE?.trim();
  if (file && file.startsWith(PACKED)) out.POSTURE_CONFIG_FILE = join(serviceDir, posix.relative('/var/task', posix.normalize(file)));
  return out;
}

/**
 * The lines `check-config --lambda` prints for the function's environment (empty when it would run),
 * each led by the parameters of the variables it names. `cli` is the built CLI (`npm run build`).
 */
function settingsProblems(cli, env, params, localFile, packedFile) {
  const ran = spawnSync(process.execPath, [cli, 'check-config', '--lambda'], { env, encoding: 'utf8', timeout: 60_000 });
  if (ran.status === 0) return [];
  const lines = (ran.stderr ?? '').split('\n').filter((l) => l.startsWith('config error: '));
  if (ran.status !== 2 || lines.length === 0) return [`posture-exporter check-config --lambda failed (${ran.error?.message ?? `exit ${ran.status}`}): ${(ran.stderr ?? '').trim()}`];
  return lines.map((line) => {
    const said = line.slice('config error: '.length);
    const text = localFile ? said.replaceAll(localFile, packedFile) : said;
    const named = [...text.matchAll(/\b(?:POSTURE|OTEL)_[A-Z0-9_]+\b/g)].map((m) => params.get(m[0])).filter(Boolean);
    if (localFile && text.startsWith(`config file ${packedFile}`)) named.unshift(params.get('POSTURE_CONFIG_FILE'));
    const unique = [...new Set(named)];
    return unique.length ? `parameter${unique.length > 1 ? 's' : ''} ${unique.join(', ')}: ${text}` : text;
  });
}

export default class PostureExporterChecks {
  constructor(serverless) {
    this.serverless = serverless;
    const check = () => this.check();
    this.hooks = { 'before:package:initialize': check, 'before:package:function:package': check };
  }

  check() {
    const { service, serviceDir } = this.serverless;
    const env = service.provider.environment ?? {};
    const fail = (lines) => {
      throw new this.serverless.classes.Error(`posture-exporter: the function would fail every invocation:\n${lines.map((l) => `  ${l}`).join('\n')}`, 'POSTURE_EXPORTER_PARAMETERS');
    };
    const packedFile = typeof env.POSTURE_CONFIG_FILE === 'string' ? env.POSTURE_CONFIG_FILE.trim() : '';
    const packaging = configFileProblems(packedFile, serviceDir);
    if (packaging.length > 0) fail(packaging);
    const cli = join(serviceDir, 'dist/cli.js');
    if (!existsSync(cli)) fail(['dist/cli.js is missing: run `npm run build` first (it writes the bundle that is packaged, dist/lambda/, and the CLI that checks the settings).']);
    const tableName = service.resources?.Resources?.StateTable?.Properties?.TableName;
    const checked = functionEnv(env, typeof tableName === 'string' ? tableName : 'posture-exporter-ledger', serviceDir);
    const localFile = checked.POSTURE_CONFIG_FILE !== env.POSTURE_CONFIG_FILE ? checked.POSTURE_CONFIG_FILE : undefined;
    const params = parametersOf(readFileSync(join(serviceDir, this.serverless.configurationFilename ?? 'serverless.yml'), 'utf8'));
    const problems = settingsProblems(cli, checked, params, localFile, packedFile);
    if (problems.length > 0) fail(problems);
    // The maps are most of the zip; without --enable-source-maps nothing reads them.
    if (!usesSourceMaps(env.NODE_OPTIONS)) {
      service.package.patterns = [...(service.package.patterns ?? []), '!dist/lambda/**/*.map'];
    }
  }
}

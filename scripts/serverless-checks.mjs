// A plugin of serverless.yml (`plugins:`), run by `osls package` and so by `osls deploy`: refuses
// to package a function that would fail every invocation, and packs the source maps only when the
// runtime uses them. It reads the function's environment as serverless.yml resolved it from the
// parameters (`--param`, or `params:` per stage).
import { existsSync } from 'node:fs';
import { join, posix } from 'node:path';

/** Where serverless.yml packs a fleet's config file (package.patterns): /var/task/ is the zip's root. */
const PACKED = '/var/task/posture-config/';

/** Whether NODE_OPTIONS turns source maps on (`--enable-source-maps`, the last of it and `--no-…` wins), the one thing that reads them at run time. */
function usesSourceMaps(nodeOptions) {
  const options = (nodeOptions ?? '').split(/\s+/);
  return options.lastIndexOf('--enable-source-maps') > options.lastIndexOf('--no-enable-source-maps');
}

/**
 * The problems of the parameters (empty when the function can run): where the portal is — a base
 * URL, a Cloud ID with its API host, or a packaged config file listing the portals.
 */
function parameterProblems(env, serviceDir) {
  const set = (name) => typeof env[name] === 'string' && env[name].trim() !== '';
  const problems = [];
  if (set('POSTURE_CLOUD_ID') !== set('POSTURE_API_HOST') && !set('POSTURE_BASE_URL')) {
    problems.push(`${set('POSTURE_CLOUD_ID') ? 'cloudId is set but apiHost is not' : 'apiHost is set but cloudId is not'}: the Cloud ID and the API host go together (--param="cloudId=acme" --param="apiHost=example.com").`);
  } else if (!set('POSTURE_BASE_URL') && !set('POSTURE_CLOUD_ID') && !set('POSTURE_CONFIG_FILE')) {
    problems.push(
      'no portal: give the baseUrl parameter (--param="baseUrl=https://<cloud_id>.<host>/public-api/v1"), or cloudId and apiHost, or configFile (a config file under posture-config/ listing the portals, --param="configFile=/var/task/posture-config/portals.yml"); without one the function fails every invocation.',
    );
  }
  const file = env.POSTURE_CONFIG_FILE?.trim();
  if (file && file.startsWith('/var/task/')) {
    const inZip = posix.relative('/var/task', posix.normalize(file));
    if (!posix.normalize(file).startsWith(PACKED)) problems.push(`configFile=${file} is not under ${PACKED}: only that folder is packaged beside the bundle.`);
    else if (!existsSync(join(serviceDir, inZip))) problems.push(`configFile=${file}: ${inZip} does not exist beside serverless.yml, so it would not be packaged.`);
  }
  return problems;
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
    const problems = parameterProblems(env, serviceDir);
    if (problems.length > 0) throw new this.serverless.classes.Error(`posture-exporter: ${problems.join(' ')}`, 'POSTURE_EXPORTER_PARAMETERS');
    // The maps are most of the zip; without --enable-source-maps nothing reads them.
    if (!usesSourceMaps(env.NODE_OPTIONS)) {
      service.package.patterns = [...(service.package.patterns ?? []), '!dist/lambda/**/*.map'];
    }
  }
}

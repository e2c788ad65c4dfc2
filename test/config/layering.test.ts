import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { SETTING_BY_KEY } from '../../src/config/settings.js';
import { folderOf, importGraph } from '../support/imports.js';

const graph = importGraph();

/** Every import of every file under `dir` (a folder of src/) of another folder, as [file, imported folder]. */
function importsUnder(dir: string): Array<[string, string]> {
  return [...graph].filter(([file]) => folderOf(file) === dir).flatMap(([file, targets]) => targets.map((t): [string, string] => [file, folderOf(t)]));
}

describe('dependencies run one way', () => {
  it('config imports nothing above it (only core, the domain words and the errors)', () => {
    const above = ['schedule', 'collect', 'metrics', 'exporter', 'runtime', 'sources', 'sinks', 'http', 'backfill', 'upstream', 'simulator'];
    expect(importsUnder('config').filter(([, to]) => above.includes(to))).toEqual([]);
  });

  it('metrics, below the sources, imports only core and the domain words', () => {
    expect(importsUnder('metrics').filter(([, to]) => !['metrics', 'core', 'domain.ts'].includes(to))).toEqual([]);
  });

  it('collect, the pure room of orchestration, imports neither exporter nor what does I/O (config, schedule, upstream, the clock)', () => {
    const io = ['exporter', 'config', 'schedule', 'upstream', 'runtime', 'sinks', 'http'];
    expect(importsUnder('collect').filter(([, to]) => io.includes(to))).toEqual([]);
    expect([...graph].filter(([file, targets]) => folderOf(file) === 'collect' && targets.includes('core/clock.ts'))).toEqual([]);
  });
});

describe('every default is written once, in the settings table', () => {
  it('loads exactly the table default of every setting that has a value as its default', () => {
    const config = loadConfig({ env: { POSTURE_BASE_URL: 'https://acme.portal.example.com/public-api/v1', POSTURE_API_KEY: 'k' } });
    const [portal] = config.portals;
    const d = (key: keyof typeof SETTING_BY_KEY) => SETTING_BY_KEY[key].default;
    expect({
      api_key_header: portal!.apiKeyHeader,
      requests_per_minute: portal!.requestsPerMinute,
      page_size: portal!.pageSize,
      max_series_per_family: portal!.maxSeriesPerFamily,
      interval_seconds: config.intervalSeconds,
      max_retry_after_seconds: config.maxRetryAfterSeconds,
      connect_timeout_seconds: config.connectTimeoutSeconds,
      request_timeout_seconds: config.requestTimeoutSeconds,
      max_retries: config.maxRetries,
      listen: `${config.listen.host}:${config.listen.port}`,
      log_level: config.logLevel,
      format: config.format,
      pushgateway_job: config.push.pushgatewayJob,
      push_max_retries: config.push.maxRetries,
      lambda_margin_seconds: config.lambdaMarginSeconds,
    }).toEqual({
      api_key_header: d('api_key_header'),
      requests_per_minute: d('requests_per_minute'),
      page_size: d('page_size'),
      max_series_per_family: d('max_series_per_family'),
      interval_seconds: d('interval_seconds'),
      max_retry_after_seconds: d('max_retry_after_seconds'),
      connect_timeout_seconds: d('connect_timeout_seconds'),
      request_timeout_seconds: d('request_timeout_seconds'),
      max_retries: d('max_retries'),
      listen: d('listen'),
      log_level: d('log_level'),
      format: d('format'),
      pushgateway_job: d('pushgateway_job'),
      push_max_retries: d('push_max_retries'),
      lambda_margin_seconds: d('lambda_margin_seconds'),
    });
    // Each source's interval defaults to POSTURE_INTERVAL_SECONDS, as the table says.
    expect(Object.values(portal!.intervals)).toEqual([d('interval_seconds'), d('interval_seconds'), d('interval_seconds')]);
  });
});

import { CATALOGUE, METRICS } from '../collect/catalogue.js';
import { PORTAL_LABEL, type Origin } from '../metrics/definition.js';
import { JOBS } from '../domain.js';
import { renderText } from '../metrics/render.js';
import type { Sample } from '../metrics/sample.js';
import { basicAuth, deliver } from './http.js';
import { batchLabels, isShardBatch } from './batch.js';
import { DEFAULT_CONCURRENCY, poolError, sendAll } from './pool.js';
import type { Batch, PushContext, PushSettings, Sink } from './types.js';
import { USER_AGENT } from '../version.js';

const DEFAULT_JOB = 'posture-exporter';
const DEFAULT_TIMEOUT_MS = 10_000;
/** PUT replaces a whole group, so repeating it is safe. */
const DEFAULT_MAX_RETRIES = 3;
const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** One Pushgateway group: its grouping key (besides `job`) and the samples it holds. */
export interface PushgatewayGroup {
  labels: ReadonlyArray<readonly [string, string]>;
  samples: Sample[];
}

/**
 * One path segment pair of a grouping key. A value containing `/` or an empty value must use
 * the `@base64` form (RFC 4648 base64url; an empty value is a single `=`), per the Pushgateway
 * README; anything else is URI-component encoded.
 */
export function groupingKeySegment(name: string, value: string): string {
  if (value === '') return `${name}@base64/=`;
  if (value.includes('/')) return `${name}@base64/${Buffer.from(value, 'utf8').toString('base64url')}`;
  return `${name}/${encodeURIComponent(value)}`;
}

/** The group URL: `<base>/metrics/job/<job>[/<label>/<value>]…`. */
export function groupUrl(baseUrl: string, job: string, labels: ReadonlyArray<readonly [string, string]>): string {
  const segments = [groupingKeySegment('job', job), ...labels.map(([k, v]) => groupingKeySegment(k, v))];
  return `${baseUrl.replace(/\/+$/, '')}/metrics/${segments.join('/')}`;
}

/**
 * The groups one batch pushes. Each source that succeeded this cycle replaces its own group
 * (`portal`, `source`), holding the families whose catalogue origin is that source; a failed
 * source's group is left alone, so it keeps its last values and its own `push_time_seconds`.
 * The exporter's own families always go to the group keyed by `portal` alone: they carry a
 * `source` label of their own, which a `source` grouping label would overwrite (and the
 * Pushgateway then rejects the push as duplicate series).
 */
export function groupsOf(batch: Batch): PushgatewayGroup[] {
  // The shard's own series: one group per shard, so the shard rules see every shard's gauges.
  if (isShardBatch(batch)) return [{ labels: Object.entries(batchLabels(batch)), samples: [...batch.snapshot.samples] }];
  const bySource = new Map<Origin, Sample[]>();
  for (const s of batch.snapshot.samples) {
    const origin = METRICS[s.name]?.origin;
    if (!origin) continue;
    let list = bySource.get(origin);
    if (!list) bySource.set(origin, (list = []));
    list.push(s);
  }
  const groups: PushgatewayGroup[] = [];
  // The resolved-alerts pass's group (source="resolved") is replaced only by a run that made a pass:
  // between passes the Pushgateway keeps its last values.
  for (const source of JOBS) {
    if (!batch.succeeded.includes(source)) continue;
    groups.push({ labels: [[PORTAL_LABEL, batch.portal], ['source', source]], samples: bySource.get(source) ?? [] });
  }
  groups.push({ labels: [[PORTAL_LABEL, batch.portal]], samples: bySource.get('exporter') ?? [] });
  return groups;
}

/** The samples without the labels the grouping key sets (the Pushgateway would overwrite them anyway). */
export function withoutGroupingLabels(samples: readonly Sample[], groupLabels: ReadonlyArray<readonly [string, string]>): Sample[] {
  const drop = new Set(['job', ...groupLabels.map(([k]) => k)]);
  return samples.map((s) => ({
    name: s.name,
    value: s.value,
    labels: Object.fromEntries(Object.entries(s.labels).filter(([k]) => !drop.has(k))),
  }));
}

type PushgatewaySettings = NonNullable<PushSettings['pushgateway']>;

/** Prometheus Pushgateway: one group per portal and source (and one per shard), replaced with PUT, a bounded number at once. */
export class PushgatewaySink implements Sink {
  readonly name = 'pushgateway' as const;
  constructor(private readonly settings: PushgatewaySettings) {}

  async push(batches: readonly Batch[], ctx: PushContext): Promise<void> {
    const job = this.settings.job ?? DEFAULT_JOB;
    const auth = this.settings.auth ?? { kind: 'none' };
    const headers: Record<string, string> = { 'content-type': CONTENT_TYPE, 'user-agent': USER_AGENT };
    const secrets: string[] = [];
    if (auth.kind === 'basic') {
      headers.authorization = basicAuth(auth.username, auth.password);
      secrets.push(auth.password, headers.authorization.slice('Basic '.length));
    }
    const groups = batches.flatMap(groupsOf);
    const outcome = await sendAll(
      groups,
      async (group) => {
        // Timestamps are never in the body: the Pushgateway rejects pushed timestamps.
        const body = await renderText(withoutGroupingLabels(group.samples, group.labels), 'prometheus', CATALOGUE);
        await deliver({
          sink: this.name,
          ctx,
          method: 'PUT',
          url: groupUrl(this.settings.url, job, group.labels),
          body,
          headers: () => headers,
          timeoutMs: this.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
          maxRetries: this.settings.maxRetries ?? DEFAULT_MAX_RETRIES,
          secrets,
        });
      },
      { concurrency: this.settings.concurrency ?? DEFAULT_CONCURRENCY, deadline: ctx.deadline, clock: ctx.clock, signal: ctx.signal },
    );
    ctx.logger.debug('pushgateway: pushed groups', { sink: this.name, groups: outcome.sent, failed: outcome.failures.length });
    const error = poolError(this.name, 'Pushgateway groups', outcome);
    if (error) throw error;
  }
}

import type { Logger } from '../core/log.js';
import { describeIssues, VitalsRecordSchema, type VitalsRecord } from '../upstream/schemas.js';
import { InvalidRecords } from './invalid.js';

/** The Vitals of one request: the whole portal (`tag` undefined) or one tag. */
export interface VitalsList {
  readonly tag: string | undefined;
  readonly records: readonly VitalsRecord[];
  readonly invalid: number;
}

/** Collects a /vitals response: validates each record, skips malformed ones and repeated keys. */
export class VitalsSink {
  private readonly records: VitalsRecord[] = [];
  private readonly keys = new Set<string>();
  private readonly invalid: InvalidRecords;
  private index = 0;

  constructor(
    private readonly tag: string | undefined,
    logger?: Logger,
  ) {
    this.invalid = new InvalidRecords(tag === undefined ? 'vitals' : `vitals (tag ${tag})`, logger);
  }

  record(raw: unknown): void {
    const i = this.index++;
    const parsed = VitalsRecordSchema.safeParse(raw);
    if (!parsed.success) return this.invalid.add(i, describeIssues(parsed.error, raw));
    // Two records for one integration would make duplicate series; keep the first.
    if (this.keys.has(parsed.data.key)) return this.invalid.add(i, `repeated integration key ${JSON.stringify(parsed.data.key)}`);
    this.keys.add(parsed.data.key);
    this.records.push(parsed.data);
  }

  finish(): VitalsList {
    return { tag: this.tag, records: this.records, invalid: this.invalid.count };
  }
}

/** Folds plain records (tests, fixtures) as the sink does. */
export function foldVitals(records: Iterable<unknown>, tag?: string, logger?: Logger): VitalsList {
  const sink = new VitalsSink(tag, logger);
  for (const r of records) sink.record(r);
  return sink.finish();
}

/** The funnel rule: each stage's eligible equals the previous stage's compliant, and no compliant exceeds its eligible. */
export function funnelConsistent(r: Extract<VitalsRecord, { vitalsEnabled: true }>): boolean {
  return (
    r.agentFunctioningPossibleCompliant === r.agentDeployedCompliant &&
    r.configurationPossibleCompliant === r.agentFunctioningCompliant &&
    r.agentDeployedCompliant <= r.agentDeployedPossibleCompliant &&
    r.agentFunctioningCompliant <= r.agentFunctioningPossibleCompliant &&
    r.configurationCompliant <= r.configurationPossibleCompliant
  );
}

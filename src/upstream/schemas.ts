import { z } from 'zod';

/**
 * Response record schemas: lenient to unknown fields (the portal may add some), strict on the
 * fields the exporter uses. A record that fails is counted and skipped by the collector.
 */

const count = z.number().int().nonnegative();

/** A Vitals record (spec 2.7); the funnel numbers are required when `vitalsEnabled` is true. */
export const VitalsRecordSchema = z.discriminatedUnion('vitalsEnabled', [
  z.looseObject({
    key: z.string().min(1),
    name: z.string(),
    vitalsEnabled: z.literal(true),
    agentDeployedPossibleCompliant: count,
    agentDeployedCompliant: count,
    agentFunctioningPossibleCompliant: count,
    agentFunctioningCompliant: count,
    configurationPossibleCompliant: count,
    configurationCompliant: count,
  }),
  z.looseObject({
    key: z.string().min(1),
    name: z.string(),
    vitalsEnabled: z.literal(false),
    activeAgents: count,
  }),
]);
export type VitalsRecord = z.infer<typeof VitalsRecordSchema>;

/** The alert fields the exporter reads (spec 2.6). */
export const AlertRecordSchema = z.looseObject({
  state: z.string(),
  product: z.string(),
  status: z.string(),
  ownerName: z.string(),
  timestamp: z.string(),
  resolved: z.boolean(),
  acknowledged: z.boolean(),
  inactiveUntil: z.string(),
});
export type AlertRecord = z.infer<typeof AlertRecordSchema>;

/** Describes why a record failed, in a few words, for the log (never the whole record). */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`)
    .join('; ');
}

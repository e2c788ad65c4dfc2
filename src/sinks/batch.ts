import { PORTAL_LABEL } from '../metrics/definition.js';
import type { Batch, ShardBatch } from './types.js';

/** The label of the shard's own series in a push. */
const SHARD_LABEL = 'shard';

/** Whether a batch is the shard's own rather than a portal's. */
export function isShardBatch(batch: Batch): batch is ShardBatch {
  return 'shard' in batch;
}

/** The labels that tell a batch's series apart from other batches': `portal`, or `shard` for the shard's own. */
export function batchLabels(batch: Batch): Record<string, string> {
  return isShardBatch(batch) ? { [SHARD_LABEL]: String(batch.shard.ordinal) } : { [PORTAL_LABEL]: batch.portal };
}


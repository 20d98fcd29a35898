/**
 * A shard without a fleet run (`--shard I/N` without `--fleet-run`): only the partition. Nothing
 * is shared with the other shards: batches do not wait for them, and `serial`,
 * `max_fail_percentage` and `any_errors_fatal` apply to this shard's own clusters of each batch.
 */
import type { FleetBatch, FleetHooks } from '../executor/fleet.js';
import { batchVerdict } from './budget.js';
import { shardOf } from './partition.js';

/** The hooks of an independent shard. */
export function independentShard(index: number, shards: number): FleetHooks {
  const verdict = (b: FleetBatch, failed: string[]): string | undefined =>
    batchVerdict(failed.length, { batchSize: b.own ?? b.size, anyErrorsFatal: b.anyErrorsFatal, ...(b.maxFailPercentage !== undefined ? { maxFailPercentage: b.maxFailPercentage } : {}) });
  return {
    owns: (cluster) => shardOf(cluster, shards) === index,
    beforeBatch: () => Promise.resolve(undefined),
    checkpoint: (b, failed) => Promise.resolve(verdict(b, failed)),
    afterBatch: (b, failed, _recap) => Promise.resolve(verdict(b, failed)),
  };
}

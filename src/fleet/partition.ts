/**
 * The stable partition of a fleet's inventory into shards: rendezvous hashing (highest random
 * weight) of the cluster name. A cluster belongs to the shard whose SHA-256 of `name`, `index`
 * is highest. It depends on nothing but the name and N, so every shard computes the same
 * partition on its own; adding or removing a cluster moves only that cluster, and going from N to
 * N+1 shards moves only the clusters the new shard takes (about 1/(N+1) of them).
 */
import { createHash } from 'node:crypto';

/** The weight of `cluster` for shard `index`. */
function weight(cluster: string, index: number): bigint {
  return createHash('sha256').update(`${cluster}\u0000${index}`).digest().readBigUInt64BE(0);
}

/** The shard (0-based, below `shards`) that `cluster` belongs to. */
export function shardOf(cluster: string, shards: number): number {
  let best = 0;
  let bestWeight = -1n;
  for (let i = 0; i < shards; i++) {
    const w = weight(cluster, i);
    if (w > bestWeight) {
      best = i;
      bestWeight = w;
    }
  }
  return best;
}

/** The clusters of `names` that shard `index` of `shards` runs, in their given order. */
export function shardClusters(names: readonly string[], index: number, shards: number): string[] {
  return names.filter((n) => shardOf(n, shards) === index);
}

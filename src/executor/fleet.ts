/**
 * What the executor asks of a fleet when the run is one shard of it (`kplay run --shard I/N`):
 * which clusters are this shard's, and the fleet-wide failure budget (src/fleet/coordinator.ts
 * implements it against the management cluster). The executor cuts every play's `serial` batches
 * from the whole fleet's clusters, runs its own clusters of each batch, and asks here before a
 * batch and after each task whether the fleet goes on.
 */

import type { ClusterStats } from '../report/events.js';

/** A fleet batch's rules (the play's keywords and the batch's fleet-wide size). */
export interface FleetBatch {
  /** 0-based play index. */
  play: number;
  /** 1-based batch number. */
  batch: number;
  /** Clusters in the fleet batch (every shard's). */
  size: number;
  /** This shard's clusters in the batch (set once the batch is cut). */
  own?: number;
  anyErrorsFatal: boolean;
  maxFailPercentage?: number;
}

/** The fleet side of a shard's run. */
export interface FleetHooks {
  /** Whether `cluster` is this shard's. */
  owns(cluster: string): boolean;
  /**
   * Before a fleet batch starts: waits until every shard finished the previous batch of the play;
   * resolves to why the fleet stopped, or undefined to go on.
   */
  beforeBatch(b: FleetBatch, signal: AbortSignal): Promise<string | undefined>;
  /** After a task of the batch: this shard's failed clusters of the batch so far; resolves to why the fleet stops, if it does. */
  checkpoint(b: FleetBatch, failed: string[], signal: AbortSignal): Promise<string | undefined>;
  /**
   * This shard finished its part of the batch: its failed clusters (reported once more) and the
   * PLAY RECAP numbers so far of the batch's clusters (kept in the fleet, so a shard killed later
   * still counts them).
   */
  afterBatch(b: FleetBatch, failed: string[], recap: Record<string, ClusterStats>, signal: AbortSignal): Promise<string | undefined>;
}

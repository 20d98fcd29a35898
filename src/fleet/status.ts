/**
 * The merged view of a fleet run: every shard's report, the recap per cluster across shards, the
 * failures per fleet batch and whether the fleet stopped (pure: from the coordination object's data).
 */
import { failuresOf, reportsOf, stopOf, type FleetStop } from './budget.js';
import { FLEET_KEYS, type ShardClusterRecap, type ShardReport } from './contract.js';

/** One shard in the merged view. */
export interface ShardStatus {
  shard: number;
  /** `missing`: no report (the shard never started, or could not reach the management cluster). */
  state: ShardReport['state'] | 'missing';
  run_id?: string;
  resumed_from?: string;
  clusters: number;
  started?: string;
  finished?: string;
  stop_reason?: string;
}

/** The merged view of a fleet run. */
export interface FleetStatus {
  fleet_run: string;
  shards: number;
  /** Every shard finished its part (state finished, failed or stopped). */
  complete: boolean;
  stop?: FleetStop;
  shard_states: ShardStatus[];
  /** Recap per cluster, merged across shards (each cluster belongs to one shard). */
  recap: Record<string, ShardClusterRecap & { shard: number }>;
  /** Failed clusters per fleet batch (play 1-based in the text view). */
  failures: { play: number; batch: number; clusters: string[] }[];
  /** Clusters that failed, fleet-wide. */
  failed_total: number;
}

/** Merge the shards' reports of a fleet run. */
export function fleetStatus(fleetRun: string, data: Record<string, string>): FleetStatus {
  const reports = reportsOf(data);
  const shards = Number(data[FLEET_KEYS.shards] ?? reports.values().next().value?.shards ?? 0);
  const states: ShardStatus[] = [];
  const recap: FleetStatus['recap'] = {};
  for (let i = 0; i < shards; i++) {
    const r = reports.get(i);
    if (!r) {
      states.push({ shard: i, state: 'missing', clusters: 0 });
      continue;
    }
    states.push({
      shard: i,
      state: r.state,
      run_id: r.run_id,
      ...(r.resumed_from ? { resumed_from: r.resumed_from } : {}),
      clusters: r.clusters.length,
      started: r.started,
      ...(r.finished ? { finished: r.finished } : {}),
      ...(r.stop_reason ? { stop_reason: r.stop_reason } : {}),
    });
    for (const [name, s] of Object.entries(r.recap ?? {})) recap[name] = { ...s, shard: i };
  }
  const failures = failuresOf(data);
  const stop = stopOf(data);
  return {
    fleet_run: fleetRun,
    shards,
    complete: shards > 0 && states.every((s) => s.state === 'finished' || s.state === 'failed' || s.state === 'stopped'),
    ...(stop ? { stop } : {}),
    shard_states: states,
    recap: Object.fromEntries(Object.entries(recap).sort(([a], [b]) => a.localeCompare(b))),
    failures,
    failed_total: new Set(failures.flatMap((f) => f.clusters)).size,
  };
}

/**
 * The fleet's failure budget as plain data: the coordination object's `data` (contract.ts) read
 * and changed without any I/O, so the arithmetic is unit-tested and every shard applies the same
 * rules. `serial` batches are the fleet's (every shard cuts the same batches from the whole
 * inventory and runs its own clusters of each), so `max_fail_percentage` is measured against the
 * fleet batch's size, with the failures of every shard in that batch.
 */
import { FLEET_KEYS, type ShardReport } from './contract.js';

/** Why the fleet stopped (the `stop` key). */
export interface FleetStop {
  reason: string;
  shard: number;
  play: number;
  batch: number;
}

/** The rules of a play for one fleet batch. */
export interface BatchRule {
  /** Clusters in the fleet batch (all shards). */
  batchSize: number;
  anyErrorsFatal: boolean;
  maxFailPercentage?: number;
}

type Data = Record<string, string>;

function list<T>(data: Data, key: string): T[] {
  const raw = data[key];
  if (raw === undefined || raw === '') return [];
  try {
    const v: unknown = JSON.parse(raw);
    return Array.isArray(v) ? (v as T[]) : [];
  } catch {
    return [];
  }
}

/** The clusters that failed in batch `batch` of play `play`, fleet-wide. */
export function failedIn(data: Data, play: number, batch: number): string[] {
  return list<string>(data, FLEET_KEYS.failed(play, batch));
}

/** The shards that finished batch `batch` of play `play`. */
export function doneIn(data: Data, play: number, batch: number): number[] {
  return list<number>(data, FLEET_KEYS.done(play, batch));
}

/** The fleet's stop, if set. */
export function stopOf(data: Data): FleetStop | undefined {
  const raw = data[FLEET_KEYS.stop];
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as Partial<FleetStop>;
    return typeof v.reason === 'string' ? { reason: v.reason, shard: Number(v.shard), play: Number(v.play), batch: Number(v.batch) } : undefined;
  } catch {
    return { reason: raw, shard: -1, play: -1, batch: -1 };
  }
}

/**
 * Whether the fleet's stop keeps a shard from starting batch `batch` of play `play`. A batch the
 * fleet started (every shard finished the previous one) is started by every shard, also one that
 * gets there after another shard stopped the fleet in it: as in one process, where every cluster
 * of the batch runs the task in which the budget is spent and nothing after it. A stop in an
 * earlier batch (or play) keeps it from starting.
 */
export function stopsBatch(stop: FleetStop | undefined, play: number, batch: number): boolean {
  return stop !== undefined && !(stop.play === play && stop.batch === batch);
}

/**
 * Whether a fleet batch with `failed` failed clusters must stop the fleet, and why (undefined:
 * it may go on). The rules of one process's batch (play.ts checkThresholds), on the fleet batch.
 */
export function batchVerdict(failed: number, rule: BatchRule): string | undefined {
  if (failed === 0) return undefined;
  if (rule.anyErrorsFatal) return 'any_errors_fatal: a cluster failed';
  const pct = (failed * 100) / Math.max(1, rule.batchSize);
  if (rule.maxFailPercentage !== undefined && pct > rule.maxFailPercentage) {
    return `max_fail_percentage ${rule.maxFailPercentage}% exceeded: ${failed} of ${rule.batchSize} cluster(s) in this fleet batch failed`;
  }
  if (failed >= rule.batchSize) return 'every cluster of the fleet batch failed';
  return undefined;
}

/** How many more failures the fleet batch takes before it stops the fleet (0: the next one stops it). */
export function budgetLeft(failed: number, rule: BatchRule): number {
  if (rule.anyErrorsFatal) return 0;
  const byPct = rule.maxFailPercentage === undefined ? Infinity : Math.floor((rule.maxFailPercentage * rule.batchSize) / 100) - failed;
  const byAll = rule.batchSize - 1 - failed;
  return Math.max(0, Math.min(byPct, byAll));
}

/**
 * Add this shard's failed clusters of a batch to `data` and stop the fleet when the batch's rules
 * say so. Returns the new data, or undefined when nothing changes (no write needed).
 */
export function reportFailures(data: Data, shard: number, play: number, batch: number, failed: readonly string[], rule: BatchRule): Data | undefined {
  const key = FLEET_KEYS.failed(play, batch);
  const before = failedIn(data, play, batch);
  const all = [...new Set([...before, ...failed])].sort();
  const out: Data = { ...data };
  let changed = false;
  if (all.length !== before.length) {
    out[key] = JSON.stringify(all);
    changed = true;
  }
  const why = batchVerdict(all.length, rule);
  if (why && !stopOf(data)) {
    out[FLEET_KEYS.stop] = JSON.stringify({ reason: why, shard, play, batch } satisfies FleetStop);
    changed = true;
  }
  return changed ? out : undefined;
}

/** Mark batch `batch` of play `play` done by `shard` (undefined: already marked). */
export function markDone(data: Data, shard: number, play: number, batch: number): Data | undefined {
  const done = doneIn(data, play, batch);
  if (done.includes(shard)) return undefined;
  return { ...data, [FLEET_KEYS.done(play, batch)]: JSON.stringify([...done, shard].sort((a, b) => a - b)) };
}

/** Stop the fleet (the first reason stays; undefined: already stopped). */
export function markStop(data: Data, stop: FleetStop): Data | undefined {
  if (stopOf(data)) return undefined;
  return { ...data, [FLEET_KEYS.stop]: JSON.stringify(stop) };
}

/** The shard reports in `data`, by index. */
export function reportsOf(data: Data): Map<number, ShardReport> {
  const out = new Map<number, ShardReport>();
  for (const [k, v] of Object.entries(data)) {
    const m = /^shard\.(\d+)$/.exec(k);
    if (!m) continue;
    try {
      out.set(Number(m[1]), JSON.parse(v) as ShardReport);
    } catch {
      // a report written by something else: left out, the status says it is missing
    }
  }
  return out;
}

/** Every `p<P>.b<B>.failed` entry: (play, batch) → failed clusters. */
export function failuresOf(data: Data): { play: number; batch: number; clusters: string[] }[] {
  const out: { play: number; batch: number; clusters: string[] }[] = [];
  for (const k of Object.keys(data)) {
    const m = /^p(\d+)\.b(\d+)\.failed$/.exec(k);
    if (m) out.push({ play: Number(m[1]), batch: Number(m[2]), clusters: failedIn(data, Number(m[1]), Number(m[2])) });
  }
  return out.sort((a, b) => a.play - b.play || a.batch - b.batch);
}

/**
 * The run record's shape: what `src/audit/record.ts` writes (locally and in clusters) and what
 * `kplay report` / `kplay history` render. Pure types, so renderers below the audit layer can
 * read records without importing the code that writes them.
 */
import type { ClusterStats } from './events.js';
import type { GateRecord } from './gate.js';

/** A link to the previous record of a cluster. */
export interface ChainLink {
  run_id: string;
  /** SHA-256 of that record's stored text. */
  sha256: string;
}

/** Who ran what, when. */
export interface RunHeader {
  run_id: string;
  user: string;
  host: string;
  git?: { commit: string; author: string; dirty: boolean };
  started: string;
  finished?: string;
  playbook: string;
  inventory: string;
  limit?: string;
  tags: string[];
  skip_tags: string[];
  extra_var_names: string[];
  check: boolean;
  lock: boolean;
  /** The plan this run carried out (`kplay run --plan`): file, digest and its valid approvals. */
  plan?: { file: string; digest: string; approvals: { by: string; at: string; comment?: string }[]; replan: boolean };
  /** The interrupted run this one resumed (`kplay run --resume`). */
  resumed_from?: string;
  /** The fleet run this run was a shard of (`--shard I/N --fleet-run ID`): `kplay history --fleet-run ID` lists its shards' runs together. */
  fleet?: { run: string; shard: number; shards: number };
}

/** One task on one cluster. */
export interface TaskRecord {
  cluster: string;
  task: string;
  status: string;
  changed: boolean;
  item?: string;
  msg?: string;
  /** Labels of the objects that changed (diff summary). */
  diff?: string[];
  duration_ms: number;
  /** When the task started on this cluster, ms after the run started (records of kplay before the run report have none). */
  start_ms?: number;
  /** The play and its batch (`serial`) the task ran in. */
  play?: string;
  batch?: number;
  /** The module (absent for includes and skipped blocks). */
  module?: string;
  /** A failure `ignore_errors` ignored. */
  ignored?: boolean;
  /** Attempts retried (`until`/`retries`). */
  retries?: number;
  /** The last thing the task said it was waiting on (a readiness wait, a gate). */
  waited_on?: string;
  /**
   * The masked unified diff (`--diff`; none under `no_log`), at most 64 KiB. Kept in the local
   * record only (mode 0600): in-cluster records keep the labels alone.
   */
  diff_text?: string;
  /** An analysis gate's verdict and measurements (from its result; none under `no_log`). */
  gate?: GateRecord;
}

/** A batch of a play (`serial`) as it started. */
export interface BatchRecord {
  play: string;
  batch: number;
  batches: number;
  clusters: string[];
  /** ms after the run started. */
  start_ms: number;
}

/** A warning of the run about a cluster (lock waits, take-overs, lost locks). */
export interface WarningRecord {
  cluster?: string;
  msg: string;
  /** ms after the run started. */
  at_ms: number;
}

/** A full run record (as stored in a cluster: only that cluster's tasks). */
export interface RunRecord {
  run: RunHeader;
  tasks: TaskRecord[];
  recap: Record<string, ClusterStats>;
  exit_code: number;
  interrupted: boolean;
  /** In-cluster records: the previous record of this cluster (`null`: the first one). */
  prev?: ChainLink | null;
  /** The run's wall time (records of kplay before the run report have none). */
  elapsed_ms?: number;
  /** The batches of each play, in order. */
  batches?: BatchRecord[];
  /** Warnings about the clusters (at most 200). */
  warnings?: WarningRecord[];
}

/** A local record as read back from `<dir>/<run id>.jsonl`. */
export interface LocalRecord {
  run_id: string;
  file: string;
  /** The file's text (what the next record's link hashes). */
  text: string;
  /** The `run` line. */
  run: Record<string, unknown>;
  /** Clusters the run covered (its recap). */
  clusters: string[];
  /** Links to the previous record per cluster; undefined for records written before chaining. */
  chain: Record<string, ChainLink | null> | undefined;
  /** Whether the `digest` line matches the lines before it. */
  digestOk: boolean;
  /** Every line, parsed. */
  lines: Record<string, unknown>[];
}

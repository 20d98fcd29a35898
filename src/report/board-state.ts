/**
 * The live board's model: run events (already masked by the run's Masker) folded into one row
 * per cluster. Pure: time comes in as an argument, so the layout can be tested without a clock.
 */
import type { ClusterStats, RunEvent } from './events.js';

/** What a cluster is doing now. */
export type ClusterState = 'pending' | 'draining' | 'running' | 'waiting' | 'done' | 'failed' | 'skipped' | 'rescued';

/** Every state, in the order the header counts them. */
export const CLUSTER_STATES: readonly ClusterState[] = ['running', 'waiting', 'draining', 'pending', 'done', 'rescued', 'failed', 'skipped'];

/** One cluster's row. */
export interface ClusterRow {
  name: string;
  state: ClusterState;
  /** Batch number (1-based) the cluster runs in; 0 before its batch started. */
  batch: number;
  task: string;
  /** What it waits on, in the readiness check's words (from `progress` events). */
  waiting: string;
  /** When the cluster's batch started (ms), for its elapsed time. */
  startedAt: number;
  /** When it reached a final state (ms). */
  endedAt?: number;
  /** A task failed in the current play (a later ok result means rescue handled it). */
  failedInPlay: boolean;
}

/** The whole board. */
export interface BoardState {
  rows: Map<string, ClusterRow>;
  batch: number;
  batches: number;
  play: string;
  /** Clusters of the running batch. */
  active: string[];
  startedAt: number;
  /** Wall time of each finished batch (ms), for the estimate. */
  batchDurations: number[];
  batchStartedAt: number;
  /** Changes and failures, newest last (capped). */
  log: string[];
  /** Set by the recap: the final counters. */
  recap?: { clusters: Record<string, ClusterStats>; elapsed_ms: number; exit_code: number; interrupted: boolean };
}

const LOG_CAP = 200;
const DRAIN_MODULES = new Set(['k8s_drain', 'lb_switch', 'kubernetes.core.k8s_drain']);

/** An empty board started at `now`. */
export function newBoard(now: number): BoardState {
  return { rows: new Map(), batch: 0, batches: 0, play: '', active: [], startedAt: now, batchDurations: [], batchStartedAt: now, log: [] };
}

function row(b: BoardState, name: string, now: number): ClusterRow {
  let r = b.rows.get(name);
  if (!r) {
    r = { name, state: 'pending', batch: 0, task: '', waiting: '', startedAt: now, failedInPlay: false };
    b.rows.set(name, r);
  }
  return r;
}

function pushLog(b: BoardState, line: string): void {
  b.log.push(line);
  if (b.log.length > LOG_CAP) b.log.splice(0, b.log.length - LOG_CAP);
}

const FINAL: ReadonlySet<ClusterState> = new Set(['done', 'failed', 'skipped', 'rescued']);

/** Fold one event into the board (mutates it). */
export function applyEvent(b: BoardState, e: RunEvent, now: number): void {
  switch (e.type) {
    case 'run_start':
      b.startedAt = now;
      return;
    case 'play_start': {
      if (b.active.length && b.batch > 0) b.batchDurations.push(now - b.batchStartedAt);
      b.play = e.play;
      b.batch = e.batch;
      b.batches = e.batches;
      b.batchStartedAt = now;
      b.active = [...e.clusters];
      for (const name of e.play_clusters ?? []) row(b, name, now); // rows in the play's order
      const inBatch = new Set(e.clusters);
      for (const name of e.play_clusters ?? []) {
        if (inBatch.has(name)) continue;
        const r = row(b, name, now);
        // a later batch of this play: pending again unless it failed (out of the run)
        if (r.state !== 'failed' && e.batch === 1) Object.assign(r, { state: 'pending', task: '', waiting: '' });
      }
      for (const name of e.clusters) {
        const r = row(b, name, now);
        if (r.state === 'failed') continue; // a failed cluster is out of later plays
        Object.assign(r, { state: 'running', batch: e.batch, task: '', waiting: '', startedAt: now, failedInPlay: false });
        delete r.endedAt;
      }
      return;
    }
    case 'task_start':
      for (const name of b.active) {
        const r = row(b, name, now);
        if (FINAL.has(r.state) && r.state !== 'rescued') continue;
        r.task = e.task;
        r.waiting = '';
        r.state = DRAIN_MODULES.has(e.module) ? 'draining' : 'running';
      }
      return;
    case 'task_result': {
      const r = row(b, e.cluster, now);
      r.waiting = '';
      if (e.status === 'failed' || e.status === 'unreachable') {
        if (e.ignored) return;
        if (e.loop_summary && r.failedInPlay) return;
        r.failedInPlay = true;
        r.state = 'failed';
        r.endedAt = now;
        pushLog(b, `${e.status === 'failed' ? 'FAILED' : 'UNREACHABLE'} [${e.cluster}] ${e.task}: ${e.msg ?? e.status}`);
      } else {
        if (r.failedInPlay && !e.loop_summary) {
          r.state = 'rescued';
          r.failedInPlay = false;
          delete r.endedAt;
          pushLog(b, `rescued [${e.cluster}] ${e.task}`);
        }
        if (e.status === 'changed' && !e.loop_summary) pushLog(b, `changed [${e.cluster}] ${e.task}${e.item !== undefined ? ` (item=${e.item})` : ''}`);
      }
      return;
    }
    case 'progress': {
      const r = row(b, e.cluster, now);
      if (FINAL.has(r.state) && r.state !== 'rescued') return;
      r.state = 'waiting';
      r.task = e.task;
      r.waiting = e.msg;
      return;
    }
    case 'retry': {
      const r = row(b, e.cluster, now);
      r.state = 'waiting';
      r.waiting = `retry ${e.attempt} (${e.retries} left)${e.msg ? `: ${e.msg}` : ''}`;
      return;
    }
    case 'cluster_done': {
      const r = row(b, e.cluster, now);
      r.state = r.state === 'rescued' ? 'rescued' : 'done';
      r.task = '';
      r.waiting = '';
      r.endedAt = now;
      return;
    }
    case 'warning':
      pushLog(b, `WARNING ${e.cluster ? `[${e.cluster}] ` : ''}${e.msg}`);
      return;
    case 'log':
      if (e.level === 'warn') pushLog(b, `[${e.cluster}] ${e.msg}`);
      return;
    case 'play_aborted':
      pushLog(b, `PLAY ABORTED [${e.play}]: ${e.reason}`);
      for (const r of b.rows.values()) if (!FINAL.has(r.state) && r.batch > b.batch) r.state = 'skipped';
      return;
    case 'recap':
      b.recap = e;
      if (b.active.length) b.batchDurations.push(now - b.batchStartedAt);
      b.active = [];
      for (const [name, s] of Object.entries(e.clusters)) {
        const r = row(b, name, now);
        r.state = s.failed || s.unreachable ? 'failed' : s.rescued ? 'rescued' : r.batch === 0 || (s.ok + s.changed === 0 && s.skipped > 0) ? 'skipped' : 'done';
        r.task = '';
        r.waiting = '';
        r.endedAt ??= now;
      }
      return;
  }
}

/** Count rows per state. */
export function countStates(b: BoardState): Record<ClusterState, number> {
  const n: Record<ClusterState, number> = { pending: 0, draining: 0, running: 0, waiting: 0, done: 0, failed: 0, skipped: 0, rescued: 0 };
  for (const r of b.rows.values()) n[r.state]++;
  return n;
}

/** Estimated ms left: mean duration of finished batches × batches left (undefined before one finished). */
export function estimateMs(b: BoardState, now: number): number | undefined {
  if (!b.batchDurations.length || !b.batches) return undefined;
  const mean = b.batchDurations.reduce((a, x) => a + x, 0) / b.batchDurations.length;
  const left = Math.max(0, b.batches - b.batch);
  const current = Math.max(0, mean - (now - b.batchStartedAt));
  return left * mean + current;
}

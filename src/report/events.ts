/**
 * Run events: what the executor tells reporters. With `--output json` each event is printed as
 * one JSON line, so this union IS the documented, stable machine interface (see README).
 * Every string in an event has passed through the run's Masker before a reporter sees it.
 */
import type { DiffEntry } from '../core/module.js';

/** Per-cluster counters in the recap. */
export interface ClusterStats {
  ok: number;
  changed: number;
  unreachable: number;
  failed: number;
  skipped: number;
  rescued: number;
  ignored: number;
}

/** Status of one task on one cluster (or one loop item). */
export type ResultStatus = 'ok' | 'changed' | 'failed' | 'skipped' | 'unreachable';

export type RunEvent =
  | {
      type: 'run_start';
      run_id: string;
      playbook: string;
      inventory: string;
      check: boolean;
      diff: boolean;
      limit?: string;
      time: string;
      /** How many plays the playbook has (imports expanded): ansible-playbook's `N plays in FILE` at -vv. */
      plays?: number;
    }
  | {
      type: 'play_start';
      play: string;
      hosts: string;
      clusters: string[];
      batch: number;
      batches: number;
      /** Every cluster of the play, all batches (the live board shows the later batches' clusters as pending). */
      play_clusters?: string[];
    }
  /** A cluster finished every task of a play (its batch ran to the end, not failed, not interrupted): the resume journal's unit. */
  | { type: 'cluster_done'; play: string; play_index: number; cluster: string }
  | { type: 'task_start'; play: string; task: string; module: string; where: string; handler: boolean }
  | {
      type: 'task_result';
      task: string;
      /** The module of a module task (absent for includes and skipped blocks). */
      module?: string;
      cluster: string;
      status: ResultStatus;
      /** Loop item label, for per-item results. */
      item?: string;
      msg?: string;
      /** Failure was ignored (`ignore_errors`). */
      ignored?: boolean;
      /**
       * A failed (or unreachable) result that changed something all the same: writes made before
       * the failure (ansible-core's `changed: true` on a failed result). Absent otherwise.
       */
      changed?: boolean;
      diff?: DiffEntry[];
      /** Module result data (shown with -v; hidden by no_log). */
      data?: Record<string, unknown>;
      duration_ms: number;
      /** True for the summary of a loop (its items were reported before). */
      loop_summary?: boolean;
      /**
       * The result as the playbook registers it (module data, `changed`, `failed`, `msg`, a loop
       * item's loop variable; a loop summary without its `results`); under no_log only `censored`
       * and `changed`. What `-o ansible` dumps as ansible-core's callback does.
       */
      result?: Record<string, unknown>;
      /** A result skipped by `when:`: the condition that was false, as written (ansible-core's `false_condition`). */
      false_condition?: unknown;
      /** An include's result: the task file brought in (absolute) or the role's name (ansible-core's `included: X for HOSTS`). */
      included?: string;
      /** The handlers a changed result notified (as `notify:` names them). */
      notified?: string[];
    }
  | { type: 'retry'; task: string; cluster: string; attempt: number; retries: number; msg?: string }
  /** A warning; `no_hosts`: the play skipped because its `hosts:` matched nothing (its name). */
  | { type: 'warning'; msg: string; cluster?: string; no_hosts?: string }
  | { type: 'log'; level: 'info' | 'debug' | 'warn'; cluster: string; task: string; msg: string }
  | { type: 'progress'; cluster: string; task: string; msg: string }
  | { type: 'play_aborted'; play: string; reason: string }
  | {
      type: 'recap';
      clusters: Record<string, ClusterStats>;
      elapsed_ms: number;
      exit_code: number;
      interrupted: boolean;
      /** Set when every play of the run was skipped because its `hosts:` matched no cluster: how many plays. */
      no_hosts_matched?: number;
    };

/** Every event type, for exhaustive mapped types. */
export type RunEventType = RunEvent['type'];

/** A function for each event type: reporters implement this, so a new event cannot be forgotten. */
export type EventHandlers = { [K in RunEventType]: (e: Extract<RunEvent, { type: K }>) => void };

export function emptyStats(): ClusterStats {
  return { ok: 0, changed: 0, unreachable: 0, failed: 0, skipped: 0, rescued: 0, ignored: 0 };
}

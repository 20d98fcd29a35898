/**
 * The shapes running a module task shares with the play that runs it (`PlayRun` implements
 * {@link TaskHost}) and with the module context built for it.
 */
import type { RunInventory } from '../core/module.js';
import type { ModuleTask } from '../playbook/types.js';
import type { ResultStatus } from '../report/events.js';
import type { LookupHost } from './lookups.js';
import type { ClusterState, RunOptions } from './state.js';

type Obj = Record<string, unknown>;

/** What running a task on one cluster produced (for stats, handlers and thresholds). */
export interface TaskOutcome {
  status: ResultStatus;
  ignored: boolean;
  /** The value registered (also used by run_once to copy to other clusters). */
  registered: Obj;
}

/**
 * What running a task needs from the play it belongs to (`PlayRun` implements it): the run's
 * options, variable scopes and the play's condition evaluation. Declared here so that task.ts
 * does not import play.ts (which imports task.ts).
 */
export interface TaskHost {
  readonly opts: RunOptions;
  /** The merged variables of `node` on `cs` (plus `extra`, e.g. loop variables). */
  scopeFor(cs: ClusterState, node: ModuleTask, extra?: Obj): Obj;
  /** A number from a literal or a template. */
  intOf(value: unknown, vars: Obj): Promise<number>;
  /** The `when` list of a node holds. */
  /** Whether every `when` condition holds; `host` answers k8s lookups in them. */
  whenHolds(when: unknown[], vars: Obj, node: ModuleTask, host?: LookupHost): Promise<boolean>;
  /** A condition (`changed_when`, `failed_when`, `until`) holds. */
  conditionsHold(cond: unknown, vars: Obj, node: ModuleTask): Promise<boolean>;
  /** A keyword value (`ignore_errors`) is true, templated or not. */
  truthy(value: unknown, vars: Obj): boolean;
  /** The last failure per cluster, for `ansible_failed_task` / `ansible_failed_result` in a rescue (`name`: the task's own name, `''` when it has none, as in Ansible). */
  readonly lastFailure: Map<string, { task: string; name: string; action?: string; result: Obj }>;
  /** When the current batch of the play started (`ModuleContext.batchStarted`). */
  readonly batchStarted?: Date;
  /** The run's in-memory inventory as a module on `cluster` may change it (`add_host`, `group_by`). */
  inventoryFor?(cluster: string): RunInventory | undefined;
}

/** A task's keywords as they apply on one cluster (templates rendered). */
export interface TaskKeywords {
  /** `no_log`: hide results. */
  hide: boolean;
  /** Check mode. */
  check: boolean;
  /** Diff mode (`--diff` or the `diff:` keyword). */
  diff: boolean;
  /** `environment:`, rendered. */
  environment: Record<string, string>;
}

/**
 * Run-time state: one `ClusterState` per inventory cluster for the whole run (facts survive
 * across plays, failed clusters leave later plays), and the options of the run.
 */
import type { TaskJournal } from '../audit/journal.js';
import type { Inventory, InventoryCluster } from '../inventory/types.js';
import type { Playbook, VarPrompt } from '../playbook/types.js';
import type { Masker } from '../core/mask.js';
import type { RunScopedAdapter } from '../core/module.js';
import type { ClusterStats, RunEvent } from '../report/events.js';
import { emptyStats } from '../report/events.js';
import type { ModuleRegistry } from '../plugins/registry.js';
import type { FleetHooks } from './fleet.js';
import type { Resume } from './resume.js';

/** Everything `runPlaybook` needs. */
export interface RunOptions {
  playbook: Playbook;
  inventory: Inventory;
  registry: ModuleRegistry;
  /** `-e` variables (highest precedence). */
  extraVars: Record<string, unknown>;
  /**
   * Ask a `vars_prompt` question (the CLI gives this when stdin is a terminal); without it the
   * defaults stay, as in ansible-playbook without a terminal.
   */
  ask?: (p: VarPrompt) => Promise<string>;
  check: boolean;
  /**
   * A repair run: tasks of these modules change the cluster (taking drift back); every other
   * task runs in check mode. Undefined in normal runs.
   */
  repair?: ReadonlySet<string>;
  /**
   * Resuming an interrupted run: clusters that finished a play are left out of it (serial batches
   * are formed from the others), and tasks finished on a cluster are restored, not run again
   * (see resume.ts).
   */
  resume?: Resume;
  /** Where task progress goes (the run's resume journal), when the run keeps one. */
  journal?: TaskJournal;
  diff: boolean;
  /** `--limit` pattern. */
  limit?: string;
  tags: string[];
  skipTags: string[];
  startAtTask?: string;
  /** `-v` count: the `ansible_verbosity` magic variable. @default 0 */
  verbosity?: number;
  /** Parallel clusters per task (runManaged and the CLI give `DEFAULT_FORKS` of src/core/settings-table.ts when nothing says). */
  forks: number;
  runId: string;
  masker: Masker;
  /** Ctrl-C / SIGTERM. */
  signal: AbortSignal;
  /** Receives every event (already masked). */
  emit: (e: RunEvent) => void;
  /**
   * Called once per cluster before the first task that may change it runs (not in check mode).
   * Used for cluster locks; throwing fails that task on that cluster.
   */
  beforeFirstChange?: (cluster: ClusterState, vars: Record<string, unknown>) => Promise<void>;
  /** This run is one shard of a fleet run (see fleet.ts): its clusters and the fleet's failure budget. */
  fleet?: FleetHooks;
}

/** Per-cluster state for the whole run. */
export class ClusterState {
  /** set_fact / register results, kept across plays. */
  facts: Record<string, unknown> = {};
  /** Variables of include_vars: just below set_fact in precedence, templates rendered when used (as in Ansible). */
  includedVars: Record<string, unknown> = {};
  failed = false;
  /** PLAY RECAP failures before the last `meta: clear_host_errors`: they no longer fail the run (its exit code). */
  clearedFailures = 0;
  unreachable = false;
  /** `meta: end_cluster` — done for this play. */
  ended = false;
  /** Handler names / topics notified and not yet run. */
  notified = new Set<string>();
  /** The PLAY RECAP numbers: changed only through {@link count} and {@link uncount}. */
  private readonly counts: ClusterStats = emptyStats();
  /** The PLAY RECAP numbers of this cluster (read-only; see {@link count}). */
  get stats(): Readonly<ClusterStats> {
    return this.counts;
  }
  /** Count `n` results of a kind in the PLAY RECAP. */
  count(kind: keyof ClusterStats, n = 1): void {
    this.counts[kind] += n;
  }
  /** Take back one counted result (a failure a rescue handled), never below 0. */
  uncount(kind: keyof ClusterStats): void {
    this.counts[kind] = Math.max(0, this.counts[kind] - 1);
  }
  /** Lazily created adapters (k8s client, helm…), shared by all tasks on this cluster. */
  adapters = new Map<string, Promise<unknown>>();
  /** Whether beforeFirstChange has run (or is running). */
  firstChange: Promise<void> | undefined;
  /** A module that talks to the cluster changed something there (run records go only to such clusters). */
  clusterChanged = false;
  /** Reason it became unreachable. */
  unreachableReason: string | undefined;
  /**
   * Aborted (with the reason) when this run loses the cluster's lock: the running task is stopped
   * (a helm child gets SIGTERM) and no later task that changes the cluster runs.
   */
  readonly lockLost = new AbortController();

  constructor(readonly inv: InventoryCluster) {}

  get name(): string {
    return this.inv.name;
  }

  /**
   * The adapter `name` of this cluster, created once per run by `create` (shared by every task
   * and by the run's locks/records). A failed creation is not cached: the next use tries again.
   */
  adapter<T>(name: string, create: () => Promise<T>): Promise<T> {
    let p = this.adapters.get(name) as Promise<T> | undefined;
    if (!p) {
      p = create();
      this.adapters.set(name, p);
      p.catch(() => this.adapters.delete(name));
      const waiting = this.adapterWaiters.get(name) ?? [];
      this.adapterWaiters.delete(name);
      if (waiting.length) void p.then((a) => waiting.forEach((fn) => fn(a)), () => undefined);
    }
    return p;
  }

  /**
   * Call `fn` with the adapter `name` once it is created (at once when it is), without creating
   * it: whoever needs it first (a task, the lock) creates it.
   */
  whenAdapter<T>(name: string, fn: (adapter: T) => void): void {
    const p = this.adapters.get(name) as Promise<T> | undefined;
    if (p) void p.then(fn, () => undefined);
    else this.adapterWaiters.set(name, [...(this.adapterWaiters.get(name) ?? []), fn as (a: unknown) => void]);
  }
  private readonly adapterWaiters = new Map<string, ((adapter: unknown) => void)[]>();

  /** End the run's adapters that hold something only for the run (see `RunScopedAdapter`); never throws. */
  async endAdapters(): Promise<void> {
    await Promise.all(
      [...this.adapters.values()].map(async (p) => {
        const a = await p.catch(() => undefined);
        if (isRunScoped(a)) await a.endOfRun().catch(() => undefined);
      }),
    );
  }

  /** Still taking tasks in this play. */
  get active(): boolean {
    return !this.failed && !this.unreachable && !this.ended;
  }
}

function isRunScoped(a: unknown): a is RunScopedAdapter {
  return typeof a === 'object' && a !== null && 'endOfRun' in a && typeof a.endOfRun === 'function';
}

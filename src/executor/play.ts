/**
 * One play on one batch of clusters, with Ansible's linear strategy: each task runs on every
 * active cluster of the batch (in parallel, up to `--forks`) before the next task starts.
 * A failed cluster leaves the play; blocks rescue and always-run; handlers run when flushed.
 */
import { tagsSelected } from '../playbook/tags.js';
import pLimit, { type LimitFunction } from 'p-limit';
import { errorMessage, formatPos } from '../load/errors.js';
import { roleCollector, type RoleCollector } from '../playbook/nodes/context.js';
import type { BlockNode, MetaNode, ModuleTask, Play, TaskNode } from '../playbook/types.js';
import { markLazyView, templar } from '../template/index.js';
import { extendScope, lazyScope } from './lazyvars.js';
import type { FleetBatch } from './fleet.js';
import type { RunVars } from './task-vars.js';
import type { ClusterState, RunOptions } from './state.js';
import { runModuleTask, type TaskHost, type TaskOutcome } from './task.js';
import { withLookups, type LookupContext, type LookupHost } from './lookups.js';
import { gatherFacts } from './facts.js';
import { Includes } from './includes.js';
import { FatalMarks } from './fatal.js';
import type { DynamicInventory } from './dynamic-inventory.js';
import type { RunInventory } from '../core/module.js';
import { changesSince, restoreInto, safeToRunAgain, snapshot, taskBase, TaskKeys, unrestorable, type Resume } from './resume.js';

type Obj = Record<string, unknown>;

/** Run-wide values shared by every play (computed once). */
export interface RunShared {
  opts: RunOptions;
  /** The run's variables: run-wide magic vars, and each task's scope (task-vars.ts). */
  vars: RunVars;
  /** Has `--start-at-task` been reached? */
  started: boolean;
  /** Set when the run must stop (thresholds, interrupt). */
  stopReason?: string;
  /** The run's in-memory inventory (`add_host`, `group_by`). */
  dynamic?: DynamicInventory;
}

/** The state of one play on one batch. */
export class PlayRun implements TaskHost {
  readonly opts: RunOptions;
  private readonly limit: LimitFunction;
  private readonly varsFiles: Obj;
  /** `meta: end_play`. */
  ended = false;
  /** Per-cluster extra variables of the current dynamic scope (include loops, rescue info). */
  readonly dyn = new Map<string, Obj>();
  /**
   * Roles of this play: the public ones (static roles, and `include_role` with `public: true`
   * once it ran — for every cluster, as in Ansible) and the handlers of roles loaded at run time.
   */
  readonly roles: RoleCollector;
  /** The play's index in the playbook (task identities, see resume.ts). */
  private readonly playIndex: number;
  /** Counts the runs of each task per cluster (task identities). */
  private readonly keys = new TaskKeys();
  /** The identity of the last task that failed per cluster (a rescue that handles it is journaled). */
  private readonly failedKey = new Map<string, string>();
  /** Roles the play names itself (`roles:`, `import_role`): `ansible_play_role_names`. */
  private readonly playRoleNames: string[];
  /** When this batch started (a PlayRun is made for each batch, just before it runs). */
  readonly batchStarted = new Date();
  /** `include_tasks` and `include_role`, resolved per cluster at run time. */
  private readonly includes = new Includes(this);
  /** A shard's run: the fleet batch this batch is this shard's part of (thresholds are the fleet's). */
  fleetBatch?: FleetBatch;
  /** Clusters failed by another's failure under `any_errors_fatal` (fatal.ts). */
  private readonly fatal: FatalMarks;

  constructor(
    readonly shared: RunShared,
    readonly play: Play,
    readonly batch: ClusterState[],
    /** Every cluster the play targets (all batches): `ansible_play_hosts`. @default batch */
    readonly playTargets: ClusterState[] = batch,
    /** Every cluster of the inventory by name: `hostvars`. */
    readonly allClusters: ReadonlyMap<string, ClusterState> = new Map(batch.map((c) => [c.name, c])),
  ) {
    this.opts = shared.opts;
    this.fatal = new FatalMarks(batch, !shared.opts.fleet);
    this.limit = pLimit(Math.max(1, this.opts.forks));
    this.varsFiles = play.varsFromFiles;
    this.playIndex = this.opts.playbook.plays.indexOf(play);
    // files loaded at run time (include_tasks, include_role) may hold `!secret` scalars: masked from then on
    this.roles = roleCollector(typeof shared.vars.magic.playbook_dir === 'string' ? shared.vars.magic.playbook_dir : play.baseDir, (values) => values.forEach((v) => this.opts.masker.addDeclared(v)));
    this.playRoleNames = play.publicRoles.filter((r) => !r.parent).map((r) => r.name);
    this.roles.publicRoles.push(...play.publicRoles);
  }

  /** See {@link TaskHost.inventoryFor}. */
  inventoryFor(cluster: string): RunInventory | undefined {
    return this.shared.dynamic?.forCluster(cluster);
  }

  /** Run the play's sections on the batch. */
  async run(): Promise<void> {
    if (this.play.gatherFacts) this.gather();
    for (const section of [this.play.preTasks, this.play.tasks, this.play.postTasks]) {
      // force_handlers: each section is a block whose `always` flushes the handlers, also of the
      // clusters that failed in it (ansible-core's Play.compile); they leave the play after that
      const running = this.batch.filter((c) => c.active);
      await this.runList(section, this.batch, true);
      if (this.play.forceHandlers && !this.opts.signal.aborted) {
        await this.flushHandlers(running.filter((c) => c.failed && !c.unreachable));
        if (this.stopped()) break;
        continue;
      }
      if (this.stopped()) break;
      await this.flushHandlers();
      if (this.stopped()) break;
    }
    this.fatal.endOfPlay();
  }

  /** `gather_facts: true`: a `Gathering Facts` task (counted ok, as in Ansible) sets the controller's facts on every cluster. */
  private gather(): void {
    const name = 'Gathering Facts';
    this.opts.emit({ type: 'task_start', play: this.play.name, task: name, module: 'gather_facts', where: formatPos(this.play.pos), handler: false });
    for (const cs of this.batch.filter((c) => c.active)) {
      const started = Date.now();
      const facts = gatherFacts();
      Object.assign(cs.facts, facts.vars);
      this.opts.emit({ type: 'task_result', task: name, module: 'gather_facts', cluster: cs.name, status: 'ok', duration_ms: Date.now() - started });
      cs.count('ok');
    }
  }

  private stopped(): boolean {
    return this.ended || this.shared.stopReason !== undefined || this.opts.signal.aborted;
  }

  // ---- variables and conditions -------------------------------------------------------------

  /** What reading cluster `cs` for a k8s lookup in an include's loop needs. */
  lookupContext(cs: ClusterState, vars: Obj, task: string): LookupContext {
    const emit = (level: 'info' | 'debug' | 'warn') => (msg: string) => this.opts.emit({ type: 'log', level, cluster: cs.name, task, msg });
    return {
      cluster: { name: cs.name, context: cs.inv.context, kubeconfig: cs.inv.kubeconfig },
      vars,
      signal: this.opts.signal,
      addSecret: (v) => this.opts.masker.add(v),
      adapter: (name, create) => cs.adapter(name, create),
      log: { info: emit('info'), debug: emit('debug'), warn: emit('warn'), progress: (msg) => this.opts.emit({ type: 'progress', cluster: cs.name, task, msg }) },
    };
  }

  /** The variable scope of `node` on cluster `cs` (see src/vars/precedence.ts for the order). */
  scopeFor(cs: ClusterState, node: TaskNode, extra?: Obj, hostLevel = false): Obj {
    const { merged, final } = this.shared.vars.taskVars({
      hostLevel,
      cs,
      node,
      play: this.play,
      playVarsFiles: this.varsFiles,
      playTargets: this.playTargets,
      batch: this.batch,
      playRoleNames: this.playRoleNames,
      publicRoles: this.roles.publicRoles,
      hostvars: hostLevel ? {} : this.hostvars(node),
      check: this.opts.check,
      diff: this.opts.diff,
      extraVars: this.opts.extraVars,
    });
    const base = lazyScope(merged, final);
    if (hostLevel) return base;
    const dyn = this.dyn.get(cs.name);
    return extendScope(extendScope(base, dyn), extra);
  }

  /** Report the tasks of `nodes` (nested blocks included) as skipped on `clusters` (a false block `when`). */
  private reportSkipped(nodes: TaskNode[], clusters: ClusterState[]): void {
    for (const n of nodes) {
      if (n.kind === 'block') {
        this.reportSkipped([...n.block, ...n.always], clusters);
        continue;
      }
      if (n.kind !== 'task' && n.kind !== 'include' && n.kind !== 'include_role') continue;
      if (!this.selected(n.tags)) continue;
      const task = n.name ?? (n.kind === 'task' ? n.module : n.kind === 'include' ? 'include_tasks' : 'include_role');
      for (const cs of clusters) {
        this.opts.emit({ type: 'task_result', task, cluster: cs.name, status: 'skipped', msg: 'Conditional result was False', duration_ms: 0 });
        cs.count('skipped');
        if (n.kind === 'task' && n.register) cs.facts[n.register] = { changed: false, skipped: true, skip_reason: 'Conditional result was False', false_condition: true };
      }
    }
  }

  /**
   * `hostvars`: every inventory cluster's own variables (inventory, facts, `include_vars`, `-e`;
   * not the play's or the task's, as ansible-core's HostVars), rendered on first read.
   */
  private hostvars(node: TaskNode): Obj {
    const out: Obj = {};
    for (const [name, other] of this.allClusters) {
      let scope: Obj | undefined;
      Object.defineProperty(out, name, { enumerable: true, get: () => (scope ??= markLazyView(this.scopeFor(other, node, undefined, true))) });
    }
    return markLazyView(out);
  }

  /** All `when` conditions hold (an empty list holds). */
  async whenHolds(when: unknown[], vars: Obj, node: TaskNode, host?: LookupHost): Promise<boolean> {
    for (const c of when) {
      const holds = host ? await withLookups(host, () => templar.evalCondition(c, vars, { where: node.pos, host })) : await templar.evalCondition(c, vars, { where: node.pos });
      if (!holds) return false;
    }
    return true;
  }

  /** A condition or list of conditions (all must hold). */
  async conditionsHold(cond: unknown, vars: Obj, node: TaskNode): Promise<boolean> {
    return templar.evalCondition(cond, vars, { where: node.pos });
  }

  /** A boolean-ish keyword (`ignore_errors: true` or a condition). */
  truthy(value: unknown, vars: Obj): boolean {
    if (value === undefined || value === null) return false;
    if (typeof value === 'boolean') return value;
    if (typeof value === 'string' && /^(true|yes)$/i.test(value.trim())) return true;
    if (typeof value === 'string' && /^(false|no)$/i.test(value.trim())) return false;
    return templar.evalConditionSync(value, vars);
  }

  /** An integer keyword that may be templated. */
  async intOf(value: unknown, vars: Obj): Promise<number> {
    const v = typeof value === 'string' ? await templar.render(value, vars) : value;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`expected a non-negative number, got ${JSON.stringify(v)}`);
    return Math.floor(n);
  }

  // ---- task lists ---------------------------------------------------------------------------

  /** Run nodes in order on the clusters that are still active. */
  async runList(nodes: TaskNode[], clusters: ClusterState[], topLevel: boolean): Promise<void> {
    for (const node of nodes) {
      if (this.stopped()) return;
      const active = clusters.filter((c) => c.active);
      if (active.length === 0) return;
      switch (node.kind) {
        case 'task':
          await this.runTask(node, active, false);
          break;
        case 'block':
          await this.runBlock(node, active);
          break;
        case 'include':
          await this.includes.runInclude(node, active);
          break;
        case 'include_role':
          await this.includes.runIncludeRole(node, active);
          break;
        case 'meta':
          await this.runMeta(node, active);
          break;
      }
      // an include that failed to load (its tasks check for themselves in runTask)
      if (node.kind === 'include' || node.kind === 'include_role') this.fatal.after(node.anyErrorsFatal === true, active.some((c) => c.failed || c.unreachable));
      if (topLevel) await this.checkThresholds();
    }
  }

  /** `--tags` / `--skip-tags` selection, with Ansible's special tags (src/playbook/tags.ts). */
  selected(tags: string[]): boolean {
    return tagsSelected(tags, this.opts.tags, this.opts.skipTags);
  }

  reachedStart(name: string): boolean {
    if (this.shared.started) return true;
    const want = this.opts.startAtTask ?? '';
    const re = new RegExp(`^${want.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
    if (name === want || re.test(name)) this.shared.started = true;
    return this.shared.started;
  }

  /** The name shown for a task: rendered, and prefixed `role : ` for a role's task (as ansible-playbook shows it). */
  private async taskName(task: TaskNode, fallback: string, cs: ClusterState | undefined): Promise<string> {
    const prefix = task.role && task.kind === 'task' ? `${task.role.name} : ` : '';
    if (!task.name) return `${prefix}${fallback}`;
    if (!cs) return `${prefix}${task.name}`;
    try {
      return `${prefix}${await templar.renderString(task.name, this.scopeFor(cs, task))}`;
    } catch {
      return `${prefix}${task.name}`;
    }
  }

  /** Run one module task on clusters (all in parallel, up to `--forks`). */
  async runTask(task: ModuleTask, clusters: ClusterState[], handler: boolean): Promise<void> {
    if (!handler && !this.selected(task.tags)) return;
    const name = await this.taskName(task, task.module, clusters[0]);
    if (!handler && !this.reachedStart(name)) return;
    this.opts.emit({ type: 'task_start', play: this.play.name, task: name, module: task.module, where: formatPos(task.pos), handler });
    const base = taskBase(this.playIndex, task.pos, this.opts.playbook.dir);
    const keys = new Map(clusters.map((cs) => [cs.name, this.keys.next(cs.name, base)]));
    if (this.opts.resume) clusters = this.replay(task, name, clusters, keys, this.opts.resume);
    if (clusters.length === 0) return;
    const journal = this.opts.journal;
    const snaps = new Map(clusters.map((cs) => [cs.name, snapshot(cs)]));
    for (const cs of clusters) journal?.started(cs.name, keys.get(cs.name) ?? base, name);
    // Ansible's BYPASS_HOST_LOOP (add_host): once, on the first cluster, whose result it stays
    const bypass = this.opts.registry.get(task.module)?.bypassHostLoop === true;
    // a templated run_once is rendered with the first cluster's variables (ansible-core's linear strategy)
    const runOnce = typeof task.runOnce === 'string' && clusters[0] ? this.truthy(task.runOnce, this.scopeFor(clusters[0], task)) : task.runOnce === true;
    const targets = runOnce || bypass ? clusters.slice(0, 1) : clusters;
    const before = runOnce && targets[0] ? { ...targets[0].facts } : undefined;
    const throttle = await this.throttleOf(task, targets[0]);
    const limit = throttle > 0 && throttle < this.opts.forks ? pLimit(throttle) : undefined;
    const run = (cs: ClusterState): Promise<TaskOutcome> => this.limit(() => runModuleTask(task, cs, this, name));
    const outcomes = await Promise.all(targets.map((cs) => (limit ? limit(() => run(cs)) : run(cs))));
    // as ansible-core's linear strategy: a failure of an any_errors_fatal, run_once or host-loop-bypassing task fails the batch's other clusters too
    this.fatal.after(task.anyErrorsFatal === true || runOnce || bypass, outcomes.some((o) => (o.status === 'failed' || o.status === 'unreachable') && !o.ignored), runOnce);
    if (runOnce && outcomes[0] && targets[0]) {
      const o = outcomes[0];
      // As in Ansible, what a run_once task registers or sets (set_fact) applies to every cluster of the batch.
      const set = Object.entries(targets[0].facts).filter(([k, v]) => before?.[k] !== v);
      for (const cs of clusters.slice(1)) {
        for (const [k, v] of set) cs.facts[k] = v;
        if (task.register) cs.facts[task.register] = o.registered;
        if (o.status === 'changed') for (const n of task.notify) cs.notified.add(n);
      }
    }
    const byCluster = new Map(targets.map((cs, i) => [cs.name, outcomes[i] as TaskOutcome]));
    for (const cs of clusters) {
      const o = byCluster.get(cs.name) ?? (runOnce ? outcomes[0] : undefined);
      const key = keys.get(cs.name);
      if (!o || !key) continue;
      const failed = (o.status === 'failed' || o.status === 'unreachable') && !o.ignored;
      // stopped by Ctrl-C / SIGTERM in the middle: not finished (the resume says it was interrupted)
      if (failed && this.opts.signal.aborted) continue;
      if (o.status === 'failed' && !o.ignored) this.failedKey.set(cs.name, key);
      const lf = o.status === 'failed' && !o.ignored ? this.lastFailure.get(cs.name) : undefined;
      journal?.finished({ cluster: cs.name, key, task: name, module: task.module, status: o.status, ignored: o.ignored || undefined, run: this.opts.runId, ...changesSince(cs, snaps.get(cs.name) ?? snapshot(cs)), ...(lf ? { failure: lf } : {}) });
    }
    journal?.sync();
  }

  /**
   * Resuming: the clusters on which `task` finished in the interrupted run get what it left back
   * and are reported `done in run <id>`; the others are returned (to run it), with a word for a
   * task that was interrupted in it. See resume.ts.
   */
  private replay(task: ModuleTask, name: string, clusters: ClusterState[], keys: Map<string, string>, resume: Resume): ClusterState[] {
    const pending: ClusterState[] = [];
    for (const cs of clusters) {
      const key = keys.get(cs.name) ?? '';
      const past = resume.past(cs.name, key);
      if (past.kind === 'interrupted') this.opts.emit({ type: 'warning', cluster: cs.name, msg: `task '${name}' was interrupted in run ${resume.runId} before it finished: running it again` });
      if (past.kind === 'failed') this.opts.emit({ type: 'log', level: 'info', cluster: cs.name, task: name, msg: `failed in run ${past.entry.run}: running it again` });
      if (past.kind !== 'done') {
        pending.push(cs);
        continue;
      }
      const e = past.entry;
      if (e.module !== task.module) {
        this.failCluster(cs, name, `cannot resume: in run ${e.run} the task at this place (${key}) was '${e.task}' (${e.module}), now it is ${task.module}: the playbook changed, so kplay cannot tell what was done; finish this cluster with a new run (without --resume)`);
        continue;
      }
      const lost = unrestorable(e);
      if (lost) {
        if (safeToRunAgain(this.opts.registry.get(task.module))) {
          this.opts.emit({ type: 'log', level: 'info', cluster: cs.name, task: name, msg: `done in run ${e.run}, running it again: ${lost}` });
          pending.push(cs);
        } else {
          this.failCluster(cs, name, `cannot resume: this task finished in run ${e.run} (${e.status}), but ${lost}; running ${task.module} again could repeat what it did. Finish this cluster by hand, or with a new run (without --resume)`);
        }
        continue;
      }
      restoreInto(cs, e, true);
      this.opts.journal?.carried(e);
      if (e.status === 'failed' && !e.ignored) {
        // a failure its block's rescue handled: failed again here, so the rescue (restored in turn) follows
        cs.failed = true;
        cs.count('failed');
        this.failedKey.set(cs.name, key);
        if (e.failure) this.lastFailure.set(cs.name, e.failure);
        this.opts.emit({ type: 'task_result', task: name, module: task.module, cluster: cs.name, status: 'failed', msg: `failed in run ${e.run} and rescued there: not run again`, duration_ms: 0 });
        continue;
      }
      this.opts.emit({ type: 'task_result', task: name, module: task.module, cluster: cs.name, status: 'skipped', msg: `done in run ${e.run} (${e.status}${e.ignored ? ', failure ignored' : ''})`, duration_ms: 0 });
      cs.count('skipped');
      // what the interrupted run changed there goes into this run's record in the cluster (a killed run wrote none)
      if (e.status === 'changed' && this.opts.registry.get(task.module)?.usesCluster) cs.clusterChanged = true;
    }
    return pending;
  }

  /** `throttle:` of a task (0: none); a template is rendered with the first cluster's variables. */
  private async throttleOf(task: ModuleTask, cs: ClusterState | undefined): Promise<number> {
    if (task.throttle === undefined || !cs) return 0;
    try {
      return await this.intOf(task.throttle, this.scopeFor(cs, task));
    } catch {
      return 0;
    }
  }

  private async runBlock(node: BlockNode, clusters: ClusterState[]): Promise<void> {
    const eligible: ClusterState[] = [];
    for (const cs of clusters) {
      try {
        if (await this.whenHolds(node.when, this.scopeFor(cs, node), node)) eligible.push(cs);
      } catch (e) {
        this.failCluster(cs, node.name ?? 'block', `block condition: ${errorMessage(e)}`);
      }
    }
    // As in Ansible, a block's `when` is inherited by its tasks: where it is false, each of them
    // is reported skipped (and `register` gets the skipped result).
    const skippedHere = clusters.filter((c) => !eligible.includes(c) && c.active);
    if (skippedHere.length) this.reportSkipped([...node.block, ...node.always], skippedHere);
    if (eligible.length === 0) return;
    await this.runList(node.block, eligible, false);
    // marked twice (a run_once failure): out of this block's rescue, or without one its always
    const spent = new Set(eligible.filter((c) => c.failed && this.fatal.spendSecond(c)));
    const failed = eligible.filter((c) => c.failed && !c.unreachable && !(node.rescue.length > 0 && spent.has(c)));
    if (node.rescue.length > 0 && failed.length > 0 && !this.opts.signal.aborted) {
      // marked by another's failure (any_errors_fatal): rescued without counting a failure or a rescue
      const marked = new Set(failed.filter((cs) => this.fatal.take(cs)));
      for (const cs of failed) {
        if (marked.has(cs)) {
          cs.failed = false;
          continue;
        }
        // The failure is handled by the rescue: counted rescued (as ansible-core counts it, when the
        // rescue starts), and failed only if the rescue fails too.
        cs.failed = false;
        cs.uncount('failed');
        cs.count('rescued');
        const lf = this.lastFailure.get(cs.name);
        this.dyn.set(cs.name, {
          ...(this.dyn.get(cs.name) ?? {}),
          failed_task: lf?.task ?? '',
          failed_result: lf?.result ?? {},
          // Ansible's names: the failed task (with its name) and its result.
          ansible_failed_task: { name: lf?.name ?? '', ...(lf?.action !== undefined ? { action: lf.action } : {}) },
          ansible_failed_result: lf?.result ?? {},
        });
      }
      await this.runList(node.rescue, failed, false);
      for (const cs of failed) {
        if (cs.failed || cs.unreachable || marked.has(cs)) continue;
        const key = this.failedKey.get(cs.name);
        if (key) this.opts.journal?.rescued(cs.name, key);
      }
      this.opts.journal?.sync();
    }
    if (node.always.length > 0) {
      const stillFailed = eligible.filter((c) => c.failed && !c.unreachable);
      const marked = new Set(stillFailed.filter((c) => this.fatal.isMarked(c)));
      for (const cs of stillFailed) {
        cs.failed = false;
        this.cleared.delete(cs.name);
      }
      await this.runList(node.always, eligible.filter((c) => !c.unreachable && !c.ended && !(node.rescue.length === 0 && spent.has(c))), false);
      for (const cs of stillFailed) {
        // `meta: clear_host_errors` in the always: its failure is gone
        if (this.cleared.delete(cs.name)) continue;
        cs.failed = true;
        // its own failure stands, not a mark made while the always ran
        if (!marked.has(cs)) this.fatal.take(cs);
      }
    }
  }

  /** The last failed task per cluster (for `failed_task` / `failed_result` in rescue). */
  readonly lastFailure = new Map<string, { task: string; name: string; action?: string; result: Obj }>();

  failCluster(cs: ClusterState, task: string, msg: string): void {
    this.opts.emit({ type: 'task_result', task, cluster: cs.name, status: 'failed', msg, duration_ms: 0 });
    cs.failed = true;
    cs.count('failed');
    this.lastFailure.set(cs.name, { task, name: task, result: { failed: true, msg } });
  }

  private async runMeta(node: MetaNode, clusters: ClusterState[]): Promise<void> {
    if (node.action === 'flush_handlers') {
      await this.flushHandlers();
      return;
    }
    if (node.action === 'clear_host_errors' || node.action === 'end_batch') {
      // as ansible-core runs these: once, its condition on the first cluster, for the whole batch
      const first = clusters[0];
      if (first && (await this.whenHolds(node.when, this.scopeFor(first, node), node))) this.batchMeta(node.action);
      return;
    }
    for (const cs of clusters) {
      if (!(await this.whenHolds(node.when, this.scopeFor(cs, node), node))) continue;
      if (node.action === 'end_play') this.ended = true;
      else if (node.action === 'end_cluster') cs.ended = true;
      else if (node.action === 'clear_facts') cs.facts = {};
    }
  }

  /** Clusters whose errors `meta: clear_host_errors` cleared while a block's `always` ran on them. */
  private readonly cleared = new Set<string>();

  /**
   * `meta: end_batch`: every cluster of the batch is done with the play. `meta: clear_host_errors`:
   * the failed clusters are failed no more — one in an `always` goes on after it, the others are
   * done with this play and run the later ones — and their failures no longer fail the run.
   */
  private batchMeta(action: 'clear_host_errors' | 'end_batch'): void {
    for (const cs of this.batch) {
      if (cs.unreachable) continue;
      if (action === 'end_batch') {
        cs.ended = true;
        continue;
      }
      this.cleared.add(cs.name);
      cs.clearedFailures = cs.stats.failed;
      if (cs.failed) {
        cs.failed = false;
        cs.ended = true;
      }
    }
    if (action === 'clear_host_errors') this.fatal.clear();
  }

  /** Run notified handlers (in definition order), repeating while handlers notify others. */
  async flushHandlers(forced: readonly ClusterState[] = []): Promise<void> {
    const runs = (c: ClusterState): boolean => c.active || forced.includes(c);
    for (let round = 0; round < 10; round++) {
      const toRun: { handler: ModuleTask; clusters: ClusterState[] }[] = [];
      const seen = new Set<string>();
      for (const h of [...this.play.handlers, ...this.roles.handlers]) {
        // a role's handlers loaded again at run time (include_role) are the same handlers
        const id = `${h.pos.file}:${h.pos.line}:${h.pos.col}`;
        if (seen.has(id)) continue;
        seen.add(id);
        const keys = [...(h.name ? [h.name] : []), ...h.listen];
        const targets = this.batch.filter((c) => runs(c) && keys.some((k) => c.notified.has(k)));
        if (targets.length) toRun.push({ handler: h, clusters: targets });
      }
      if (toRun.length === 0) return;
      for (const c of this.batch) c.notified.clear();
      for (const { handler, clusters } of toRun) {
        if (forced.length === 0 ? this.stopped() : this.opts.signal.aborted) return;
        await this.runTask(handler, clusters.filter(runs), true);
      }
    }
    this.opts.emit({ type: 'warning', msg: 'handlers kept notifying each other for 10 rounds; stopped' });
  }

  /** Stop the run when `any_errors_fatal` or `max_fail_percentage` say so, or the whole batch failed. */
  private async checkThresholds(): Promise<void> {
    if (this.shared.stopReason || this.opts.signal.aborted) return;
    const fleet = this.opts.fleet;
    if (fleet && this.fleetBatch) {
      // a shard: the fleet's batch decides (and another shard's any_errors_fatal stops this one)
      const failedNames = this.batch.filter((c) => c.failed || c.unreachable).map((c) => c.name);
      const why = await fleet.checkpoint(this.fleetBatch, failedNames, this.opts.signal);
      if (why && !this.shared.stopReason) {
        this.shared.stopReason = why;
        this.opts.emit({ type: 'play_aborted', play: this.play.name, reason: why });
      }
      return;
    }
    const failed = this.batch.filter((c) => c.failed || c.unreachable).length;
    if (failed === 0) return;
    const pct = (failed * 100) / this.batch.length;
    let reason: string | undefined;
    // any_errors_fatal marked the others failed where they stood (fatal.ts): it ends the run when none is left
    if (this.play.maxFailPercentage !== undefined && pct > this.play.maxFailPercentage) {
      reason = `max_fail_percentage ${this.play.maxFailPercentage}% exceeded: ${failed} of ${this.batch.length} cluster(s) in this batch failed`;
    } else if (failed === this.batch.length) reason = this.play.anyErrorsFatal ? 'any_errors_fatal: a cluster failed' : 'every cluster of the batch failed';
    if (reason) {
      this.shared.stopReason = reason;
      this.opts.emit({ type: 'play_aborted', play: this.play.name, reason });
    }
  }
}

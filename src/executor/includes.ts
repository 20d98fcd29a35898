/**
 * `include_tasks` and `include_role` in a play: the file or role is resolved per cluster at run
 * time (its name may be templated, and may differ per cluster), loaded once per file or role, and
 * run on the clusters that resolved to it — once, or once per loop item with the loop variable
 * set — counting one `included` result per item as ansible-playbook does.
 */
import path from 'node:path';
import { includeFile } from '../core/dwim.js';
import { errorMessage, formatPos } from '../load/errors.js';
import type { RoleCollector } from '../playbook/nodes/context.js';
import { expandRole, includeRoleScope, includeScope, loadTaskFile } from '../playbook/tasks.js';
import type { BlockNode, IncludeNode, IncludeRoleNode, Play, TaskNode } from '../playbook/types.js';
import { templar } from '../template/index.js';
import { loopItems, loopVars } from './loops.js';
import { lookupHost, withLookups, type LookupContext, type LookupHost } from './lookups.js';
import { extendScope } from './lazyvars.js';
import type { ClusterState, RunOptions } from './state.js';

type Obj = Record<string, unknown>;

/** A cluster's loop items of an include: the whole list and the indices of the items that brought in this target. */
type LoopItems = { list: unknown[]; idx: number[] } | undefined;

/** What running includes needs from the play (`PlayRun` implements it). */
export interface IncludeHost {
  readonly opts: RunOptions;
  readonly play: Play;
  /** Roles of the play (`include_role` with `public: true` adds to its public roles). */
  readonly roles: RoleCollector;
  /** Per-cluster extra variables of the current dynamic scope (include loops set the loop variable here). */
  readonly dyn: Map<string, Obj>;
  selected(tags: string[]): boolean;
  reachedStart(name: string): boolean;
  scopeFor(cs: ClusterState, node: TaskNode, extra?: Obj): Obj;
  whenHolds(when: unknown[], vars: Obj, node: TaskNode, host?: LookupHost): Promise<boolean>;
  lookupContext(cs: ClusterState, vars: Obj, task: string): LookupContext;
  failCluster(cs: ClusterState, task: string, msg: string): void;
  runList(nodes: TaskNode[], clusters: ClusterState[], topLevel: boolean): Promise<void>;
}

/** The includes of one play on one batch, with their loaded files and roles cached. */
export class Includes {
  constructor(private readonly host: IncludeHost) {}

  /** Loaded task files per include task and file: the tasks carry that include's vars, tags and inherited keywords. */
  private readonly includeCache = new WeakMap<IncludeNode, Map<string, Promise<TaskNode[]>>>();

  async runInclude(node: IncludeNode, clusters: ClusterState[]): Promise<void> {
    const targets = await this.resolveTargets(node, clusters, `include_tasks: ${node.file}`, 'include_tasks', async (scope) => {
      const target = await templar.renderString(node.file, scope, { where: node.pos });
      const parents: string[] = [];
      for (const p of node.parents) parents.push(await templar.renderString(p, scope, { where: node.pos }));
      const file = includeFile({ target, ...(node.role ? { roleDir: node.role.dir } : {}), handler: node.handler, parents, playbookDir: this.host.roles.playbookDir, dynamic: true });
      const named = target;
      const cache = this.includeCache.get(node) ?? new Map<string, Promise<TaskNode[]>>();
      this.includeCache.set(node, cache);
      let p = cache.get(file);
      if (!p) {
        p = loadTaskFile(file, { ...includeScope(node, this.host.roles), includes: [target, ...parents] }, { registry: this.host.opts.registry }, node.pos);
        cache.set(file, p);
      }
      // what ansible-core registers for an include
      return { key: file, target: await p, included: file, msg: `included: ${path.relative(process.cwd(), file) || file}`, registered: { include: named, include_args: {}, changed: false } };
    });
    for (const t of targets.values()) await this.runIncluded(t.target, t.clusters, node.loop === undefined ? undefined : t.items, node.loopControl);
  }

  /** The item indices of a loop, by the target each item resolves to (its name may use the loop variable: `include_tasks: "{{ item }}"`). */
  private async resolveItems<R extends { key: string }>(node: IncludeNode | IncludeRoleNode, scope: Obj, items: unknown[], resolve: (scope: Obj) => Promise<R>): Promise<Map<string, { r: R; idx: number[] }>> {
    const out = new Map<string, { r: R; idx: number[] }>();
    for (let i = 0; i < items.length; i++) {
      const r = await resolve(extendScope(scope, loopVars(node.loopControl, items, i)));
      const e = out.get(r.key) ?? { r, idx: [] };
      e.idx.push(i);
      out.set(r.key, e);
    }
    return out;
  }

  /**
   * The per-cluster part of an include: tags and --start-at-task, its `when`, its loop items and
   * its target (`resolve`: the file or role, templated per cluster, loaded once per key), a task
   * result per cluster (one `included` count per loop item, as ansible-playbook counts); the
   * clusters grouped by target. A target of `undefined` (a role that brings in nothing) leaves
   * the cluster out without a result.
   */
  private async resolveTargets<T>(
    node: IncludeNode | IncludeRoleNode,
    clusters: ClusterState[],
    label: string,
    module: 'include_tasks' | 'include_role',
    resolve: (scope: Obj) => Promise<{ key: string; target: T | undefined; msg: string; registered?: Obj; included?: string }>,
  ): Promise<Map<string, { target: T; clusters: ClusterState[]; items: Map<string, LoopItems> }>> {
    const targets = new Map<string, { target: T; clusters: ClusterState[]; items: Map<string, LoopItems> }>();
    if (!this.host.selected(node.tags)) return targets;
    const task = node.name ?? label;
    // An include named by --start-at-task starts the run there; otherwise its tasks are gated one by one.
    this.host.reachedStart(task);
    this.host.opts.emit({ type: 'task_start', play: this.host.play.name, task, module, where: formatPos(node.pos), handler: false });
    for (const cs of clusters) {
      const started = Date.now();
      try {
        const scope = this.host.scopeFor(cs, node);
        if (!(await this.host.whenHolds(node.when, scope, node))) {
          this.host.opts.emit({ type: 'task_result', task, cluster: cs.name, status: 'skipped', msg: 'Conditional result was False', false_condition: node.when.length === 1 ? node.when[0] : undefined, duration_ms: 0 });
          cs.count('skipped');
          continue;
        }
        let items: unknown[] | undefined;
        if (node.loop !== undefined) {
          const host = await lookupHost([node.loop], scope, this.host.lookupContext(cs, scope, task));
          const v = await withLookups(host, () => loopItems(node, scope, { where: node.pos, host }));
          if (!Array.isArray(v)) throw new Error(`loop must be a list, got ${JSON.stringify(v)?.slice(0, 80)}`);
          items = v;
        }
        // each item may name another file or role (ansible-core templates the name per item)
        const resolved = items === undefined ? new Map([['', { r: await resolve(scope), idx: [] as number[] }]]) : await this.resolveItems(node, scope, items, resolve);
        for (const { r, idx } of resolved.values()) {
          const { key, target, msg, registered, included } = r;
          if (target === undefined) continue;
          const entry = targets.get(key) ?? { target, clusters: [] as ClusterState[], items: new Map<string, LoopItems>() };
          entry.clusters.push(cs);
          entry.items.set(cs.name, items === undefined ? undefined : { list: items, idx });
          targets.set(key, entry);
          this.host.opts.emit({ type: 'task_result', task, cluster: cs.name, status: 'ok', msg, included, duration_ms: Date.now() - started });
          if (node.register) cs.facts[node.register] = registered ?? { changed: false };
        }
        const brought = [...resolved.values()].filter((e) => e.r.target !== undefined);
        if (items === undefined) {
          if (brought.length) cs.count('ok');
        } else if (items.length === 0) {
          // as ansible-core: no items is one skipped result
          this.host.opts.emit({ type: 'task_result', task, cluster: cs.name, status: 'skipped', msg: 'No items in the list', duration_ms: Date.now() - started });
          cs.count('skipped');
        }
        else if (brought.length) cs.count('ok', brought.reduce((n, e) => n + e.idx.length, 0));
      } catch (e) {
        this.host.failCluster(cs, task, errorMessage(e));
      }
    }
    return targets;
  }

  /**
   * Run what an include brought in (tasks of a file, or a role's block) on its clusters: once, or
   * once per loop item with the loop variable set for that cluster (clusters with fewer items
   * drop out as their items run out).
   */
  private async runIncluded(tasks: TaskNode[], clusters: ClusterState[], items: Map<string, LoopItems> | undefined, loopControl: IncludeNode['loopControl']): Promise<void> {
    if (!items) {
      await this.host.runList(tasks, clusters, false);
      return;
    }
    const maxItems = Math.max(0, ...clusters.map((c) => items.get(c.name)?.idx.length ?? 0));
    const saved = new Map(clusters.map((c) => [c.name, this.host.dyn.get(c.name)]));
    for (let i = 0; i < maxItems; i++) {
      const subset = clusters.filter((c) => (items.get(c.name)?.idx.length ?? 0) > i);
      for (const c of subset) {
        const it = items.get(c.name) as { list: unknown[]; idx: number[] };
        this.host.dyn.set(c.name, { ...(saved.get(c.name) ?? {}), ...loopVars(loopControl, it.list, it.idx[i] ?? i) });
      }
      await this.host.runList(tasks, subset, false);
    }
    for (const [name, d] of saved) {
      if (d === undefined) this.host.dyn.delete(name);
      else this.host.dyn.set(name, d);
    }
  }

  /** Expanded roles per include_role task and role (each task's own `vars:` are the role's parameters). */
  private readonly includeRoleCache = new WeakMap<IncludeRoleNode, Map<string, Promise<BlockNode | undefined>>>();

  /** `include_role`: the role is found and loaded per cluster at run time (its name may be templated), then run like an include. */
  async runIncludeRole(node: IncludeRoleNode, clusters: ClusterState[]): Promise<void> {
    const targets = await this.resolveTargets(node, clusters, `include_role: ${node.roleName}`, 'include_role', async (scope) => {
      const name = await templar.renderString(node.roleName, scope, { where: node.pos });
      const key = `${name}\u0000${JSON.stringify(node.from)}`;
      const cache = this.includeRoleCache.get(node) ?? new Map<string, Promise<BlockNode | undefined>>();
      this.includeRoleCache.set(node, cache);
      let p = cache.get(key);
      if (!p) {
        // the role's tasks inherit what the include's parents pass on, not the include's own keywords
        const c = { ...node, ...node.parentInherit, when: [], vars: undefined, name: undefined };
        p = expandRole({ name, from: node.from, useVars: {}, params: node.vars ?? {}, public: node.public, allowDuplicates: true, validate: node.validate }, c, includeRoleScope(node, this.host.roles), { registry: this.host.opts.registry }, node.pos, undefined, true);
        cache.set(key, p);
      }
      const block = await p;
      return { key, target: block, included: name, msg: `included: role ${block?.role?.name ?? name}`, registered: { include_args: node.includeArgs, changed: false } };
    });
    for (const t of targets.values()) {
      if (node.public && t.target.role && !this.host.roles.publicRoles.includes(t.target.role)) this.host.roles.publicRoles.push(t.target.role);
      await this.runIncluded([t.target], t.clusters, node.loop === undefined ? undefined : t.items, node.loopControl);
    }
  }
}

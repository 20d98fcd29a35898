/**
 * The one place that builds a task's variables: every layer of src/vars/precedence.ts merged for
 * one cluster at one point of a run, with the magic variables set last. {@link RunVars} holds what
 * does not depend on the task (the run-wide magic variables — `groups`, `clusters`, `check_mode`,
 * `run_id`, `inventory_dir`, `playbook_dir` — and each cluster's ordered group vars), computed once
 * per run; {@link RunVars.taskVars} adds what does (the cluster, the play, the task's block, role
 * and own vars, facts, extra vars, Ansible's names for the same things).
 */
import path from 'node:path';
import { controllerPython } from '../core/python.js';
import { forgetInventoryVars, groupsMap, groupVarLayers, inventoryVars } from '../inventory/host-vars.js';
import type { Inventory } from '../inventory/types.js';
import type { Play, RoleUse, TaskNode } from '../playbook/types.js';
import { mergeVars } from '../vars/precedence.js';
import { roleLayers } from '../vars/roles.js';
import type { ClusterState } from './state.js';

type Obj = Record<string, unknown>;

/** Where a task runs, as its variables see it. */
export interface TaskVarsInput {
  /** The cluster the task runs on. */
  cs: ClusterState;
  /** The task (or block, include) whose scope is built. */
  node: TaskNode;
  play: Play;
  /** The play's `vars_files`, merged in file order. */
  playVarsFiles: Obj;
  /** Every cluster the play targets (all batches): `ansible_play_hosts_all`. */
  playTargets: readonly ClusterState[];
  /** The clusters of the current batch: `ansible_play_batch`. */
  batch: readonly ClusterState[];
  /** The roles the play names itself: `ansible_play_role_names`. */
  playRoleNames: string[];
  /** The public roles of the play (their defaults and vars are visible to every task). */
  publicRoles: readonly RoleUse[];
  /** `hostvars` (built by the caller: it reads other clusters' scopes lazily). */
  hostvars: Obj;
  /** `--check`, `--diff`. */
  check: boolean;
  diff: boolean;
  /** `-e` values. */
  extraVars: Obj;
  /**
   * The cluster's own variables only, as `hostvars[name]` holds them (ansible-core's
   * `get_vars(host=…)` without play or task): inventory, facts, `include_vars`, `-e` and the
   * magic variables — no play, role, block or task vars, and no `hostvars`.
   */
  hostLevel?: boolean;
}

/** A task's variables: merged by precedence, and the names later layers must not render again. */
export interface TaskVars {
  merged: Obj;
  /** Magic variables, and facts whose value won: data, never rendered as templates. */
  final: Set<string>;
}

/**
 * `ansible_search_path` of a task, as ansible-core builds it (`Task.get_search_path` and the task
 * executor): the directories of its role and of the roles that brought that one in (innermost
 * first), the directory of the file holding the task, and the playbook directory.
 */
export function searchPath(node: Pick<TaskNode, 'role' | 'pos' | 'baseDir'>, playbookDir: string): string[] {
  const out: string[] = [];
  for (let r = node.role; r; r = r.parent) if (!out.includes(r.dir)) out.push(r.dir);
  const dir = node.pos?.file ? path.dirname(node.pos.file) : node.baseDir;
  if (!out.includes(dir)) out.push(dir);
  if (!out.includes(playbookDir)) out.push(playbookDir);
  return out;
}

/** The variables of a run: run-wide magic variables, computed once, and each task's scope. */
export class RunVars {
  /** Magic variables that do not depend on the cluster. */
  readonly magic: Obj;
  private readonly layersCache = new Map<string, Obj[]>();

  constructor(
    private readonly inv: Inventory,
    run: { check: boolean; runId: string; playbookDir: string; verbosity?: number },
  ) {
    this.magic = {
      ...this.inventoryMagic(),
      check_mode: run.check,
      run_id: run.runId,
      inventory_dir: inv.dir,
      playbook_dir: run.playbookDir,
      // ansible-core's run-wide magic variables (VariableManager._get_magic_variables)
      ansible_verbosity: run.verbosity ?? 0,
      ansible_playbook_python: controllerPython(),
    };
  }

  private inventoryMagic(): Obj {
    const clusters: Obj = {};
    for (const name of this.inv.clusters.keys()) clusters[name] = inventoryVars(this.inv, name);
    return { groups: groupsMap(this.inv), clusters };
  }

  /** The inventory changed during the run (add_host, group_by): `groups`, `clusters` and the group vars are computed again. */
  refresh(): void {
    forgetInventoryVars(this.inv);
    this.layersCache.clear();
    Object.assign(this.magic, this.inventoryMagic());
  }

  /** The cluster's inventory group vars, ordered low → high (computed once per cluster). */
  groupLayers(name: string): Obj[] {
    let l = this.layersCache.get(name);
    if (!l) {
      l = groupVarLayers(this.inv, name);
      this.layersCache.set(name, l);
    }
    return l;
  }

  /** Every variable visible to `t.node` on `t.cs` (see src/vars/precedence.ts for the order). */
  taskVars(t: TaskVarsInput): TaskVars {
    const { cs, node } = t;
    const blockVars = node.kind === 'block' && node.vars ? [...node.blockVars, node.vars] : node.blockVars;
    const alive = (list: readonly ClusterState[]): string[] => list.filter((c) => !c.failed && !c.unreachable).map((c) => c.name);
    const magic: Obj = {
      ...this.magic,
      cluster_name: cs.name,
      group_names: cs.inv.groups.filter((g) => g !== 'all').sort(),
      play_name: t.play.name,
      // Ansible's names for the same things, as copied playbooks use them.
      inventory_hostname: cs.name,
      inventory_hostname_short: cs.name.split('.')[0] ?? cs.name,
      ansible_check_mode: t.check,
      ansible_diff_mode: t.diff,
      ansible_play_hosts_all: t.playTargets.map((c) => c.name),
      ansible_play_hosts: alive(t.playTargets),
      ansible_play_batch: alive(t.batch),
      play_hosts: alive(t.batch),
      // not in hostvars' own templating (as ansible-core: `include_hostvars=False`)
      ...(t.hostLevel ? {} : { hostvars: t.hostvars }),
      ansible_play_role_names: t.playRoleNames,
      role_names: t.playRoleNames,
      ...(node.role && !t.hostLevel ? { role_name: node.role.name, role_path: node.role.dir, ansible_role_name: node.role.name } : {}),
      ansible_search_path: searchPath(node, typeof this.magic.playbook_dir === 'string' ? this.magic.playbook_dir : node.baseDir),
    };
    const roles = t.hostLevel ? { defaults: [], vars: [], params: [] } : roleLayers(t.publicRoles, node.role);
    const play = !t.hostLevel;
    const merged = mergeVars({
      roleDefaults: roles.defaults,
      roleVars: roles.vars,
      roleParams: roles.params,
      groupVars: this.groupLayers(cs.name),
      clusterVars: cs.inv.vars,
      playVars: play ? t.play.vars : undefined,
      playVarsFiles: play ? t.playVarsFiles : undefined,
      blockVars: play ? blockVars : undefined,
      taskVars: play && (node.kind === 'task' || node.kind === 'include') ? node.vars : undefined,
      // include_vars (18 in Ansible's order) sits just below set_fact/register (19)
      facts: Object.keys(cs.includedVars).length ? { ...cs.includedVars, ...cs.facts } : cs.facts,
      extraVars: t.extraVars,
      magic,
    });
    // ansible-core's connection variables (PlayContext.update_vars): `ansible_host` is the host's address, its name by default
    if (!('ansible_host' in merged)) merged.ansible_host = cs.name;
    const final = new Set<string>(Object.keys(magic));
    for (const [k, v] of Object.entries(cs.facts)) if (merged[k] === v) final.add(k);
    return { merged, final };
  }
}

/**
 * The run's inventory as `add_host` and `group_by` change it (src/inventory/dynamic.ts does the
 * change): what the run derived from the inventory is refreshed after each change — the run
 * variables (`groups`, `clusters`, group vars) and a {@link ClusterState} for each new host, so the
 * plays that follow can target it and `hostvars` sees it.
 */
import type { RunInventory } from '../core/module.js';
import { addDynamicGroup, addDynamicHost, applyLaterGroupVars } from '../inventory/dynamic.js';
import { resolveConnection } from '../inventory/connection.js';
import type { Inventory } from '../inventory/types.js';
import type { RunVars } from './task-vars.js';
import { ClusterState } from './state.js';

/** The run's in-memory inventory, changed in place (one per run). */
export class DynamicInventory {
  constructor(
    private readonly inv: Inventory,
    private readonly vars: RunVars,
    private readonly states: Map<string, ClusterState>,
    /** Masks a value from a group_vars file read at run time (a vault value, a `!secret` scalar). */
    private readonly addSecret: (value: string) => void,
  ) {}

  /** What a module running on `cluster` may change (ModuleContext.inventory). */
  forCluster(cluster: string): RunInventory {
    return {
      addHost: (host) => this.change(() => addDynamicHost(this.inv, host, (name, vars) => resolveConnection({ name, asCluster: false, vars }, this.inv.dir, process.cwd(), process.env))),
      addGroup: (key, parents) => this.change(() => addDynamicGroup(this.inv, cluster, key, parents)),
    };
  }

  private async change(apply: () => boolean): Promise<boolean> {
    const before = new Set(this.inv.groups.keys());
    if (!apply()) return false;
    const made = [...this.inv.groups.keys()].filter((g) => !before.has(g));
    if (made.length) for (const s of await applyLaterGroupVars(this.inv, made)) this.addSecret(s);
    this.vars.refresh();
    for (const c of this.inv.clusters.values()) if (!this.states.has(c.name)) this.states.set(c.name, new ClusterState(c));
    return true;
  }
}

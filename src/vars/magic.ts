/** The magic variables (precedence layer 9, see `precedence.ts`) for one cluster. */
import { groupsMap, inventoryVars } from '../inventory/load.js';
import type { Inventory } from '../inventory/types.js';
import type { MagicVarName } from './precedence.js';

/** Run-level facts the magic variables are made of. */
export interface MagicContext {
  /** True under `--check`. */
  checkMode: boolean;
  /** The current play's name. */
  playName: string;
  /** This run's id. */
  runId: string;
  /** Absolute directory of the playbook. */
  playbookDir: string;
}

const clustersCache = new WeakMap<Inventory, Record<string, Record<string, unknown>>>();
const groupsCache = new WeakMap<Inventory, Record<string, string[]>>();

/** Cluster name → merged inventory vars, for every cluster (cached per inventory; read-only). */
export function clustersVars(inv: Inventory): Record<string, Record<string, unknown>> {
  let out = clustersCache.get(inv);
  if (!out) {
    out = {};
    for (const name of inv.clusters.keys()) out[name] = inventoryVars(inv, name);
    clustersCache.set(inv, out);
  }
  return out;
}

/**
 * The magic variables for `cluster`: `cluster_name`, `group_names` (sorted, without `all` and
 * `ungrouped`), `groups`, `clusters`, `check_mode`, `play_name`, `run_id`, `inventory_dir`,
 * `playbook_dir`. The `groups` and `clusters` values are shared between clusters: read-only.
 */
export function magicVars(inv: Inventory, cluster: string, ctx: MagicContext): Record<MagicVarName, unknown> {
  let groups = groupsCache.get(inv);
  if (!groups) groupsCache.set(inv, (groups = groupsMap(inv)));
  const c = inv.clusters.get(cluster);
  return {
    cluster_name: cluster,
    group_names: (c?.groups ?? []).filter((g) => g !== 'all' && g !== 'ungrouped').sort(),
    groups,
    clusters: clustersVars(inv),
    check_mode: ctx.checkMode,
    play_name: ctx.playName,
    run_id: ctx.runId,
    inventory_dir: inv.dir,
    playbook_dir: ctx.playbookDir,
  };
}

/**
 * The variables an inventory gives a cluster, as the executor reads them: the group var layers
 * in ansible-core's order (`groupVarLayers`), their merge with the cluster's own vars
 * (`inventoryVars`), and group membership (`groupMembers`, `groupsMap` for the `groups` magic var).
 */
import { InputError } from '../load/errors.js';
import { didYouMean, listSome } from '../load/suggest.js';
import { mergeVars } from '../vars/precedence.js';
import { setVar } from './builder.js';
import type { Inventory, InventoryCluster } from './types.js';

function clusterOf(inv: Inventory, cluster: string): InventoryCluster {
  const c = inv.clusters.get(cluster);
  if (!c) {
    const names = [...inv.clusters.keys()];
    throw new InputError(`unknown cluster '${cluster}'`, undefined, didYouMean(cluster, names) ?? `known clusters: ${listSome(names)}`);
  }
  return c;
}

/**
 * The group vars of `cluster`, ordered low → high precedence as ansible-core's VariableManager
 * does: the inline `vars` of `all`, then of every other group of the cluster; then the inventory's
 * `group_vars/all`, the playbook's `group_vars/all`; then the inventory's `group_vars/` files of
 * the other groups, then the playbook's (so any group_vars file beats every inline group var). Within each half: by depth (deeper wins), then `ansible_group_priority`, then
 * by name (alphabetically later wins). The implicit localhost sees the `all` group only.
 * Throws on an unknown cluster.
 */
export function groupVarLayers(inv: Inventory, cluster: string): Record<string, unknown>[] {
  const c = clusterOf(inv, cluster);
  const groups = (c.implicit ? ['all'] : c.groups).map((g) => inv.groups.get(g)).filter((g) => g !== undefined);
  const [all, ...rest] = groups;
  return [
    ...groups.map((g) => g.inlineVars),
    ...(all ? [all.fileVars, all.playbookVars] : []),
    ...rest.map((g) => g.fileVars),
    ...rest.map((g) => g.playbookVars),
  ];
}

const varsCache = new WeakMap<Inventory, Map<string, Record<string, unknown>>>();

/** Forget the merged vars cached for `inv` (its hosts, groups or vars changed: add_host, group_by). */
export function forgetInventoryVars(inv: Inventory): void {
  varsCache.delete(inv);
}

/**
 * The merged inventory vars of `cluster` (group layers, then cluster vars; replace per key).
 * Cached per inventory: treat the result as read-only.
 */
export function inventoryVars(inv: Inventory, cluster: string): Record<string, unknown> {
  let cache = varsCache.get(inv);
  if (!cache) varsCache.set(inv, (cache = new Map()));
  let vars = cache.get(cluster);
  if (!vars) {
    vars = mergeVars({ groupVars: groupVarLayers(inv, cluster), clusterVars: clusterOf(inv, cluster).vars });
    cache.set(cluster, vars);
  }
  return vars;
}

/**
 * A group's clusters in ansible-core's order (`Group.get_hosts`, also the `groups` magic var): its own,
 * then its child groups', level by level (breadth first), each cluster once; never the implicit localhost.
 */
export function groupMembers(inv: Inventory, name: string): string[] {
  const start = inv.groups.get(name);
  if (!start) return [];
  const ordered = [start.name, ...start.children];
  const seen = new Set(ordered);
  let level = start.children;
  while (level.length) {
    const next: string[] = [];
    for (const g of level) {
      for (const c of inv.groups.get(g)?.children ?? []) {
        if (seen.has(c)) continue;
        seen.add(c);
        ordered.push(c);
        next.push(c);
      }
    }
    level = next;
  }
  const out = new Set<string>();
  for (const g of ordered) for (const c of inv.groups.get(g)?.clusters ?? []) if (!inv.clusters.get(c)?.implicit) out.add(c);
  return [...out];
}

/** Group name → member cluster names (groupMembers' order), for every group incl. `all` and `ungrouped`. */
export function groupsMap(inv: Inventory): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const g of inv.groups.keys()) setVar(out, g, groupMembers(inv, g));
  return out;
}

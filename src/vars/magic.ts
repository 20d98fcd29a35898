/**
 * The `clusters` magic variable (cluster name → that cluster's merged inventory vars), for code
 * outside a run that needs it (`kplay plan`). The engine computes every magic variable itself
 * (src/executor/run.ts and play.ts; see src/vars/precedence.ts for the list).
 */
import { inventoryVars } from '../inventory/host-vars.js';
import type { Inventory } from '../inventory/types.js';

const clustersCache = new WeakMap<Inventory, Record<string, Record<string, unknown>>>();

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

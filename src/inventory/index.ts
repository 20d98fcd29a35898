/** Public API of the inventory: loading, variable layers, host patterns, the implicit localhost and the graph view. */
export type { Inventory, InventoryCluster, InventoryGroup } from './types.js';
export { loadInventory, emptyInventory } from './resolve.js';
export { resolveInventory } from './source.js';
export type { ResolvedInventory } from './source.js';
export { groupVarLayers, inventoryVars, groupsMap, groupMembers } from './host-vars.js';
export type { LoadInventoryOptions } from './types.js';
export { matchClusters, parsePattern } from './patterns.js';
export type { PatternTerm } from './patterns.js';
export { withImplicitLocalhost, IMPLICIT_LOCALHOST } from './localhost.js';
export { CONTEXT_VAR, KUBECONFIG_VAR } from './connection.js';
export { graph } from './graph.js';
export { inventorySchema } from './schema.js';

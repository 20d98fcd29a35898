/** Public API of the inventory: loading, variable layers, host patterns and the graph view. */
export type { Inventory, InventoryCluster, InventoryGroup } from './types.js';
export { loadInventory, resolveInventory, groupVarLayers, inventoryVars, groupsMap, groupMembers } from './load.js';
export type { LoadInventoryOptions, ResolvedInventory } from './load.js';
export { matchClusters, parsePattern } from './patterns.js';
export type { PatternTerm } from './patterns.js';
export { graph } from './graph.js';
export { inventorySchema } from './schema.js';

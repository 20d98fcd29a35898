/**
 * Applying, deleting and pruning sets of objects — what the rest of kplay imports of `apply/`:
 * `applyObjects` (groups.ts: ordered groups, each planned and written in parallel, CRDs waited
 * for before their custom resources), `deleteObjects` (delete.ts), `pruneObjects` (prune.ts),
 * `removeAdditions` (removals.ts: taking out hand edits), and the result of one object.
 */
export type { ApplySetOptions, ObjectAction, ObjectResult } from './types.js';
export { applyObjects } from './groups.js';
export { withoutAggregatedRules } from './aggregated-rules.js';
export { crdKinds, smallCrdsFirst, waitServed, watchCrds, writeServed, type CrdKind } from './crds.js';
export { removeAdditions, REMOVE_ATTEMPTS } from './removals.js';
export { deleteObjects, deleteOne } from './delete.js';
export { mergeRecords, OWNER_LABEL, pruneObjects, pruneRecordOf, RECORD_LABEL, type PruneOptions, type PruneRecordEntry } from './prune.js';

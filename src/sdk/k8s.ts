/**
 * `kplay/sdk`, part 2 — Kubernetes: the client of the task's cluster ({@link kubeFor}), applying,
 * deleting and pruning sets of objects, planning (server-side dry-runs), drift rules, waiting,
 * manifest loading, normalising and masking objects, and the kubernetes.core argument semantics
 * (`k8s_auth_options`, `find_resource`, waits, deletes) the `kubernetes.core.*` modules share.
 */
export { connect, kubeFor } from '../k8s/client.js';
export { ApplyConflictError, KubeApiError } from '../k8s/errors.js';
export type { JsonPatchOp, KubeClient, KubeObject, ObjectPlan, ObjectRef } from '../k8s/types.js';
export { applyObjects, deleteObjects, OWNER_LABEL, pruneObjects, removeAdditions, type ObjectResult } from '../k8s/apply/index.js';
export { driftOf, labelOf, objectRef, planApply, removesOnlyAdditions, resolveNamespace, type ObjectDrift } from '../k8s/object-plan.js';
export { parseDriftRules, type DriftField, type DriftRule, type HiddenField } from '../k8s/drift.js';
export { loadSources, parseManifests, toObjects } from '../k8s/manifests.js';
export { diffEntry, maskObject, secretValues } from '../k8s/normalize.js';
export { waitFor, type WaitMode, type WaitTarget } from '../k8s/wait.js';
export { authSecrets, k8sAuthProperties, kubeClientFor, planConnection, taskClient, resolveAuth, type ConnectionPlan, type EnvMap, type K8sAuth, type K8sAuthArgs } from '../k8s/connection.js';
export { asList, buildDefinitions, conditionMet, definitionHash, hideFields, kcoreDeleteOptions, kcoreReadiness, kcoreWaitProperties, loadAllDocuments, parseSelectors, selectorsMatch, waitLikeKcore, type DefinitionParams, type KcoreWaitOutcome, type WaitCondition } from '../k8s/kcore.js';
export { normalize as normalizeObject } from '../k8s/normalize.js';
export { findResource, groupVersion, HTTP_REASON, kcoreDiff, kcoreResource, kcoreVerdict, KcoreObjectFailure, performAction, recursiveDiff, type KcoreActionParams, type KcoreItem } from '../k8s/kcore-action.js';
export { kcoreValidate, taskPython, type KcoreValidation } from '../k8s/kcore-validate.js';

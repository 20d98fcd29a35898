/**
 * The public SDK of kplay: everything a task module needs, and nothing else reaches into kplay's
 * internals. Built-in modules import only from here (`import { defineModule } from 'kplay/sdk'`),
 * so copying one is all a community module author needs.
 *
 * - defining a module: {@link defineModule}, the context and result types, errors;
 * - Kubernetes: the client of the task's cluster ({@link kubeFor}), applying/deleting/pruning sets
 *   of objects, planning (SSA dry-runs), waiting, loading manifests, normalising and masking,
 *   drift rules;
 * - Helm: the helm CLI behind one interface, release storage, chart and values helpers;
 * - load balancers: the `lb_switch` providers;
 * - processes: {@link tether} (children never outlive kplay), approval gates;
 * - running a playbook with locks, run records and a resume journal: {@link runManaged}.
 */

// ---- defining a module
export { defineModule, UnreachableError } from '../core/module.js';
export { DriftResult } from '../core/results.js';
export { checkArgs } from '../plugins/check.js';
export { checkOptions as checkArgumentSpec } from '../playbook/argspec.js';
export { Default, StringEnum, Type, type Args, type Static, type TDefault, type TObject, type TSchema } from '../core/args.js';
export type { AnyModule, ClusterRef, DiffEntry, JsonSchema, ModuleAdapters, ModuleContext, ModuleDefinition, ModuleExample, ModuleLogger, ModuleResult, ModuleStatus, ResultData } from '../core/module.js';
export { errorMessage } from '../load/errors.js';
export { loadYamlDoc } from '../load/yaml.js';
export { MASK } from '../report/mask.js';
export { spawnTethered, tether } from '../core/tether.js';
export { runProcess, type ProcessOptions, type ProcessResult } from '../core/process.js';
export { sleep } from '../core/sleep.js';
/** kplay's settings from the environment (`setting('helm')` is `$KPLAY_HELM` or `helm`), parsed and checked once. */
export { setting, type SettingName } from '../core/settings.js';

// ---- Kubernetes
export { connect, kubeFor } from '../k8s/client.js';
export { ApplyConflictError, KubeApiError } from '../k8s/errors.js';
export type { JsonPatchOp, KubeClient, KubeObject, ObjectPlan, ObjectRef } from '../k8s/types.js';
export { applyObjects, deleteObjects, OWNER_LABEL, pruneObjects, removeAdditions, type ObjectResult } from '../k8s/apply.js';
export { driftOf, labelOf, objectRef, planApply, removesOnlyAdditions, resolveNamespace, type ObjectDrift } from '../k8s/plan.js';
export { parseDriftRules, type DriftField, type DriftRule, type HiddenField } from '../k8s/drift.js';
export { loadSources, parseManifests, toObjects } from '../k8s/load.js';
export { diffEntry, maskObject, secretValues } from '../k8s/normalize.js';
export { waitFor, type WaitMode, type WaitTarget } from '../k8s/wait.js';

// ---- Helm
export { HelmCli, type ChartRef } from '../helm/cli.js';
export { HelmError } from '../helm/errors.js';
export { serverChecksFields, type FieldCheckFacts, type HelmVersion } from '../helm/version.js';
export { cachedHelmVersion } from '../helm/version-cache.js';
export { canonicalValuesJson, changedValueKeys, isMap, maskSecretValues, mergeValues, secretValues as valuesSecrets, valuesEqual, valuesFromSet, type Values } from '../helm/values.js';
export { chartDifferences, chartDigestDescription, isChartDir, localCrdFiles, mayRenderLists, readLocalChart, recordedChartDigest, type LocalChart } from '../helm/chart.js';
export { isKept, objectSummaries, parseRendered, removedObjects, withHelmOwnership } from '../helm/manifests.js';
export { readStoredRelease, storageKind, type StorageKind, type StoredChart } from '../helm/storage.js';
export { lastGoodRevision, PENDING_STATUSES, type ChartMeta, type ReleaseInfo } from '../helm/release.js';

// ---- running a playbook from a program (what `kplay run` does: locks, run records, journal)
export { runManaged, type ManagedRunOptions, type ManagedRunResult } from '../executor/managed.js';
export { readJournal, type JournalState } from '../audit/journal.js';

// ---- load balancers, gates
export { PROVIDERS, type LbSwitchArgs } from '../lb/index.js';
export { GATE_NAME, gateRef, gateState, openGate } from '../audit/gate.js';

// ---- controller-local modules (command, shell, file, copy, template, stat, uri, get_url, …): Ansible's semantics
export { commandResult, runCommand, type CommandArgs, type CommandData } from '../local/command.js';
export { parseFreeForm, shlexSplit, splitArgs } from '../local/kv.js';
export { expandUserVars, findSource, globExists, localPath } from '../local/paths.js';
export { fnmatchRegex } from '../local/fnmatch.js';
export { gatherFacts } from '../executor/facts.js';
export { delta, pyNow, splitLines, type PyTime } from '../local/time.js';
export { applyAttrs, digest, fileState, gidOf, groupName, lexists, octal, pathInfo, sha1File, uidOf, userName, wantedMode, type AttrChange, type ModeArg, type PathInfo, type WantedAttrs } from '../local/files.js';
export { attrDiff, contentDiff } from '../local/diff.js';
export { applyAttrsRecursive } from '../local/tree.js';
export { writeDest, type WriteData, type WriteSpec } from '../local/write.js';
export { httpRequest, maskUrl, secretHeaderValues, type HttpRequest, type HttpResponse } from '../local/http.js';
export { activeConnections, waitLocal, type LocalWaitArgs, type LocalWaitData } from '../local/waitfor.js';
export { pyExpand, pyRegex } from '../local/pyre.js';
export { PathAttrsResult } from '../local/result-schema.js';
export { runRelease, TaskFailure, type EngineArgs, type EngineOutcome, type EngineTarget, type ReleaseData } from '../helm/engine.js';
export { helmFor, releaseClient } from '../helm/engine.js';
export { helmConnection, overriddenKubeconfig, withAuthEnv, type HelmAuthArgs, type HelmConnection } from '../helm/auth.js';
export { goTimeString, listReleaseWithHelm, listStoredRelease, LIST_STATES, notesText, statusMatches, type ListEntry, type ListedRelease, type ListState } from '../helm/list.js';
export { aliased, kcoreMessage, parseGoDuration, parseHelmValuesJson, parseRepositories, repositoryConfigPath, setValuesFlags, yamlDocuments, type RepoEntry, type SetValue } from '../helm/kcore.js';
export { HelmAuthProps, SetValuesProp } from '../helm/kcore-schema.js';
export { chartArgs, downloadFlags, withValuesFile, type ChartDownload, type HelmWrite } from '../helm/cli.js';
export { syncDir } from '../helm/sync-dir.js';
// ---- kubernetes.core connection arguments (k8s_auth_options) and the client they select
export { authSecrets, k8sAuthProperties, kubeClientFor, planConnection, taskClient, resolveAuth, type ConnectionPlan, type EnvMap, type K8sAuth, type K8sAuthArgs } from '../k8s/connection.js';
export { asList, buildDefinitions, conditionMet, definitionHash, hideFields, kcoreDeleteOptions, kcoreWaitProperties, loadAllDocuments, parseSelectors, selectorsMatch, waitLikeKcore, type DefinitionParams, type KcoreWaitOutcome, type WaitCondition } from '../k8s/kcore.js';
export { normalize as normalizeObject } from '../k8s/normalize.js';
export { findResource, groupVersion, HTTP_REASON, kcoreDiff, kcoreResource, KcoreObjectFailure, performAction, recursiveDiff, type KcoreActionParams, type KcoreItem } from '../k8s/kcore-action.js';
/** Asynchronous jobs (`async` + `poll: 0`), for `async_status`. */
export { asyncJob, cleanupAsyncJob, type AsyncJob, type AsyncOutcome } from '../executor/async-jobs.js';
/** The `analysis` gate: its measuring loop (Argo Rollouts' rules) and providers. */
export * as analysisGate from '../analysis/index.js';
/** Analysis gates: the live progress line after each measurement (`ctx.log.progress(gateProgress(all, count))`). */
export { gateProgress, gateValueText, type GateProgressMeasurement } from '../report/gate.js';

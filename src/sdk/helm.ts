/**
 * `kplay/sdk`, part 3 — Helm: the helm CLI behind one interface ({@link HelmCli}), release
 * storage and history, charts and values, and the release engine `helm_release` and the
 * `kubernetes.core.helm*` modules share.
 */
export { HelmCli, type ChartRef } from '../helm/cli.js';
export { HelmError } from '../helm/errors.js';
export { serverChecksFields, type FieldCheckFacts, type HelmVersion } from '../helm/version.js';
export { cachedHelmVersion } from '../helm/version-cache.js';
export { canonicalValuesJson, changedValueKeys, isMap, maskSecretValues, mergeValues, secretValues as valuesSecrets, valuesEqual, valuesFromSet, type Values } from '../helm/values.js';
export { chartDifferences, chartDigestDescription, isChartDir, localCrdFiles, mayRenderLists, readLocalChart, recordedChartDigest, type LocalChart } from '../helm/chart.js';
export { isKept, objectSummaries, parseRendered, removedObjects, withHelmOwnership } from '../helm/manifests.js';
export { readStoredRelease, storageKind, type StorageKind, type StoredChart } from '../helm/storage.js';
export { lastGoodRevision, PENDING_STATUSES, type ChartMeta, type ReleaseInfo } from '../helm/release.js';
export { runRelease, TaskFailure, type EngineArgs, type EngineOutcome, type EngineTarget, type ReleaseData } from '../helm/engine.js';
export { helmFor, helmForClient, releaseClient, releaseHelm } from '../helm/release-helm.js';
export { helmConnection, overriddenKubeconfig, withAuthEnv, type HelmAuthArgs, type HelmConnection } from '../helm/auth.js';
export { goTimeString, listReleaseWithHelm, listStoredRelease, LIST_STATES, notesText, statusMatches, type ListEntry, type ListedRelease, type ListState } from '../helm/list.js';
export { aliased, kcoreMessage, parseGoDuration, parseHelmValuesJson, parseRepositories, repositoryConfigPath, setValuesFlags, yamlDocuments, type RepoEntry, type SetValue } from '../helm/kcore.js';
export { HelmAuthProps, SetValuesProp } from '../helm/kcore-schema.js';
export { chartArgs, downloadFlags, withValuesFile, type ChartDownload, type HelmWrite } from '../helm/cli.js';
export { syncDir } from '../helm/sync-dir.js';

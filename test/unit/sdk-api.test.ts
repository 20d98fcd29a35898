// The public API of `kplay/sdk` (#35): what community modules compile against. The SDK is split
// into sections (src/sdk/{contract,k8s,helm,local,window}.ts, re-exported by src/sdk/index.ts);
// this test lists every name each section exports, so adding or removing one is a deliberate,
// reviewed change of this list — and a module compiled against an earlier SDK keeps loading.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as sdk from '../../src/sdk/index.js';
import { kplay, repoRoot } from '../helpers/cli.js';

/** Every exported name of each section; `type X` for type-only exports. Sorted, case-insensitive. */
const API: Record<string, string[]> = {
  contract: [
    'type AnyModule', 'type Args', 'checkArgs', 'checkArgumentSpec', 'type ClusterRef', 'decryptFileData', 'Default',
    'defineModule', 'type DiffEntry', 'DriftResult', 'errorMessage', 'type JsonSchema', 'loadYamlDoc', 'MASK',
    'type ModuleAdapters', 'type ModuleContext', 'type ModuleDefinition', 'type ModuleExample',
    'type ModuleLogger', 'type ModuleResult', 'type ModuleStatus', 'type ProcessOptions',
    'type ProcessResult', 'type ResultData', 'type RunInventory', 'runProcess', 'setting', 'type SettingName', 'sleep', 'spawnTethered', 'type Static',
    'StringEnum', 'type TDefault', 'tether', 'type TObject', 'type TSchema', 'Type', 'UndefinedInputError', 'unreachableAfter', 'UnreachableError',
    'withoutBom', 'type WrittenEntry', 'writtenNote', 'WrittenResult',
  ],
  k8s: [
    'ApplyConflictError', 'applyObjects', 'asList', 'authSecrets', 'buildDefinitions', 'conditionMet',
    'connect', 'type ConnectionPlan', 'definitionHash', 'type DefinitionParams', 'deleteObjects', 'diffEntry',
    'type DriftField', 'driftOf', 'type DriftRule', 'type EnvMap', 'findResource', 'groupVersion',
    'type HiddenField', 'hideFields', 'HTTP_REASON', 'type JsonPatchOp', 'type K8sAuth', 'type K8sAuthArgs',
    'k8sAuthProperties', 'type KcoreActionParams', 'kcoreDeleteOptions', 'kcoreDiff', 'type KcoreItem',
    'KcoreObjectFailure', 'kcoreReadiness', 'kcoreResource', 'kcoreValidate', 'type KcoreValidation', 'kcoreVerdict', 'type KcoreWaitOutcome', 'kcoreWaitProperties', 'KubeApiError',
    'type KubeClient', 'kubeClientFor', 'kubeFor', 'type KubeObject', 'labelOf', 'loadAllDocuments',
    'loadSources', 'maskObject', 'normalizeObject', 'type ObjectDrift', 'type ObjectPlan', 'objectRef',
    'type ObjectRef', 'type ObjectResult', 'OWNER_LABEL', 'parseDriftRules', 'parseManifests',
    'parseSelectors', 'performAction', 'planApply', 'planConnection', 'pruneObjects', 'recursiveDiff',
    'removeAdditions', 'removesOnlyAdditions', 'resolveAuth', 'resolveNamespace', 'secretValues',
    'selectorsMatch', 'taskClient', 'taskPython', 'toObjects', 'type WaitCondition', 'waitFor', 'waitLikeKcore',
    'type WaitMode', 'type WaitTarget',
  ],
  helm: [
    'aliased', 'cachedHelmVersion', 'canonicalValuesJson', 'changedValueKeys', 'chartArgs',
    'chartDifferences', 'chartDigestDescription', 'type ChartDownload', 'type ChartMeta', 'type ChartRef',
    'downloadFlags', 'type EngineArgs', 'type EngineOutcome', 'type EngineTarget', 'type FieldCheckFacts',
    'goTimeString', 'type HelmAuthArgs', 'HelmAuthProps', 'HelmCli', 'helmConnection', 'type HelmConnection',
    'HelmError', 'helmFor', 'helmForClient', 'type HelmVersion', 'type HelmWrite', 'isChartDir', 'isKept', 'isMap',
    'kcoreMessage', 'lastGoodRevision', 'LIST_STATES', 'type ListedRelease', 'type ListEntry',
    'listReleaseWithHelm', 'type ListState', 'listStoredRelease', 'type LocalChart', 'localCrdFiles',
    'maskSecretValues', 'mayRenderLists', 'mergeValues', 'notesText', 'objectSummaries',
    'overriddenKubeconfig', 'parseGoDuration', 'parseHelmValuesJson', 'parseRendered', 'parseRepositories',
    'PENDING_STATUSES', 'readLocalChart', 'readStoredRelease', 'recordedChartDigest', 'releaseClient',
    'type ReleaseData', 'releaseHelm', 'type ReleaseInfo', 'removedObjects', 'type RepoEntry', 'repositoryConfigPath',
    'runRelease', 'serverChecksFields', 'type SetValue', 'setValuesFlags', 'SetValuesProp', 'statusMatches',
    'storageKind', 'type StorageKind', 'type StoredChart', 'syncDir', 'TaskFailure', 'type Values',
    'valuesEqual', 'valuesFromSet', 'valuesSecrets', 'withAuthEnv', 'withHelmOwnership', 'withValuesFile',
    'yamlDocuments',
  ],
  local: [
    'activeConnections', 'applyAttrs', 'applyAttrsRecursive', 'type AttrChange', 'attrDiff',
    'type CommandArgs', 'type CommandData', 'commandResult', 'contentDiff', 'delta', 'digest',
    'expandUserVars', 'fileState', 'findSource', 'fnmatchRegex', 'gatherFacts', 'gidOf', 'globExists',
    'groupName', 'httpRequest', 'type HttpRequest', 'type HttpResponse', 'lexists', 'localPath',
    'type LocalWaitArgs', 'type LocalWaitData', 'maskUrl', 'type ModeArg', 'octal', 'parseFreeForm',
    'PathAttrsResult', 'pathInfo', 'type PathInfo', 'pyExpand', 'pyNow', 'pyRegex', 'type PyTime',
    'runCommand', 'secretHeaderValues', 'sha1File', 'shlexSplit', 'splitArgs', 'splitLines', 'uidOf',
    'userName', 'waitLocal', 'type WantedAttrs', 'wantedMode', 'type WriteData', 'writeDest',
    'type WriteSpec',
  ],
  window: [
    'analysisGate', 'asyncJob', 'type AsyncJob', 'type AsyncOutcome', 'cleanupAsyncJob', 'GATE_NAME',
    'gateProgress', 'type GateProgressMeasurement', 'gateRef', 'gateState', 'gateValueText',
    'type JournalState', 'type LbSwitchArgs', 'type ManagedRunOptions', 'type ManagedRunResult', 'openGate',
    'PROVIDERS', 'readJournal', 'runManaged',
  ],
};

/** The names a section file exports, read from its `export { … } from` lines. */
function exportsOf(section: string): string[] {
  const text = readFileSync(path.join(repoRoot, 'src/sdk', `${section}.ts`), 'utf8');
  const names: string[] = [];
  for (const m of text.matchAll(/^export (type )?\{([^}]*)\}/gm)) {
    for (const raw of (m[2] ?? '').split(',')) {
      const n = raw.trim();
      if (!n) continue;
      const typeOnly = Boolean(m[1]) || n.startsWith('type ');
      const parts = n.replace(/^type /, '').split(/ as /);
      names.push(`${typeOnly ? 'type ' : ''}${(parts[1] ?? parts[0] ?? '').trim()}`);
    }
  }
  for (const m of text.matchAll(/^export \* as (\w+)/gm)) names.push(m[1] ?? '');
  const key = (s: string): string => s.replace(/^type /, '');
  return names.sort((a, b) => key(a).localeCompare(key(b)));
}

describe('kplay/sdk API', () => {
  it('exports exactly the listed names in each section', () => {
    for (const section of Object.keys(API)) expect(exportsOf(section), `src/sdk/${section}.ts`).toEqual(API[section]);
  });

  it('re-exports every section from the entry point, and nothing else', () => {
    const text = readFileSync(path.join(repoRoot, 'src/sdk/index.ts'), 'utf8');
    const lines = text.split('\n').filter((l) => l.startsWith('export '));
    expect(lines).toEqual(Object.keys(API).map((s) => `export * from './${s}.js';`));
    const runtime = Object.values(API).flat().filter((n) => !n.startsWith('type ')).sort();
    expect(Object.keys(sdk).sort()).toEqual(runtime);
  });

  // In the built CLI (plain Node ESM, `kplay/sdk` resolved to the bundled SDK): a name the old
  // module imports and the SDK no longer exports is a link error there (vitest's transform would
  // only make it undefined).
  it('loads modules compiled against an earlier kplay/sdk', async () => {
    for (const name of ['compat_helm_release', 'compat_k8s_apply']) {
      const r = await kplay(['modules', '--module-path', path.join(repoRoot, 'test/fixtures/sdk-compat'), name]);
      expect(r.stderr, name).toBe('');
      expect(r.code, name).toBe(0);
      expect(r.stdout, name).toContain(`# \`${name}\``);
    }
  });
});

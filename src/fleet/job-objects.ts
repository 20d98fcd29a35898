/**
 * The Kubernetes objects of `kplay fleet job`: the bundle ConfigMap, the management cluster's
 * kubeconfig for the shards (in-cluster, the pod's ServiceAccount), the coordination objects created
 * up front, a ServiceAccount with a Role/RoleBinding limited to those objects by name, and the
 * Indexed Job whose pod `I` runs shard `I/N` of the window.
 *
 * Retries: a shard that failed (exit 1–5: bad input, failed clusters, refused) is never rerun
 * (`podFailurePolicy: FailIndex`); the fleet budget decided that. A pod that crashed or was
 * interrupted (node drained, evicted: exit 130 or a disruption) is rerun only with `--retries` and
 * a records volume (`--records-pvc`): the rerun pod finds the shard's journal there and carries
 * the run on with `--resume last` instead of starting the window over.
 */
import { stringify } from 'yaml';
import { EXIT, type ExitCode } from '../core/exit.js';
import { COMPLETION_INDEX_ENV, COORDINATION, FLEET_CONTEXT_ENV, FLEET_KUBECONFIG_ENV, FLEET_NAMESPACE_ENV, FLEET_RUN_FLAG, LABEL_COMPONENT, LABEL_MANAGED_BY, LABEL_RUN, SHARD_FLAG } from './job-contract.js';
import type { BundleData } from './job-configmap.js';

/** A Kubernetes object as plain JSON. */
export type K8sObject = { apiVersion: string; kind: string; metadata: Record<string, unknown> } & Record<string, unknown>;

/** Where things are in the pod. */
export const POD_PATHS = {
  bundle: '/kplay/bundle',
  records: '/kplay/records',
  kubeconfigs: '/kplay/kubeconfig',
  fleet: '/kplay/fleet',
  tmp: '/tmp',
  serviceAccount: '/var/run/secrets/kubernetes.io/serviceaccount',
} as const;

/** The context of {@link fleetKubeconfig}. */
export const IN_CLUSTER_CONTEXT = 'in-cluster';

/**
 * The management cluster's kubeconfig for the shards: the pod's own ServiceAccount (its token and
 * CA files, mounted by Kubernetes) against the in-cluster apiserver. It holds paths, no secret, and
 * is named explicitly (KPLAY_FLEET_KUBECONFIG) because KUBECONFIG is the target clusters'.
 */
export function fleetKubeconfig(namespace: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'management', cluster: { server: 'https://kubernetes.default.svc', 'certificate-authority': `${POD_PATHS.serviceAccount}/ca.crt` } }],
    users: [{ name: 'shard', user: { tokenFile: `${POD_PATHS.serviceAccount}/token` } }],
    contexts: [{ name: IN_CLUSTER_CONTEXT, context: { cluster: 'management', user: 'shard', namespace } }],
    'current-context': IN_CLUSTER_CONTEXT,
  });
}

/** A Secret holding a kubeconfig, mounted by reference. */
export interface KubeconfigSecret {
  name: string;
  /** The key holding the kubeconfig file (`KUBECONFIG` points at the first secret's key). */
  key: string;
}

/** Everything the objects are made from. */
export interface JobSpecInput {
  runId: string;
  namespace: string;
  image: string;
  shards: number;
  parallelism: number;
  /** Reruns of a crashed/interrupted shard (needs `recordsPvc`). */
  retries: number;
  recordsPvc?: string;
  kubeconfigSecrets: KubeconfigSecret[];
  /** Secrets whose keys become env vars of the pod (`envFrom`), for `lookup('env', …)`. */
  envSecrets: string[];
  /** Arguments after `kplay run` (playbook, -i, pass-through flags), shard and fleet flags excluded. */
  runArgs: string[];
  bundle: BundleData;
  /** `activeDeadlineSeconds` of the Job, when given. */
  deadlineSeconds?: number;
  /** The kplay version, for labels. */
  version: string;
}

/** The name of every generated object of a run (the coordination objects have theirs). */
export function baseName(runId: string): string {
  return `kplay-${runId}`;
}

/**
 * The pod's shell wrapper: resume from the shard's journal when a previous pod of this index left
 * one (only possible with a records volume), else start; `exec` so signals reach kplay.
 */
export const WRAPPER = [
  'set -eu',
  `if ls "$KPLAY_RECORD_DIR"/*.journal >/dev/null 2>&1; then`,
  '  echo "kplay: resuming shard $JOB_COMPLETION_INDEX from its journal" >&2',
  '  exec kplay "$@" --resume last',
  'fi',
  'exec kplay "$@"',
].join('\n');

/** Exit codes that fail a shard for good (bad input, failed clusters, drift, unreachable, refused). */
const FINAL_EXIT_CODES: ExitCode[] = [EXIT.usage, EXIT.failed, EXIT.drift, EXIT.unreachable, EXIT.refused];

/** Build the objects, in the order to apply them. */
export function jobObjects(s: JobSpecInput): K8sObject[] {
  const name = baseName(s.runId);
  const labels = { [LABEL_RUN]: s.runId, [LABEL_MANAGED_BY]: 'kplay', 'app.kubernetes.io/name': 'kplay', 'app.kubernetes.io/version': s.version };
  const meta = (component: string, objName = name): Record<string, unknown> => ({ name: objName, namespace: s.namespace, labels: { ...labels, [LABEL_COMPONENT]: component } });

  const configMap: K8sObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { ...meta('bundle', `${name}-bundle`), annotations: { 'kplay.dev/bundle-bytes': String(s.bundle.bytes), 'kplay.dev/bundle-files': String(s.bundle.items.length) } },
    immutable: true,
    ...(Object.keys(s.bundle.data).length ? { data: s.bundle.data } : {}),
    ...(Object.keys(s.bundle.binaryData).length ? { binaryData: s.bundle.binaryData } : {}),
  };
  const fleet: K8sObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('fleet-kubeconfig', `${name}-fleet`), immutable: true, data: { kubeconfig: fleetKubeconfig(s.namespace) } };
  const coordination: K8sObject[] = COORDINATION.map((g) => ({ apiVersion: g.apiVersion, kind: g.kind, metadata: meta('coordination', g.name(s.runId)) }));
  const serviceAccount: K8sObject = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('shard'), automountServiceAccountToken: true };
  const role: K8sObject = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: meta('shard'),
    rules: COORDINATION.map((g) => ({ apiGroups: [g.apiGroup], resources: [g.resource], resourceNames: [g.name(s.runId)], verbs: g.verbs })),
  };
  const roleBinding: K8sObject = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: meta('shard'),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name, namespace: s.namespace }],
  };
  return [configMap, fleet, ...coordination, serviceAccount, role, roleBinding, job(s, name, meta('shard'), labels)];
}

function job(s: JobSpecInput, name: string, metadata: Record<string, unknown>, labels: Record<string, string>): K8sObject {
  const volumes: Record<string, unknown>[] = [
    { name: 'bundle', configMap: { name: `${name}-bundle`, items: s.bundle.items, defaultMode: 0o444 } },
    s.recordsPvc ? { name: 'records', persistentVolumeClaim: { claimName: s.recordsPvc } } : { name: 'records', emptyDir: {} },
    { name: 'tmp', emptyDir: {} },
    { name: 'fleet', configMap: { name: `${name}-fleet`, defaultMode: 0o444 } },
    ...s.kubeconfigSecrets.map((k, i) => ({ name: `kubeconfig-${i}`, secret: { secretName: k.name, defaultMode: 0o440 } })),
  ];
  const mounts: Record<string, unknown>[] = [
    { name: 'bundle', mountPath: POD_PATHS.bundle, readOnly: true },
    // each shard of each fleet run its own directory on a shared volume: its journal is what a rerun
    // resumes from (and only that shard's of that run: the claim may outlive many windows)
    { name: 'records', mountPath: POD_PATHS.records, subPathExpr: `${s.runId}/shard-$(${COMPLETION_INDEX_ENV})` },
    { name: 'tmp', mountPath: POD_PATHS.tmp },
    { name: 'fleet', mountPath: POD_PATHS.fleet, readOnly: true },
    ...s.kubeconfigSecrets.map((k, i) => ({ name: `kubeconfig-${i}`, mountPath: `${POD_PATHS.kubeconfigs}/${k.name}`, readOnly: true })),
  ];
  const first = s.kubeconfigSecrets[0];
  const env: Record<string, unknown>[] = [
    { name: FLEET_NAMESPACE_ENV, valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    { name: FLEET_KUBECONFIG_ENV, value: `${POD_PATHS.fleet}/kubeconfig` },
    { name: FLEET_CONTEXT_ENV, value: IN_CLUSTER_CONTEXT },
    { name: 'KPLAY_RECORD_DIR', value: POD_PATHS.records },
    { name: 'HOME', value: POD_PATHS.tmp },
    { name: 'NO_COLOR', value: '1' },
    ...(first ? [{ name: 'KUBECONFIG', value: `${POD_PATHS.kubeconfigs}/${first.name}/${first.key}` }] : []),
  ];
  const args = ['run', ...s.runArgs, SHARD_FLAG, `$(${COMPLETION_INDEX_ENV})/${s.shards}`, FLEET_RUN_FLAG, s.runId, '--progress', 'plain'];
  const rules: Record<string, unknown>[] = [
    { action: 'FailIndex', onExitCodes: { containerName: 'kplay', operator: 'In', values: FINAL_EXIT_CODES } },
    // evicted or preempted: rerun (it resumes) only when a journal survives the pod
    { action: s.recordsPvc ? 'Ignore' : 'FailIndex', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
  ];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { ...metadata, annotations: { 'kplay.dev/shards': String(s.shards) } },
    spec: {
      completionMode: 'Indexed',
      completions: s.shards,
      parallelism: s.parallelism,
      backoffLimitPerIndex: s.retries,
      podFailurePolicy: { rules },
      ...(s.deadlineSeconds !== undefined ? { activeDeadlineSeconds: s.deadlineSeconds } : {}),
      template: {
        metadata: { labels: { ...labels, [LABEL_COMPONENT]: 'shard' } },
        spec: {
          serviceAccountName: name,
          restartPolicy: 'Never',
          securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'kplay',
              image: s.image,
              imagePullPolicy: 'IfNotPresent',
              workingDir: POD_PATHS.bundle,
              command: ['/bin/sh', '-c', WRAPPER, 'kplay-shard'],
              args,
              env,
              ...(s.envSecrets.length ? { envFrom: s.envSecrets.map((n) => ({ secretRef: { name: n } })) } : {}),
              volumeMounts: mounts,
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
            },
          ],
          volumes,
        },
      },
    },
  };
}

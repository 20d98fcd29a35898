/**
 * API discovery: which resources exist, their plural names, scope and verbs. Uses aggregated
 * discovery (`apidiscovery.k8s.io/v2`, two requests: `/api` and `/apis`) and falls back to the
 * classic per-group-version discovery on servers that do not support it.
 */
import type { KubeObject, ResourceInfo } from './types.js';
import { isRecord } from '../core/shape.js';

/** Accept header for aggregated discovery (v2, with v2beta1 fallback). */
export const AGGREGATED_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

/** Discovery result: kind lookup by `apiVersion` + `kind`. */
export class DiscoveryIndex {
  private readonly byGvk = new Map<string, ResourceInfo>();
  /** Preferred version per group (for messages). */
  readonly groups = new Map<string, string[]>();

  /** Add a resource. */
  add(r: ResourceInfo): void {
    const key = gvkKey(apiVersionOf(r.group, r.version), r.kind);
    // Prefer the main resource over subresources or duplicates.
    if (!this.byGvk.has(key)) this.byGvk.set(key, r);
    const versions = this.groups.get(r.group) ?? [];
    if (!versions.includes(r.version)) versions.push(r.version);
    this.groups.set(r.group, versions);
  }

  /** Look a kind up. */
  get(apiVersion: string, kind: string): ResourceInfo | undefined {
    return this.byGvk.get(gvkKey(apiVersion, kind));
  }

  /** Number of kinds. */
  get size(): number {
    return this.byGvk.size;
  }
}

/** `group/version`, or `version` for the core group. */
export function apiVersionOf(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

/** Split an apiVersion into group and version. */
export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.lastIndexOf('/');
  return i < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

function gvkKey(apiVersion: string, kind: string): string {
  return `${apiVersion}\u0000${kind}`;
}

const strOf = (v: unknown): string => (typeof v === 'string' ? v : '');

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/**
 * Kinds every Kubernetes release serves from the minor version given (`0`: every release kplay
 * supports; GA since 1.16 or earlier, never removed), at these versions and scopes: looked up
 * without discovery, so a run that only touches them (a helm release of Deployments, Services,
 * ConfigMaps, RBAC, an IngressClass and a webhook; the run records) reads none. The later ones
 * only when the server's version is known and at least that minor.
 */
const CORE_KINDS: ReadonlyMap<string, ResourceInfo & { since: number }> = new Map(
  (
    [
      ['', 'v1', 'Namespace', 'namespaces', false, 0],
      ['', 'v1', 'ConfigMap', 'configmaps', true, 0],
      ['', 'v1', 'Secret', 'secrets', true, 0],
      ['', 'v1', 'Service', 'services', true, 0],
      ['', 'v1', 'ServiceAccount', 'serviceaccounts', true, 0],
      ['', 'v1', 'Pod', 'pods', true, 0],
      ['', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', true, 0],
      ['', 'v1', 'PersistentVolume', 'persistentvolumes', false, 0],
      ['', 'v1', 'Endpoints', 'endpoints', true, 0],
      ['', 'v1', 'Event', 'events', true, 0],
      ['', 'v1', 'LimitRange', 'limitranges', true, 0],
      ['', 'v1', 'ResourceQuota', 'resourcequotas', true, 0],
      ['apps', 'v1', 'Deployment', 'deployments', true, 0],
      ['apps', 'v1', 'StatefulSet', 'statefulsets', true, 0],
      ['apps', 'v1', 'DaemonSet', 'daemonsets', true, 0],
      ['apps', 'v1', 'ReplicaSet', 'replicasets', true, 0],
      ['batch', 'v1', 'Job', 'jobs', true, 0],
      ['rbac.authorization.k8s.io', 'v1', 'Role', 'roles', true, 0],
      ['rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings', true, 0],
      ['rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false, 0],
      ['rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', false, 0],
      ['coordination.k8s.io', 'v1', 'Lease', 'leases', true, 0],
      ['apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', false, 0],
      ['admissionregistration.k8s.io', 'v1', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', false, 0],
      ['admissionregistration.k8s.io', 'v1', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', false, 0],
      ['apiregistration.k8s.io', 'v1', 'APIService', 'apiservices', false, 0],
      ['networking.k8s.io', 'v1', 'NetworkPolicy', 'networkpolicies', true, 0],
      ['scheduling.k8s.io', 'v1', 'PriorityClass', 'priorityclasses', false, 0],
      ['storage.k8s.io', 'v1', 'StorageClass', 'storageclasses', false, 0],
      ['autoscaling', 'v1', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', true, 0],
      ['networking.k8s.io', 'v1', 'Ingress', 'ingresses', true, 19],
      ['networking.k8s.io', 'v1', 'IngressClass', 'ingressclasses', false, 19],
      ['policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true, 21],
      ['batch', 'v1', 'CronJob', 'cronjobs', true, 21],
      ['discovery.k8s.io', 'v1', 'EndpointSlice', 'endpointslices', true, 21],
      ['autoscaling', 'v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', true, 23],
    ] as const
  ).map(([group, version, kind, resource, namespaced, since]) => [gvkKey(apiVersionOf(group, version), kind), { group, version, kind, resource, namespaced, since, verbs: kind === 'Namespace' ? ALL_VERBS.filter((v) => v !== 'deletecollection') : ALL_VERBS }]),
);

/** The minor version of a server's `gitVersion` (`v1.34.4`, `v1.29.3-eks-a5565ad` → 34, 29), or undefined. */
export function serverMinor(gitVersion: string | undefined): number | undefined {
  const m = /^v?1\.(\d+)/.exec(gitVersion ?? '');
  return m ? Number(m[1]) : undefined;
}

/**
 * The kinds a CRD serves: every served version (a version with `served: false` never appears in
 * discovery), under its accepted names when the apiserver has set them (an Established CRD),
 * else those it asks for (also when a manifest carries an empty `status.acceptedNames`). Empty for a shape it cannot read; `resource` is `''` when the CRD names
 * no plural (the apiserver refuses such a CRD).
 */
export function crdServedKinds(crd: KubeObject): ResourceInfo[] {
  const spec = isRecord(crd.spec) ? crd.spec : {};
  const status = isRecord(crd.status) ? crd.status : {};
  // A manifest may carry the status stub older controller-gen releases wrote (`acceptedNames:
  // {kind: '', plural: ''}`): names the apiserver has not accepted are no names.
  const accepted = isRecord(status.acceptedNames) && strOf(status.acceptedNames.kind) ? status.acceptedNames : undefined;
  const names = accepted ?? (isRecord(spec.names) ? spec.names : {});
  const group = strOf(spec.group);
  const kind = strOf(names.kind);
  const resource = strOf(names.plural);
  if (!group || !kind) return [];
  return (Array.isArray(spec.versions) ? spec.versions : [])
    .filter((v): v is Record<string, unknown> & { name: string } => isRecord(v) && typeof v.name === 'string' && v.served !== false)
    .map((v) => ({ group, version: v.name, kind, resource, namespaced: spec.scope !== 'Cluster', verbs: ALL_VERBS }));
}

/** A kind of {@link CORE_KINDS} the server of `gitVersion` serves (unknown version: the kinds every release serves), or undefined. */
export function coreKind(apiVersion: string, kind: string, gitVersion?: string): ResourceInfo | undefined {
  const k = CORE_KINDS.get(gvkKey(apiVersion, kind));
  if (!k) return undefined;
  if (k.since > 0 && (serverMinor(gitVersion) ?? 0) < k.since) return undefined;
  const { since: _since, ...info } = k;
  return info;
}

/** True when a parsed body is an `APIGroupDiscoveryList`. */
export function isAggregated(body: unknown): boolean {
  return isRecord(body) && body.kind === 'APIGroupDiscoveryList' && Array.isArray(body.items);
}

/** Add every resource of an aggregated discovery document to `index`. */
export function parseAggregated(body: unknown, index: DiscoveryIndex): void {
  if (!isRecord(body) || !Array.isArray(body.items)) return;
  for (const g of body.items) {
    if (!isRecord(g)) continue;
    const group = isRecord(g.metadata) ? strOf(g.metadata.name) : '';
    for (const v of Array.isArray(g.versions) ? g.versions : []) {
      if (!isRecord(v)) continue;
      const version = strOf(v.version);
      for (const r of Array.isArray(v.resources) ? v.resources : []) {
        if (!isRecord(r)) continue;
        const rk = isRecord(r.responseKind) ? r.responseKind : {};
        const kind = strOf(rk.kind);
        if (!kind) continue;
        index.add({
          group,
          version,
          kind,
          resource: strOf(r.resource),
          namespaced: r.scope === 'Namespaced',
          verbs: Array.isArray(r.verbs) ? r.verbs.filter((x): x is string => typeof x === 'string') : [],
        });
      }
    }
  }
}

/** Add the resources of a classic `APIResourceList` (one group-version) to `index`. */
export function parseResourceList(body: unknown, index: DiscoveryIndex): void {
  if (!isRecord(body)) return;
  const { group, version } = splitApiVersion(strOf(body.groupVersion));
  for (const r of Array.isArray(body.resources) ? body.resources : []) {
    if (!isRecord(r)) continue;
    const name = strOf(r.name);
    if (!name || name.includes('/')) continue; // subresource
    index.add({
      group,
      version,
      kind: strOf(r.kind),
      resource: name,
      namespaced: r.namespaced === true,
      verbs: Array.isArray(r.verbs) ? r.verbs.filter((x): x is string => typeof x === 'string') : [],
    });
  }
}

/** Group versions listed by a classic `/api` (APIVersions) or `/apis` (APIGroupList) document. */
export function groupVersionsOf(body: unknown): string[] {
  if (!isRecord(body)) return [];
  if (Array.isArray(body.versions) && body.kind === 'APIVersions') return body.versions.filter((x): x is string => typeof x === 'string');
  const out: string[] = [];
  for (const g of Array.isArray(body.groups) ? body.groups : []) {
    if (!isRecord(g)) continue;
    for (const v of Array.isArray(g.versions) ? g.versions : []) if (isRecord(v) && typeof v.groupVersion === 'string') out.push(v.groupVersion);
  }
  return out;
}

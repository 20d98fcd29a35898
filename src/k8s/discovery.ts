/**
 * API discovery: which resources exist, their plural names, scope and verbs. Uses aggregated
 * discovery (`apidiscovery.k8s.io/v2`, two requests: `/api` and `/apis`) and falls back to the
 * classic per-group-version discovery on servers that do not support it.
 */
import type { KubeObject, ResourceInfo } from './types.js';
import { isRecord as isObj } from '../load/shape.js';

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
 * Kinds every Kubernetes release kplay supports serves, at these versions and scopes (GA since
 * 1.16 or earlier, never removed): looked up without discovery, so a run that only touches them
 * (a helm release of Deployments, Services and ConfigMaps; the run records) reads none.
 */
const CORE_KINDS: ReadonlyMap<string, ResourceInfo> = new Map(
  (
    [
      ['', 'v1', 'Namespace', 'namespaces', false],
      ['', 'v1', 'ConfigMap', 'configmaps', true],
      ['', 'v1', 'Secret', 'secrets', true],
      ['', 'v1', 'Service', 'services', true],
      ['', 'v1', 'ServiceAccount', 'serviceaccounts', true],
      ['', 'v1', 'Pod', 'pods', true],
      ['', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', true],
      ['', 'v1', 'Event', 'events', true],
      ['', 'v1', 'LimitRange', 'limitranges', true],
      ['', 'v1', 'ResourceQuota', 'resourcequotas', true],
      ['apps', 'v1', 'Deployment', 'deployments', true],
      ['apps', 'v1', 'StatefulSet', 'statefulsets', true],
      ['apps', 'v1', 'DaemonSet', 'daemonsets', true],
      ['apps', 'v1', 'ReplicaSet', 'replicasets', true],
      ['batch', 'v1', 'Job', 'jobs', true],
      ['rbac.authorization.k8s.io', 'v1', 'Role', 'roles', true],
      ['rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings', true],
      ['rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false],
      ['rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', false],
      ['coordination.k8s.io', 'v1', 'Lease', 'leases', true],
      ['apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', false],
    ] as const
  ).map(([group, version, kind, resource, namespaced]) => [gvkKey(apiVersionOf(group, version), kind), { group, version, kind, resource, namespaced, verbs: kind === 'Namespace' ? ALL_VERBS.filter((v) => v !== 'deletecollection') : ALL_VERBS }]),
);

/**
 * The kinds a CRD serves: every served version (a version with `served: false` never appears in
 * discovery), under its accepted names when the apiserver has set them (an Established CRD),
 * else those it asks for (also when a manifest carries an empty `status.acceptedNames`). Empty for a shape it cannot read; `resource` is `''` when the CRD names
 * no plural (the apiserver refuses such a CRD).
 */
export function crdServedKinds(crd: KubeObject): ResourceInfo[] {
  const spec = isObj(crd.spec) ? crd.spec : {};
  const status = isObj(crd.status) ? crd.status : {};
  // A manifest may carry the status stub older controller-gen releases wrote (`acceptedNames:
  // {kind: '', plural: ''}`): names the apiserver has not accepted are no names.
  const accepted = isObj(status.acceptedNames) && strOf(status.acceptedNames.kind) ? status.acceptedNames : undefined;
  const names = accepted ?? (isObj(spec.names) ? spec.names : {});
  const group = strOf(spec.group);
  const kind = strOf(names.kind);
  const resource = strOf(names.plural);
  if (!group || !kind) return [];
  return (Array.isArray(spec.versions) ? spec.versions : [])
    .filter((v): v is Record<string, unknown> & { name: string } => isObj(v) && typeof v.name === 'string' && v.served !== false)
    .map((v) => ({ group, version: v.name, kind, resource, namespaced: spec.scope !== 'Cluster', verbs: ALL_VERBS }));
}

/** A kind of {@link CORE_KINDS}, or undefined. */
export function coreKind(apiVersion: string, kind: string): ResourceInfo | undefined {
  return CORE_KINDS.get(gvkKey(apiVersion, kind));
}

/** True when a parsed body is an `APIGroupDiscoveryList`. */
export function isAggregated(body: unknown): boolean {
  return isObj(body) && body.kind === 'APIGroupDiscoveryList' && Array.isArray(body.items);
}

/** Add every resource of an aggregated discovery document to `index`. */
export function parseAggregated(body: unknown, index: DiscoveryIndex): void {
  if (!isObj(body) || !Array.isArray(body.items)) return;
  for (const g of body.items) {
    if (!isObj(g)) continue;
    const group = isObj(g.metadata) ? strOf(g.metadata.name) : '';
    for (const v of Array.isArray(g.versions) ? g.versions : []) {
      if (!isObj(v)) continue;
      const version = strOf(v.version);
      for (const r of Array.isArray(v.resources) ? v.resources : []) {
        if (!isObj(r)) continue;
        const rk = isObj(r.responseKind) ? r.responseKind : {};
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
  if (!isObj(body)) return;
  const { group, version } = splitApiVersion(strOf(body.groupVersion));
  for (const r of Array.isArray(body.resources) ? body.resources : []) {
    if (!isObj(r)) continue;
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
  if (!isObj(body)) return [];
  if (Array.isArray(body.versions) && body.kind === 'APIVersions') return body.versions.filter((x): x is string => typeof x === 'string');
  const out: string[] = [];
  for (const g of Array.isArray(body.groups) ? body.groups : []) {
    if (!isObj(g)) continue;
    for (const v of Array.isArray(g.versions) ? g.versions : []) if (isObj(v) && typeof v.groupVersion === 'string') out.push(v.groupVersion);
  }
  return out;
}

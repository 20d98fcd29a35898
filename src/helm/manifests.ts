/** Rendered chart manifests (`helm template`, a release's `manifest`) as Kubernetes objects. */
import type { KubeObject } from '../k8s/types.js';
import { parseManifests } from '../k8s/manifests.js';
import { isMap } from './values.js';

/** Annotation that makes an object a helm hook (tests included); hooks are not part of the release's live state. */
export const HOOK_ANNOTATION = 'helm.sh/hook';

/** True for helm hooks and tests. */
export function isHook(o: KubeObject): boolean {
  const ann: unknown = o.metadata.annotations;
  return isMap(ann) && typeof ann[HOOK_ANNOTATION] === 'string';
}

/** True for objects with `helm.sh/resource-policy: keep` (helm never deletes them). */
export function isKept(o: KubeObject): boolean {
  const ann: unknown = o.metadata.annotations;
  return isMap(ann) && ann['helm.sh/resource-policy'] === 'keep';
}

/**
 * Parse multi-document YAML output of helm into objects. Empty and comment-only documents are
 * skipped, `kind: …List` is flattened, null fields are dropped; a document that is not a valid
 * object is an error naming `what` (the chart or release), the template file (helm's `# Source:`
 * comment) and the object.
 * @param withHooks keep hook/test objects (default: drop them).
 */
export function parseRendered(text: string, withHooks = false, what = 'rendered manifest'): KubeObject[] {
  return parseManifests(text, what).filter((o) => withHooks || !isHook(o));
}

/**
 * The object as helm applies it: helm adds the ownership metadata (`meta.helm.sh/release-name`,
 * `meta.helm.sh/release-namespace` annotations, `app.kubernetes.io/managed-by: Helm` label) to
 * every resource of a release. Without them a dry-run would "remove" them from the live object.
 */
export function withHelmOwnership(o: KubeObject, release: string, namespace: string): KubeObject {
  return {
    ...o,
    metadata: {
      ...o.metadata,
      labels: { ...(o.metadata.labels ?? {}), 'app.kubernetes.io/managed-by': 'Helm' },
      annotations: { ...(o.metadata.annotations ?? {}), 'meta.helm.sh/release-name': release, 'meta.helm.sh/release-namespace': namespace },
    },
  };
}

/** Identity of an object across renders: `apps/v1 Deployment ns/name` (namespace as written, or `defaultNs`). */
export function objectIdentity(o: KubeObject, defaultNs: string): string {
  const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
  return `${group}/${o.kind}/${o.metadata.namespace ?? defaultNs}/${o.metadata.name ?? ''}`;
}

/** Objects of `before` that `after` no longer has (an upgrade deletes them). */
export function removedObjects(before: KubeObject[], after: KubeObject[], defaultNs: string): KubeObject[] {
  const keep = new Set(after.map((o) => objectIdentity(o, defaultNs)));
  return before.filter((o) => !keep.has(objectIdentity(o, defaultNs)));
}

/** `kind`/`name`/`namespace` (as rendered) of objects, for registered results. */
export function objectSummaries(objs: KubeObject[]): { kind: string; name: string; namespace?: string }[] {
  return objs.map((o) => ({ kind: o.kind, name: o.metadata.name ?? '', ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) }));
}

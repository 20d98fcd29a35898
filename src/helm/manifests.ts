/** Rendered chart manifests (`helm template`, a release's `manifest`) as Kubernetes objects. */
import YAML from 'yaml';
import type { KubeObject } from '../k8s/types.js';
import { isMap } from './values.js';

/** Annotation that makes an object a helm hook (tests included); hooks are not part of the release's live state. */
export const HOOK_ANNOTATION = 'helm.sh/hook';

/** True for helm hooks and tests. */
export function isHook(o: KubeObject): boolean {
  const ann = o.metadata.annotations;
  return ann !== undefined && typeof ann[HOOK_ANNOTATION] === 'string';
}

/**
 * Parse multi-document YAML output of helm into objects. Empty documents are skipped, `kind: …List`
 * is flattened; objects without `apiVersion`, `kind` or `metadata.name` are rejected with an error.
 * @param withHooks keep hook/test objects (default: drop them).
 */
export function parseRendered(text: string, withHooks = false): KubeObject[] {
  const out: KubeObject[] = [];
  const docs = YAML.parseAllDocuments(text);
  docs.forEach((d, i) => {
    if (d.errors.length) throw new Error(`rendered manifest document ${i + 1}: ${d.errors[0].message}`);
    const v: unknown = d.toJS({ maxAliasCount: 100 });
    if (v === null || v === undefined) return;
    for (const o of flatten(v, i + 1)) if (withHooks || !isHook(o)) out.push(o);
  });
  return out;
}

function flatten(v: unknown, doc: number): KubeObject[] {
  if (!isMap(v)) throw new Error(`rendered manifest document ${doc}: not a Kubernetes object`);
  if (typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items)) return v.items.flatMap((x) => flatten(x, doc));
  const md = v.metadata;
  if (typeof v.apiVersion !== 'string' || typeof v.kind !== 'string' || !isMap(md) || typeof md.name !== 'string' || md.name === '') {
    throw new Error(`rendered manifest document ${doc}: an object needs apiVersion, kind and metadata.name`);
  }
  return [v as KubeObject];
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

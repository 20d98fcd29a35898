// kubernetes.core's kind lookup (`K8SClient.resource`): the `kind` a task gives may be the kind
// (`Namespace`), the plural resource name (`namespaces`), the singular name (`namespace`) or the
// short name (`ns`, `cm`, `deploy`), matched exactly (case-sensitively), tried in that order; for
// api_version `v1` (the modules' default) in the core group first, then in every group's `v1`, where
// only the kind finds another group's resource (`kind: Deployment` does, `kind: deploy` does not).
import { KubeApiError } from './errors.js';
import type { KubeClient, ResourceInfo } from './types.js';
import { isRecord } from '../core/shape.js';

/** One resource of a group version's discovery list (subresources left out). */
interface Served {
  /** The group version serving it (`v1`, `apps/v1`). */
  gv: string;
  kind: string;
  name: string;
  /** discovery's `singularName`, or the name less its last letter when empty (as the Python client does). */
  singular: string;
  shortNames: unknown;
  /** the `<Kind>List` the Python client serves alongside each resource */
  list?: boolean;
}

/** The ways of naming a kind kubernetes.core tries, in its order. */
const ATTEMPTS: ((s: Served, asked: string) => boolean)[] = [
  (s, asked) => s.kind === asked,
  (s, asked) => s.name === asked,
  (s, asked) => s.singular === asked,
  // the Python client compares the whole list: a resource with several short names (crd, crds) is not found by one
  (s, asked) => Array.isArray(s.shortNames) && s.shortNames.length === 1 && s.shortNames[0] === asked,
];

/**
 * Discovery of a kind (kubernetes.core's `find_resource`); `undefined` when the cluster does not
 * serve it, or serves it in several groups (the `Failed to find exact match` kubernetes.core reports).
 * @example await findResource(client, 'v1', 'cm') // the core group's ConfigMap
 */
export async function findResource(client: KubeClient, apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
  // the kind itself in the group version asked: the common case, answered without listing discovery
  const direct = await discovered(client, apiVersion, kind);
  if (direct) return direct;
  const steps: (() => Promise<string[]>)[] = apiVersion === 'v1' ? [() => Promise.resolve(['v1']), () => v1GroupVersions(client)] : [() => Promise.resolve([apiVersion])];
  for (const [i, step] of steps.entries()) {
    const served = (await Promise.all((await step()).map((gv) => servedIn(client, gv)))).flat();
    for (const [j, matches] of ATTEMPTS.entries()) {
      // the Python client also lists each resource's `<Kind>List`, found by the resource's names too
      let found = served.filter((s) => matches(s, kind)).flatMap((s) => (j === 0 ? [s] : [s, { ...s, list: true }]));
      // several matches: those of exactly the asked group version, then those that are not lists
      // (kubernetes.core's `get`: so `v1` finds another group's resource by its kind only)
      if (found.length > 1) found = found.filter((s) => s.gv === apiVersion);
      if (found.length > 1) found = found.filter((s) => !s.list);
      if (found.length === 1 && found[0]) return discovered(client, found[0].gv, found[0].kind);
      // kubernetes.core gives up when the short names are ambiguous, and only a miss in the core group goes on
      if (j === ATTEMPTS.length - 1 && found.length > 1) return undefined;
    }
    if (i === steps.length - 1) return undefined;
  }
  return undefined;
}

/** The core `v1` and every group's `v1`, as `/apis` lists them. */
async function v1GroupVersions(client: KubeClient): Promise<string[]> {
  const apis = await client.getPath('/apis');
  const groups = isRecord(apis) && Array.isArray(apis.groups) ? apis.groups : [];
  const named = groups.filter(isRecord).filter((g) => typeof g.name === 'string' && Array.isArray(g.versions) && g.versions.some((v) => isRecord(v) && v.version === 'v1'));
  return ['v1', ...named.map((g) => `${String(g.name)}/v1`)];
}

/** What one group version serves; nothing when the cluster does not serve that group version. */
async function servedIn(client: KubeClient, gv: string): Promise<Served[]> {
  let body: unknown;
  try {
    body = await client.getPath(gv.includes('/') ? `/apis/${gv}` : `/api/${gv}`);
  } catch (e) {
    if (e instanceof KubeApiError && (e.status === 404 || e.status === 503)) return [];
    throw e;
  }
  const resources = isRecord(body) && Array.isArray(body.resources) ? body.resources.filter(isRecord) : [];
  return resources.flatMap((r) => {
    const name = typeof r.name === 'string' ? r.name : '';
    if (!name || name.includes('/') || typeof r.kind !== 'string') return [];
    const singular = typeof r.singularName === 'string' && r.singularName ? r.singularName : name.slice(0, -1);
    return [{ gv, kind: r.kind, name, singular, shortNames: r.shortNames }];
  });
}

async function discovered(client: KubeClient, apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
  try {
    return await client.resource(apiVersion, kind);
  } catch (e) {
    if (e instanceof KubeApiError && e.verb === 'DISCOVER') return undefined;
    throw e;
  }
}

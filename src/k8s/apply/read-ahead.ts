/**
 * Reads wait for no write: the live state of a later group's objects, read at the start of an
 * apply alongside the first groups' reads, so that group's turn starts with its writes.
 */
import { fetchLive, liveKey, resolveNamespace } from '../object-plan.js';
import type { KubeClient, KubeObject } from '../types.js';
import type { ApplySetOptions } from './types.js';

/**
 * The live state of `objects`, read before their group's turn, alongside the apply's first reads
 * (see `applyObjects`): objects in a namespace of `declared` are left out (the apply may create it,
 * and nothing can exist in a new namespace). Never rejects: on any error the group reads for
 * itself, and reports the error in its turn.
 */
export async function readAhead(client: KubeClient, objects: KubeObject[], declared: ReadonlySet<string>, opts: ApplySetOptions): Promise<Map<string, KubeObject | undefined>> {
  try {
    const resolved = await Promise.all(objects.map((o) => resolveNamespace(client, o, opts.defaultNamespace)));
    const readable = resolved.filter((o) => o.metadata.namespace === undefined || !declared.has(o.metadata.namespace));
    return readable.length ? await fetchLive(client, readable, { signal: opts.signal }) : new Map();
  } catch {
    return new Map();
  }
}

/**
 * The live state of custom resources (see {@link readAhead}), read as soon as the LIST of the
 * set's CRDs (`liveCrds`, keyed by {@link liveKey}) says which exist: objects of a CRD of the set
 * that does not exist yet cannot exist either (a cold apply reads nothing here, not even
 * discovery); the others — of CRDs the cluster has, or of kinds no CRD of the set defines — are
 * read alongside the planning of the CRDs instead of after it. Objects of a kind the cluster does
 * not serve are left to their turn (which reports it). Never rejects.
 */
export async function readAheadCustom(
  client: KubeClient,
  objects: KubeObject[],
  crdOf: (o: KubeObject) => string | undefined,
  liveCrds: Promise<ReadonlyMap<string, KubeObject | undefined>>,
  declared: ReadonlySet<string>,
  opts: ApplySetOptions,
): Promise<Map<string, KubeObject | undefined>> {
  if (!objects.length) return new Map();
  const lives = await liveCrds;
  const exists = (crd: string): boolean => lives.get(liveKey({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: crd })) !== undefined;
  const candidates = objects.filter((o) => {
    const crd = crdOf(o);
    return crd === undefined || exists(crd);
  });
  if (!candidates.length) return new Map();
  const served = await Promise.all(candidates.map((o) => client.resource(o.apiVersion, o.kind).then(() => o, () => undefined)));
  return readAhead(client, served.filter((o): o is KubeObject => o !== undefined), declared, opts);
}


/**
 * Reading the live state of a set's CRDs without reading the cluster's: a LIST of CRDs answers
 * every CRD of the cluster with its whole OpenAPI schema (megabytes with a few dozen, and it grows
 * with the cluster, not with the set), so the set's CRDs are read with a GET each, and CRDs are
 * listed metadata-only alongside, for the resourceVersion the wait for their establishment
 * starts from.
 */
import pLimit from 'p-limit';
import { KubeApiError } from '../errors.js';
import { liveKey, objectRef } from '../object-plan.js';
import type { KubeClient, KubeObject, ListResult, WatchOptions } from '../types.js';

const CRD_API = 'apiextensions.k8s.io/v1';
const CRD_KIND = 'CustomResourceDefinition';

/** GETs of CRDs at a time (as `fetchLive` reads). */
const GET_CONCURRENCY = 16;

/** Whether an object is a CRD of `apiextensions.k8s.io/v1` (the version read with {@link readCrds}). */
export function isCrdV1(o: KubeObject): boolean {
  return o.apiVersion === CRD_API && o.kind === CRD_KIND;
}

/** The live CRDs of a set and the LIST the CRD watch can start from (see `watchEstablished`). */
export interface CrdReads {
  /** The set's CRDs by `liveKey`; `undefined`: it does not exist. */
  lives: Map<string, KubeObject | undefined>;
  /**
   * A list of CRDs made before any was written: whole objects (the set's that exist, or every CRD
   * of the cluster) and a resourceVersion at which each of them was as read, so that a watch from
   * it misses no event after them. Undefined when the reads do not give one (a CRD changed between
   * them, or the server cannot list metadata only): the watch then lists for itself.
   */
  list?: NonNullable<WatchOptions['from']>;
}

/**
 * The live state of `crds` (namespace-resolved CRDs of `apiextensions.k8s.io/v1`) in one round
 * trip: a GET of each of the set's CRDs (at most 16 at a time) alongside a metadata-only LIST of all
 * CRDs. The GETs are the live state; the LIST gives the resourceVersion the CRD watch starts from,
 * when every GET read the version the LIST saw (else no list: the watch lists for itself). A
 * server that answers the metadata-only LIST with the full list (it does not know the metadata
 * Accept) gives that list; one that answers 406 gives none. A cluster's full CRD LIST is never
 * read here: it is every CRD's whole schema, megabytes on a cluster with a few dozen.
 */
export async function readCrds(client: KubeClient, crds: readonly KubeObject[], signal?: AbortSignal): Promise<CrdReads> {
  const limit = pLimit(GET_CONCURRENCY);
  // A CRD deleted or not created yet answers 404: `undefined`.
  const gets = Promise.all(crds.map((c) => limit(async () => [liveKey(objectRef(c)), c, await client.get(objectRef(c), signal)] as const)));
  const listed = client.list(CRD_API, CRD_KIND, { metadataOnly: true, signal }).catch((e: unknown) => {
    if (e instanceof KubeApiError && e.status === 406) return undefined;
    throw e;
  });
  // both settle before either error is thrown: nothing is left running behind it
  const [gotten, meta] = await Promise.allSettled([gets, listed]);
  if (gotten.status === 'rejected') throw gotten.reason;
  if (meta.status === 'rejected') throw meta.reason;
  if (meta.value && !meta.value.metadataOnly) return fromFullList(crds, meta.value);
  const lives = new Map<string, KubeObject | undefined>(gotten.value.map(([k, , live]) => [k, live]));
  if (!meta.value) return { lives };
  const listedVersion = new Map(meta.value.items.map((it) => [it.metadata.name ?? '', it.metadata.resourceVersion ?? '']));
  const asListed = gotten.value.every(([, c, live]) => (live ? listedVersion.get(c.metadata.name ?? '') === live.metadata.resourceVersion : !listedVersion.has(c.metadata.name ?? '')));
  const items = gotten.value.flatMap(([, , live]) => (live ? [live] : []));
  return asListed ? { lives, list: { items, resourceVersion: meta.value.resourceVersion } } : { lives };
}
/** {@link CrdReads} from a full LIST of CRDs (as `fetchLive` keys it). */
function fromFullList(crds: readonly KubeObject[], listed: ListResult): CrdReads {
  const byName = new Map(listed.items.map((it) => [it.metadata.name ?? '', it]));
  const lives = new Map<string, KubeObject | undefined>();
  for (const c of crds) {
    const live = byName.get(c.metadata.name ?? '');
    lives.set(liveKey(objectRef(c)), live ? { ...live, apiVersion: c.apiVersion, kind: c.kind } : undefined);
  }
  return { lives, list: { items: listed.items, resourceVersion: listed.resourceVersion } };
}

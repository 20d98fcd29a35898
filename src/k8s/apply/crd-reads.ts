/**
 * Reading the live state of a set's CRDs without reading the cluster's: a LIST of CRDs answers
 * every CRD of the cluster with its whole OpenAPI schema (megabytes with a few dozen, and it grows
 * with the cluster, not with the set), so CRDs are listed metadata-only and only the set's CRDs
 * that exist are read whole, with a GET each — or with the full LIST when they are most of the
 * cluster's, or when the server cannot list metadata only.
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

/**
 * After a metadata-only LIST: whether the full LIST is the cheaper read of the set's `existing`
 * CRDs than a GET each, on a cluster of `total` CRDs — when they are at least half of the
 * cluster's (their GETs would read about what the LIST does, in more round trips). None existing:
 * nothing more to read.
 */
export function fullListCheaper(existing: number, total: number): boolean {
  return existing > 0 && existing * 2 >= total;
}

/** The live CRDs of a set and the LIST the CRD watch can start from (see `watchEstablished`). */
export interface CrdReads {
  /** The set's CRDs by `liveKey`; `undefined`: it does not exist. */
  lives: Map<string, KubeObject | undefined>;
  /**
   * A list of CRDs made before any was written: whole objects (the set's that exist, or every CRD
   * of the cluster) and a resourceVersion at or before every read, so that a watch from it misses
   * no event after them.
   */
  list: NonNullable<WatchOptions['from']>;
}

/**
 * The live state of `crds` (namespace-resolved CRDs of `apiextensions.k8s.io/v1`): a
 * metadata-only LIST of all CRDs, then a GET of each of the set's CRDs that exists (at most 16 at
 * a time); the full LIST instead when those are most of the cluster's (see
 * {@link fullListCheaper}), or when the server answers the metadata-only LIST with 406; a server
 * that answers it with the full list (it does not know the metadata Accept) is read once.
 */
export async function readCrds(client: KubeClient, crds: readonly KubeObject[], signal?: AbortSignal): Promise<CrdReads> {
  let meta: ListResult | undefined;
  try {
    meta = await client.list(CRD_API, CRD_KIND, { metadataOnly: true, signal });
  } catch (e) {
    if (!(e instanceof KubeApiError && e.status === 406)) throw e;
  }
  if (meta && !meta.metadataOnly) return fromFullList(crds, meta);
  const names = new Set((meta?.items ?? []).map((it) => it.metadata.name ?? ''));
  const existing = crds.filter((c) => names.has(c.metadata.name ?? ''));
  if (!meta || fullListCheaper(existing.length, meta.items.length)) return fromFullList(crds, await client.list(CRD_API, CRD_KIND, { signal }));
  const lives = new Map<string, KubeObject | undefined>(crds.map((c) => [liveKey(objectRef(c)), undefined]));
  const limit = pLimit(GET_CONCURRENCY);
  // A CRD deleted since the LIST answers 404: `undefined`, as if the LIST had not seen it.
  await Promise.all(existing.map((c) => limit(async () => lives.set(liveKey(objectRef(c)), await client.get(objectRef(c), signal)))));
  const items = [...lives.values()].filter((o): o is KubeObject => o !== undefined);
  return { lives, list: { items, resourceVersion: meta.resourceVersion } };
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

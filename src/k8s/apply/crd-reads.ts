/**
 * Reading the live state of a set's CRDs without reading the cluster's: a LIST of CRDs answers
 * every CRD of the cluster with its whole OpenAPI schema (megabytes with a few dozen, and it grows
 * with the cluster, not with the set), so the set's CRDs are read with a GET each; only an apply
 * that writes CRDs lists them, metadata-only, for the resourceVersion the wait for their
 * establishment starts from.
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
 * The live state of `crds` (namespace-resolved CRDs of `apiextensions.k8s.io/v1`), by `liveKey`: a
 * GET of each (at most 16 at a time); `undefined`: it does not exist. Never a LIST: the cluster's
 * full CRD list is every CRD's whole schema, and even a metadata-only LIST makes an apiserver
 * without a watch cache read and decode every CRD from etcd. `onAbsent` is called when the first
 * GET finds a CRD missing (the apply will create it: see {@link listCrdVersions}).
 */
export async function readCrds(client: KubeClient, crds: readonly KubeObject[], signal?: AbortSignal, onAbsent?: () => void): Promise<Map<string, KubeObject | undefined>> {
  const limit = pLimit(GET_CONCURRENCY);
  const read = await Promise.all(
    crds.map((c) =>
      limit(async () => {
        const live = await client.get(objectRef(c), signal);
        if (!live) onAbsent?.();
        return [liveKey(objectRef(c)), live] as const;
      }),
    ),
  );
  return new Map(read);
}

/**
 * A metadata-only LIST of CRDs, for the resourceVersion the wait for CRDs about to be written
 * starts its watch from (see {@link crdWatchStart}); undefined when the server cannot list
 * metadata only (406). Made before the CRDs are written — as soon as a GET finds one missing,
 * alongside the other reads, or before writing changed ones.
 */
export async function listCrdVersions(client: KubeClient, signal?: AbortSignal): Promise<ListResult | undefined> {
  try {
    return await client.list(CRD_API, CRD_KIND, { metadataOnly: true, signal });
  } catch (e) {
    if (e instanceof KubeApiError && e.status === 406) return undefined;
    throw e;
  }
}

/**
 * Where the wait for CRDs about to be written can start its watch (see `watchCrds`):
 * `listed` (see {@link listCrdVersions}) and the CRDs as `lives` (see {@link readCrds}) read them —
 * when each was read at the version the LIST saw (compared by resourceVersion; a CRD absent from
 * both counts as seen), so that a watch from the LIST's resourceVersion, seeded with them, misses
 * no event whichever was answered first. Undefined when a CRD changed between the reads, or there
 * is no list: the watch then lists for itself. A server that answered with the full list (it
 * ignores the metadata Accept) gives that list.
 */
export function crdWatchStart(listed: ListResult | undefined, lives: ReadonlyMap<string, KubeObject | undefined>, crds: readonly KubeObject[]): WatchOptions['from'] {
  if (!listed) return undefined;
  if (!listed.metadataOnly) return { items: listed.items, resourceVersion: listed.resourceVersion };
  const versions = new Map(listed.items.map((it) => [it.metadata.name ?? '', it.metadata.resourceVersion ?? '']));
  const items: KubeObject[] = [];
  for (const c of crds) {
    const name = c.metadata.name ?? '';
    const live = lives.get(liveKey(objectRef(c)));
    if (live ? versions.get(name) !== live.metadata.resourceVersion : versions.has(name)) return undefined;
    if (live) items.push(live);
  }
  return { items, resourceVersion: listed.resourceVersion };
}

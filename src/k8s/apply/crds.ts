/**
 * CustomResourceDefinitions in an apply: which kinds the set's CRDs define, small CRDs written
 * first, the waits until a CRD is Established (one watch for many) and its kinds are served, and
 * the retried writes of custom resources whose endpoint the apiserver does not serve yet.
 */
import { KubeApiError } from '../errors.js';
import { readinessOf } from '../readiness/index.js';
import { WAIT_STALL_MS } from '../wait.js';
import { abortReason, sleepOrThrow } from '../http.js';
import type { KubeClient, KubeObject, WatchOptions } from '../types.js';
import { apiVersionOf, crdServedKinds } from '../discovery.js';
import { isUnknownKind } from './types.js';

/** A custom resource kind a CRD of the set serves: its scope and the CRD's name. */
export interface CrdKind {
  apiVersion: string;
  kind: string;
  namespaced: boolean;
  crd: string;
}

/** `apiVersion|kind` → scope for every custom resource kind the CRDs in `objects` serve. */
export function crdKinds(objects: KubeObject[]): Map<string, CrdKind> {
  const out = new Map<string, CrdKind>();
  for (const o of objects) {
    if (o.kind !== 'CustomResourceDefinition') continue;
    for (const k of crdServedKinds(o)) {
      const apiVersion = apiVersionOf(k.group, k.version);
      out.set(`${apiVersion}|${k.kind}`, { apiVersion, kind: k.kind, namespaced: k.namespaced, crd: o.metadata.name ?? '' });
    }
  }
  return out;
}

/**
 * Writes in the order they should start: CRDs smallest first (others as they are). The apiserver
 * establishes CRDs one after another, in the order their creates end; a small CRD's create ends in
 * a fraction of a large one's (whose schema it validates), so small CRDs first start that chain —
 * and the writes of their custom resources — while the large ones are still being validated,
 * instead of queueing behind them for the client's concurrency.
 */
export function smallCrdsFirst<T>(writes: [T, KubeObject][]): [T, KubeObject][] {
  const crds = writes.filter(([, o]) => o.kind === 'CustomResourceDefinition');
  if (crds.length < 2) return writes;
  const size = new Map(crds.map(([, o]) => [o, JSON.stringify(o.spec ?? null).length]));
  const sizeOf = (o: KubeObject): number => size.get(o) ?? 0;
  return [...crds.sort(([, a], [, b]) => sizeOf(a) - sizeOf(b)), ...writes.filter(([, o]) => o.kind !== 'CustomResourceDefinition')];
}

/**
 * Each CRD in `names` once it is Established, from one watch of all CRDs: one LIST and one stream
 * instead of a LIST and a stream per CRD (without the apiserver's watch cache each of those reads
 * every CRD from etcd, and each status update of a large CRD — two per new CRD — is decoded once
 * per stream, while the apiserver is busy establishing them). With `from` (the LIST of CRDs the
 * apply made before writing them) not even that LIST: the stream starts at its resourceVersion,
 * so it carries the writes and every status update after them. For a few CRDs a watch each
 * (field-selected) is cheaper: a cluster's whole CRD list can be megabytes. A CRD whose names are
 * not accepted rejects at once; the others when `deadline` (epoch ms) passes or `signal` aborts.
 */
export function watchEstablished(client: Pick<KubeClient, 'watch'>, names: readonly string[], deadline: number, signal?: AbortSignal, from?: WatchOptions['from']): Map<string, Promise<KubeObject>> {
  const pending = new Map<string, { resolve: (o: KubeObject) => void; reject: (e: unknown) => void; last: string }>();
  const out = new Map<string, Promise<KubeObject>>();
  for (const name of names) {
    const p = new Promise<KubeObject>((resolve, reject) => pending.set(name, { resolve, reject, last: 'not created yet' }));
    p.catch(() => undefined); // rejections are seen by whoever awaits the CRD; none is left unhandled
    out.set(name, p);
  }
  const timeoutMs = Math.max(1, deadline - Date.now());
  const timeout = AbortSignal.timeout(timeoutMs);
  client
    .watch('apiextensions.k8s.io/v1', 'CustomResourceDefinition', { signal: AbortSignal.any([timeout, ...(signal ? [signal] : [])]), stallMs: WAIT_STALL_MS, from }, (_e, state) => {
      for (const o of state.values()) {
        const name = o.metadata.name ?? '';
        const d = pending.get(name);
        if (!d) continue;
        const r = readinessOf(o);
        d.last = r.message;
        if (!r.done) continue;
        pending.delete(name);
        if (r.successful) d.resolve(o);
        else d.reject(new Error(`CRD not established: CustomResourceDefinition ${name}: ${r.message}`));
      }
      return pending.size === 0;
    })
    .catch((e: unknown) => {
      for (const [name, d] of pending) {
        if (signal?.aborted) d.reject(abortReason(signal));
        else if (timeout.aborted) d.reject(new Error(`CRD not established: timed out after ${Math.round(timeoutMs / 1000)}s waiting for readiness; not ready: CustomResourceDefinition ${name}: ${d.last}`));
        else d.reject(e);
      }
      pending.clear();
    });
  return out;
}

/**
 * Write an object of a kind whose CRD this apply just created. The apiserver serves a new CRD's
 * endpoint from its own copy of the CRD, which can trail the Established condition (by a moment,
 * or longer behind a load balancer over several apiservers): a 404 that names no object (the
 * endpoint itself is missing) is retried, backing off 50 → 500 ms, until `until` (epoch ms).
 */
export async function writeServed<T>(write: () => Promise<T>, until: number, signal?: AbortSignal): Promise<T> {
  let pause = 50;
  for (;;) {
    try {
      return await write();
    } catch (e) {
      const endpointMissing = e instanceof KubeApiError && e.status === 404 && !e.body?.details?.name;
      const left = until - Date.now();
      if (!endpointMissing || left <= 0) throw e;
      await sleepOrThrow(Math.min(pause, left), signal);
      pause = Math.min(pause * 2, 500);
    }
  }
}

/**
 * Wait until discovery serves the kinds of CRDs that just became Established. The apiserver
 * publishes a CRD's kinds in discovery on its own schedule, a moment after the Established
 * condition is set; a custom resource applied in that gap would fail as an unknown kind. The
 * first try asks the discovery already read (a changed CRD that keeps its versions costs no
 * request; a kind it lacks is read again once, by `resource`); each later try re-reads it (2
 * requests, aggregated); tries back off from 50 ms to 500 ms.
 */
export async function waitServed(
  client: Pick<KubeClient, 'invalidateDiscovery' | 'resource'>,
  kinds: readonly { apiVersion: string; kind: string; crd: string }[],
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const started = Date.now();
  let pause = 50;
  for (let tries = 0; ; tries++) {
    if (tries > 0) client.invalidateDiscovery();
    let unserved: (typeof kinds)[number] | undefined;
    for (const k of kinds) {
      const served = await client.resource(k.apiVersion, k.kind).then(
        () => true,
        (e: unknown) => {
          if (isUnknownKind(e)) return false;
          throw e;
        },
      );
      if (!served) {
        unserved = k;
        break;
      }
    }
    if (!unserved) return;
    const left = timeoutMs - (Date.now() - started);
    if (left <= 0) {
      throw new Error(`CRD ${unserved.crd} is Established but the apiserver does not serve ${unserved.kind} (${unserved.apiVersion}) after ${Math.round(timeoutMs / 1000)} s: check the CRD's versions (served: true) and the apiserver's log`);
    }
    await sleepOrThrow(Math.min(pause, left), signal);
    pause = Math.min(pause * 2, 500);
  }
}

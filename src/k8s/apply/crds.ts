/**
 * CustomResourceDefinitions in an apply: which kinds the set's CRDs define, small CRDs written
 * first, the waits until a CRD's kinds are served and it is Established (one watch for many), and
 * the retried writes of custom resources whose endpoint the apiserver does not serve yet.
 */
import { KubeApiError } from '../errors.js';
import { condition, failed, progressing, ready, type Readiness } from '../readiness/common.js';
import { crdReadiness } from '../readiness/simple.js';
import { WAIT_STALL_MS } from '../wait.js';
import { abortReason, sleepOrThrow } from '../rate-limit.js';
import type { KubeClient, KubeObject, WatchOptions } from '../types.js';
import { apiVersionOf, crdServedKinds } from '../discovery.js';
import { LIST_MIN } from '../object-plan.js';
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
 * Whether the apiserver serves a CRD's custom resources — what an apply waits for before writing
 * them. The apiserver's handler serves a CRD's kinds once its names are accepted (`NamesAccepted`,
 * set by the naming controller), not only once it is `Established`: the establishing controller
 * sets that next, one more status update of the whole CRD (behind the naming controller's queue,
 * 0.1–0.3 s a CRD on a busy apiserver; with several apiservers it waits 5 s on purpose, so that
 * every one has seen the names). A write that reaches an apiserver which has not seen the names
 * yet answers 404 for the endpoint and is retried (see {@link writeServed}). `NamesAccepted`
 * False (a name another CRD holds) fails. `wait_for` and `k8s_info wait` keep waiting for
 * Established (`crdReadiness`), as `kubectl wait --for=condition=Established` does.
 */
export function crdServable(obj: KubeObject): Readiness {
  const names = condition(obj, 'NamesAccepted');
  if (names?.status === 'False') return failed(`names not accepted: ${names.message ?? names.reason ?? ''}`);
  if (names?.status === 'True') return ready('names accepted');
  return condition(obj, 'Established')?.status === 'True' ? ready('established') : progressing('names not accepted yet');
}

/** The two moments of a CRD an apply waits for (see {@link watchCrds}). */
export interface CrdWait {
  /** The CRD once the apiserver serves its kinds (see {@link crdServable}): its custom resources can be written. */
  served: Promise<KubeObject>;
  /** The CRD once it is Established (see `crdReadiness`): the apply ends no sooner. */
  established: Promise<KubeObject>;
}

/**
 * Each CRD in `names` once its kinds are served and once it is Established (see {@link CrdWait}).
 * From `LIST_MIN` CRDs on, one watch of all CRDs: one LIST and one stream instead of a LIST and a
 * stream per CRD (without the apiserver's watch cache each of those reads every CRD from etcd, and
 * each status update of a large CRD — two per new CRD — is decoded once per stream, while the
 * apiserver is busy establishing them); with `from` (the LIST of CRDs the apply made before writing
 * them) not even that LIST: the stream starts at its resourceVersion, so it carries the writes and
 * every status update after them. Fewer CRDs are watched field-selected (`metadata.name`), one
 * watch each: a cluster's whole CRD list can be megabytes. A CRD whose names are not accepted
 * rejects at once; the others when `deadline` (epoch ms) passes or `signal` aborts. Each watch
 * ends once its CRDs are Established.
 */
export function watchCrds(client: Pick<KubeClient, 'watch'>, names: readonly string[], deadline: number, signal?: AbortSignal, from?: WatchOptions['from']): Map<string, CrdWait> {
  if (names.length >= LIST_MIN) return watchSome(client, names, deadline, signal, from);
  return new Map(names.flatMap((name) => [...watchSome(client, [name], deadline, signal)]));
}

/** One watch of `names` (field-selected when it is one CRD) for {@link watchCrds}. */
function watchSome(client: Pick<KubeClient, 'watch'>, names: readonly string[], deadline: number, signal?: AbortSignal, from?: WatchOptions['from']): Map<string, CrdWait> {
  interface Pending {
    served?: Deferred;
    established: Deferred;
    last: string;
  }
  const pending = new Map<string, Pending>();
  const out = new Map<string, CrdWait>();
  for (const name of names) {
    const served = deferred();
    const established = deferred();
    pending.set(name, { served, established, last: 'not created yet' });
    out.set(name, { served: served.promise, established: established.promise });
  }
  const fail = (name: string, d: Pending, e: unknown): void => {
    d.served?.reject(e);
    d.established.reject(e);
    pending.delete(name);
  };
  const timeoutMs = Math.max(1, deadline - Date.now());
  const timeout = AbortSignal.timeout(timeoutMs);
  const fieldSelector = names.length === 1 ? `metadata.name=${names[0] ?? ''}` : undefined;
  client
    .watch('apiextensions.k8s.io/v1', 'CustomResourceDefinition', { signal: AbortSignal.any([timeout, ...(signal ? [signal] : [])]), stallMs: WAIT_STALL_MS, from: fieldSelector ? undefined : from, fieldSelector }, (_e, state) => {
      for (const o of state.values()) {
        const name = o.metadata.name ?? '';
        const d = pending.get(name);
        if (!d) continue;
        const r = crdServable(o);
        d.last = r.message;
        if (!r.done) continue;
        if (!r.successful) {
          fail(name, d, new Error(`CRD not established: CustomResourceDefinition ${name}: ${r.message}`));
          continue;
        }
        d.served?.resolve(o);
        d.served = undefined;
        if (crdReadiness(o).successful) {
          d.established.resolve(o);
          pending.delete(name);
        } else d.last = 'names accepted, not established yet';
      }
      return pending.size === 0;
    })
    .catch((e: unknown) => {
      for (const [name, d] of pending) {
        if (signal?.aborted) fail(name, d, abortReason(signal));
        else if (timeout.aborted) fail(name, d, new Error(`CRD not established: timed out after ${Math.round(timeoutMs / 1000)}s waiting for readiness; not ready: CustomResourceDefinition ${name}: ${d.last}`));
        else fail(name, d, e);
      }
    });
  return out;
}

/** A promise with its settle functions; its rejection is seen by whoever awaits it, never left unhandled. */
interface Deferred {
  promise: Promise<KubeObject>;
  resolve: (o: KubeObject) => void;
  reject: (e: unknown) => void;
}

function deferred(): Deferred {
  let resolve: (o: KubeObject) => void = () => undefined;
  let reject: (e: unknown) => void = () => undefined;
  const promise = new Promise<KubeObject>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/**
 * Write an object of a kind whose CRD this apply just created. The apiserver serves a new CRD's
 * endpoint from its own copy of the CRD, which can trail the accepted names the apply saw (by a
 * moment, or longer behind a load balancer over several apiservers): a 404 that names no object
 * (the endpoint itself is missing) is retried, backing off 50 → 500 ms, until `until` (epoch ms).
 * The first write of each CRD's kinds goes alone (see `applyGroup`), so one such 404 costs one
 * retried write per CRD.
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

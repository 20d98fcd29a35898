/**
 * The Kubernetes signals of the `analysis` gate: for the pods of the objects a release changed
 * (or of a label selector), Warning events, container restarts and crash loops since the batch
 * started, and readiness at every measurement and in between.
 */
import { setting } from '../core/settings.js';
import { kubeFor } from '../k8s/client.js';
import type { KubeClient, KubeObject } from '../k8s/types.js';
import { errorMessage } from '../load/errors.js';
import { parseRendered } from '../helm/manifests.js';
import { readStoredRelease, storageKind } from '../helm/storage.js';
import type { ModuleContext } from '../core/module.js';
import type { Reading } from './loop.js';
import { dedupe, selectorString, targetsFrom, type KubeTarget } from './targets.js';

/** The `kubernetes:` arguments of a metric. */
export interface KubeSignalArgs {
  from?: unknown;
  objects?: { kind: string; name: string; namespace?: string | undefined; api_version?: string | undefined }[] | undefined;
  namespace?: string | undefined;
  label_selector?: string | undefined;
  ignore_event_reasons?: string[] | undefined;
}

/** What a measurement of Kubernetes signals reports (`result`). */
export interface KubeSignals {
  /** Objects followed (from `from`, `objects`). */
  objects: number;
  /** Followed workloads that no longer exist. */
  missing: number;
  /** Pods of the followed workloads and of `label_selector` (terminating ones left out). */
  pods: number;
  /** Of those, pods whose Ready condition is True. */
  ready: number;
  /** Pods that were ready at the previous measurement and are ready now, but lost readiness in between. */
  ready_flapped: number;
  /** Container restarts since the batch started. */
  restarts: number;
  /** Pods with a container waiting in CrashLoopBackOff. */
  crash_looping: number;
  /** Warning events since the batch started for the objects, their pods (also pods already replaced) and the pods' owners. */
  warning_events: number;
  /** Nothing of the above: no missing object, every pod ready and none flapped, no restart, crash loop or Warning event. */
  healthy: boolean;
  /** What is wrong, one line each (at most 10). */
  details: string[];
}

/** What the signals remember between measurements. */
export interface KubeState {
  /** Restart count a container had at the start of the window, by `<pod uid>/<container>`. */
  baseline: Map<string, number>;
  /** The Ready condition's lastTransitionTime of pods ready at the previous measurement, by pod uid. */
  readySince: Map<string, string>;
  /** The followed objects, resolved at the first measurement. */
  targets?: KubeTarget[];
}

/** A fresh state for one metric. */
export function kubeState(): KubeState {
  return { baseline: new Map(), readySince: new Map() };
}

type ContainerStatus = { name?: string; restartCount?: number; state?: { waiting?: { reason?: string } }; lastState?: { terminated?: { finishedAt?: string } } };
/** The parts of a Pod the signals read. */
export interface PodLike {
  metadata?: { name?: string; namespace?: string; uid?: string; creationTimestamp?: string; deletionTimestamp?: string; ownerReferences?: { kind?: string; name?: string }[] };
  status?: { conditions?: { type?: string; status?: string; lastTransitionTime?: string }[]; containerStatuses?: ContainerStatus[]; initContainerStatuses?: ContainerStatus[] };
}
/** The parts of an Event the signals read. */
export interface EventLike {
  type?: string;
  reason?: string;
  message?: string;
  involvedObject?: { kind?: string; name?: string; namespace?: string };
  lastTimestamp?: string | null;
  eventTime?: string | null;
  series?: { lastObservedTime?: string } | null;
  metadata?: { creationTimestamp?: string };
}

/** Workload kinds whose pods are followed, and their usual apiVersion. */
export const WORKLOADS: Readonly<Record<string, string>> = { Deployment: 'apps/v1', StatefulSet: 'apps/v1', DaemonSet: 'apps/v1', ReplicaSet: 'apps/v1', Job: 'batch/v1', Pod: 'v1' };

const key = (kind: string | undefined, ns: string | undefined, name: string | undefined): string => `${kind ?? ''}/${ns ?? ''}/${name ?? ''}`;

/**
 * Compute one measurement's signals. Restarts: a pod created since `since` counts all its
 * restarts; an older one those beyond its count at the first sight (one less when its last
 * termination is after `since`). Events: Warning events last seen at or after `since` (to the
 * second, as the apiserver stamps them) of the objects, the pods and the pods' owners.
 */
export function kubeSignals(input: { pods: PodLike[]; events: EventLike[]; objects?: KubeTarget[]; missing?: string[]; ignoreReasons?: string[] }, state: KubeState, since: Date): KubeSignals {
  const sinceSecond = Math.floor(since.getTime() / 1000) * 1000;
  const details: string[] = [...(input.missing ?? []).map((m) => `${m}: not found`)];
  const names = new Set((input.objects ?? []).map((t) => key(t.kind, t.namespace, t.name)));
  let pods = 0;
  let ready = 0;
  let flapped = 0;
  let restarts = 0;
  let crash = 0;
  for (const p of input.pods) {
    const ns = p.metadata?.namespace;
    const label = `Pod ${ns ? `${ns}/` : ''}${p.metadata?.name ?? '?'}`;
    names.add(key('Pod', ns, p.metadata?.name));
    for (const o of p.metadata?.ownerReferences ?? []) names.add(key(o.kind, ns, o.name));
    if (p.metadata?.deletionTimestamp) continue;
    pods++;
    const uid = p.metadata?.uid ?? `${ns ?? ''}/${p.metadata?.name ?? ''}`;
    const cond = (p.status?.conditions ?? []).find((c) => c.type === 'Ready');
    if (cond?.status === 'True') {
      ready++;
      const seen = state.readySince.get(uid);
      const now = cond.lastTransitionTime ?? '';
      if (seen !== undefined && seen !== now) {
        flapped++;
        details.push(`${label}: lost readiness between measurements (Ready again since ${now})`);
      }
      state.readySince.set(uid, now);
    } else {
      state.readySince.delete(uid);
      details.push(`${label}: not ready`);
    }
    const created = Date.parse(p.metadata?.creationTimestamp ?? '');
    const isNew = created >= sinceSecond;
    let looping = false;
    for (const c of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]) {
      const ck = `${uid}/${c.name ?? ''}`;
      const count = c.restartCount ?? 0;
      let base = state.baseline.get(ck);
      if (base === undefined) {
        const lastEnd = Date.parse(c.lastState?.terminated?.finishedAt ?? '');
        base = isNew ? 0 : count - (count > 0 && lastEnd >= sinceSecond ? 1 : 0);
        state.baseline.set(ck, base);
      }
      const r = Math.max(0, count - base);
      if (r > 0) details.push(`${label}: container ${c.name ?? '?'} restarted ${r} time(s)`);
      restarts += r;
      if (c.state?.waiting?.reason === 'CrashLoopBackOff') {
        looping = true;
        details.push(`${label}: container ${c.name ?? '?'} in CrashLoopBackOff`);
      }
    }
    if (looping) crash++;
  }
  const ignore = new Set(input.ignoreReasons ?? []);
  // a pod that is gone (replaced, evicted) is known by its name: `<ReplicaSet|DaemonSet|Job>-xxxxx` or `<StatefulSet>-N`
  const podOwners = new Set([...names].filter((k) => /^(ReplicaSet|DaemonSet|Job|StatefulSet)\//.test(k)).map((k) => k.slice(k.indexOf('/') + 1)));
  const goneOwned = (ns: string | undefined, name: string | undefined): boolean => {
    const m = /^(.+)-(?:[a-z0-9]{5}|\d+)$/.exec(name ?? '');
    return m !== null && podOwners.has(`${ns ?? ''}/${m[1] ?? ''}`);
  };
  let warnings = 0;
  for (const e of input.events) {
    if (e.type !== 'Warning' || ignore.has(e.reason ?? '')) continue;
    const io = e.involvedObject;
    if (!names.has(key(io?.kind, io?.namespace, io?.name)) && !(io?.kind === 'Pod' && goneOwned(io.namespace, io.name))) continue;
    const when = e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp;
    if (when === undefined || when === null || !(Date.parse(when) >= sinceSecond)) continue;
    warnings++;
    details.push(`Warning ${e.reason ?? ''} on ${io?.kind ?? ''} ${io?.name ?? ''}: ${e.message ?? ''}`.trim());
  }
  const missing = input.missing?.length ?? 0;
  return {
    objects: input.objects?.length ?? 0,
    missing,
    pods,
    ready,
    ready_flapped: flapped,
    restarts,
    crash_looping: crash,
    warning_events: warnings,
    healthy: missing === 0 && ready === pods && flapped === 0 && restarts === 0 && crash === 0 && warnings === 0,
    details: details.slice(0, 10),
  };
}

/** The followed objects: `from`, `objects`, and the objects of helm releases named in `from` (read from their storage records). */
async function resolveTargets(k: KubeSignalArgs, ctx: ModuleContext, client: KubeClient): Promise<KubeTarget[]> {
  const found = k.from === undefined ? { targets: [], helm: [] } : targetsFrom(k.from);
  const targets = [...found.targets];
  for (const o of k.objects ?? []) targets.push({ kind: o.kind, name: o.name, ...(o.namespace ? { namespace: o.namespace } : {}), ...(o.api_version ? { apiVersion: o.api_version } : {}) });
  for (const h of found.helm) {
    const driver = setting('helmDriver', { ...process.env, ...ctx.environment });
    const kind = storageKind(driver);
    if (kind === undefined) throw new Error(`helm release ${h.namespace}/${h.name}: kplay reads the objects of a release from its Secret or ConfigMap records, not from HELM_DRIVER=${driver ?? ''}; list them in kubernetes.objects`);
    const rel = await readStoredRelease(client, kind, h.name, h.namespace, ctx.signal);
    if (!rel) throw new Error(`helm release ${h.namespace}/${h.name} is not installed (no ${kind} record): nothing to follow`);
    for (const o of parseRendered(rel.manifest, false, `release ${h.name}`)) targets.push({ kind: o.kind, name: o.metadata.name ?? '', namespace: o.metadata.namespace ?? h.namespace, apiVersion: o.apiVersion });
  }
  return dedupe(targets.map((t) => (t.namespace === undefined && k.namespace ? { ...t, namespace: k.namespace } : t)));
}

/** Read the pods and events and compute the signals; an API error is an error reading. */
export async function readKubernetes(k: KubeSignalArgs, ctx: ModuleContext, state: KubeState, since: Date): Promise<Reading> {
  try {
    const client = await kubeFor(ctx);
    state.targets ??= await resolveTargets(k, ctx, client);
    const pods = new Map<string, PodLike>();
    const add = (items: KubeObject[]): void => items.forEach((p) => pods.set(p.metadata.uid ?? `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`, p as PodLike));
    const missing: string[] = [];
    for (const t of state.targets) {
      const apiVersion = WORKLOADS[t.kind];
      if (apiVersion === undefined || t.namespace === undefined) continue;
      const live = await client.get({ apiVersion: t.apiVersion ?? apiVersion, kind: t.kind, name: t.name, namespace: t.namespace }, ctx.signal);
      if (!live) {
        missing.push(`${t.kind} ${t.namespace}/${t.name}`);
        continue;
      }
      if (t.kind === 'Pod') add([live]);
      else {
        const sel = selectorString((live.spec as { selector?: unknown } | undefined)?.selector);
        if (sel) add((await client.list('v1', 'Pod', { namespace: t.namespace, labelSelector: sel, signal: ctx.signal })).items);
      }
    }
    if (k.label_selector && k.namespace) add((await client.list('v1', 'Pod', { namespace: k.namespace, labelSelector: k.label_selector, signal: ctx.signal })).items);
    if (pods.size === 0 && state.targets.length === 0) return { kind: 'no_data', reason: `no data: no pods match ${k.label_selector ?? ''} in namespace ${k.namespace ?? ''}` };
    const namespaces = new Set<string>();
    for (const t of state.targets) namespaces.add(t.namespace ?? 'default');
    for (const p of pods.values()) if (p.metadata?.namespace) namespaces.add(p.metadata.namespace);
    if (k.namespace) namespaces.add(k.namespace);
    const events: EventLike[] = [];
    for (const ns of namespaces) events.push(...((await client.list('v1', 'Event', { namespace: ns, fieldSelector: 'type=Warning', signal: ctx.signal })).items as EventLike[]));
    return { kind: 'value', value: kubeSignals({ pods: [...pods.values()], events, objects: state.targets, missing, ignoreReasons: k.ignore_event_reasons ?? [] }, state, since) };
  } catch (e) {
    return { kind: 'error', reason: ctx.mask(`kubernetes: ${errorMessage(e)}`) };
  }
}

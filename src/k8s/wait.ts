/**
 * Waiting on objects, driven by watch events (never polling): readiness (see `readiness/`), a
 * named condition, a custom check, or deletion. Shared by `wait_for`, `k8s_apply wait: true`
 * and `k8s_info wait: true`. Rollouts fail fast when their pods are stuck in a fatal state.
 */
import { setMaxListeners } from 'node:events';
import { describeRef } from './client.js';
import { abortReason } from './rate-limit.js';
import { hasPods, podFatalReason, readinessOf, type ReadinessCheck } from './readiness/index.js';
import type { KubeClient, KubeObject } from './types.js';

/** What to wait on: one object (`name`) or every object matching `labelSelector`. */
export interface WaitTarget {
  apiVersion: string;
  kind: string;
  name?: string;
  namespace?: string;
  labelSelector?: string;
}

/** What "done" means. */
export type WaitMode =
  /** Ready by kplay's readiness rules, or by `rules` (e.g. kubernetes.core's predicates). */
  | { type: 'ready'; rules?: ReadinessCheck }
  | { type: 'condition'; condition: string; status: string }
  | { type: 'check'; describe: string; check: (obj: KubeObject) => Promise<boolean> }
  | { type: 'absent' };

/** Default watch stall bound of waits, ms (see {@link WaitOptions.stallMs}). */
export const WAIT_STALL_MS = 2500;

/** Options of {@link waitFor}. */
export interface WaitOptions {
  /** Give up after this many ms. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Called with a one-line progress summary when it changes. */
  progress?: (msg: string) => void;
  /**
   * Watch stall bound (ms): the server ends each watch after this long (and it is resumed); a
   * silent watch is cut after at most twice this and the state re-listed. Short, so a wait ends
   * within seconds of readiness even behind a connection that swallows watch events.
   * @default 2500
   */
  stallMs?: number;
}

/** Outcome of a wait. */
export interface WaitOutcome {
  /** Every target reached the wanted state. */
  ok: boolean;
  /** What happened, e.g. the failure reason or what was not ready at the timeout. */
  msg: string;
  /** Whether the wait ended because of the timeout. */
  timedOut: boolean;
  /** The last seen state of the matched objects. */
  objects: KubeObject[];
  /** Descriptions of objects that were not ready. */
  notReady: string[];
}

interface TargetState {
  target: WaitTarget;
  done: boolean;
  failed?: string;
  lines: string[];
  objects: KubeObject[];
}

/** `Kind ns/name` or `Kind ns/-l sel` for a target. */
export function describeTarget(t: WaitTarget): string {
  if (t.name) return describeRef({ apiVersion: t.apiVersion, kind: t.kind, name: t.name, namespace: t.namespace });
  return `${t.kind}${t.namespace ? ` in ${t.namespace}` : ''}${t.labelSelector ? ` matching ${t.labelSelector}` : ''}`;
}

/** A label selector string from a `LabelSelector` object (matchLabels + matchExpressions). */
export function selectorString(sel: unknown): string | undefined {
  if (typeof sel !== 'object' || sel === null) return undefined;
  const s = sel as { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
  const parts: string[] = [];
  for (const [k, v] of Object.entries(s.matchLabels ?? {})) parts.push(`${k}=${v}`);
  for (const e of s.matchExpressions ?? []) {
    if (e.operator === 'In') parts.push(`${e.key} in (${(e.values ?? []).join(',')})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${(e.values ?? []).join(',')})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.length ? parts.join(',') : undefined;
}

async function evaluate(mode: WaitMode, t: WaitTarget, objects: KubeObject[]): Promise<{ done: boolean; failed?: string; lines: string[] }> {
  const label = (o: KubeObject): string => describeRef({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name ?? '?', namespace: o.metadata.namespace });
  if (mode.type === 'absent') {
    return objects.length === 0 ? { done: true, lines: [] } : { done: false, lines: objects.map((o) => `${label(o)}: still exists${o.metadata.deletionTimestamp ? ' (terminating)' : ''}`) };
  }
  if (objects.length === 0) return { done: false, lines: [`${describeTarget(t)}: not found`] };
  const lines: string[] = [];
  let allDone = true;
  for (const o of objects) {
    if (mode.type === 'ready') {
      const r = (mode.rules ?? readinessOf)(o);
      if (r.done && !r.successful) return { done: true, failed: `${label(o)}: ${r.message}`, lines: [`${label(o)}: ${r.message}`] };
      if (!r.done) {
        allDone = false;
        lines.push(`${label(o)}: ${r.message}`);
      }
    } else if (mode.type === 'condition') {
      const conds = (o.status as { conditions?: { type?: string; status?: string; reason?: string; message?: string }[] } | undefined)?.conditions ?? [];
      const c = Array.isArray(conds) ? conds.find((x) => x.type === mode.condition) : undefined;
      if (c?.status !== mode.status) {
        allDone = false;
        lines.push(`${label(o)}: condition ${mode.condition} is ${c ? `${String(c.status)}${c.reason ? ` (${c.reason})` : ''}` : 'not set'}, want ${mode.status}`);
      }
    } else if (!(await mode.check(o))) {
      allDone = false;
      lines.push(`${label(o)}: ${mode.describe} is false`);
    }
  }
  return { done: allDone, lines };
}

/** Wait until every target reaches the mode's state, the timeout passes, or a rollout fails. */
export async function waitFor(client: KubeClient, targets: WaitTarget[], mode: WaitMode, opts: WaitOptions): Promise<WaitOutcome> {
  const started = Date.now();
  const stop = new AbortController();
  const timeout = AbortSignal.timeout(Math.max(1, opts.timeoutMs));
  const signal = AbortSignal.any([stop.signal, timeout, ...(opts.signal ? [opts.signal] : [])]);
  setMaxListeners(0, signal); // one watch per target kind/namespace listens on it
  const states: TargetState[] = targets.map((t) => ({ target: t, done: false, lines: [`${describeTarget(t)}: waiting for the first state`], objects: [] }));
  let fatal: string | undefined;
  let lastProgress = '';
  const podWatches = new Map<string, Promise<void>>();
  const report = (): void => {
    if (!opts.progress) return;
    const pending = states.filter((s) => !s.done).flatMap((s) => s.lines);
    const secs = Math.round((Date.now() - started) / 1000);
    const msg = pending.length ? `${pending.slice(0, 3).join('; ')}${pending.length > 3 ? ` (+${pending.length - 3} more)` : ''}, ${secs}s` : `all ready, ${secs}s`;
    if (msg !== lastProgress) opts.progress(msg);
    lastProgress = msg;
  };
  const ticker = opts.progress ? setInterval(report, 1000) : undefined;

  const watchPods = (o: KubeObject): void => {
    const sel = selectorString((o.spec as { selector?: unknown } | undefined)?.selector);
    const ns = o.metadata.namespace;
    if (!sel || !ns) return;
    const key = `${ns}/${sel}`;
    if (podWatches.has(key)) return;
    const p = client
      .watch('v1', 'Pod', { namespace: ns, labelSelector: sel, signal, stallMs: opts.stallMs ?? WAIT_STALL_MS }, (_e, pods) => {
        for (const pod of pods.values()) {
          const reason = podFatalReason(pod);
          if (reason) {
            fatal = `${describeRef({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name ?? '', namespace: ns })} will not become ready: ${reason}`;
            stop.abort();
            return true;
          }
        }
        return false;
      })
      .catch(() => undefined);
    podWatches.set(key, p);
  };

  const runTarget = async (s: TargetState): Promise<void> => {
    const t = s.target;
    await client.watch(t.apiVersion, t.kind, { namespace: t.namespace, labelSelector: t.labelSelector, fieldSelector: t.name ? `metadata.name=${t.name}` : undefined, signal, stallMs: opts.stallMs ?? WAIT_STALL_MS }, async (_e, state) => {
      s.objects = [...state.values()];
      const r = await evaluate(mode, t, s.objects);
      s.lines = r.lines;
      if (mode.type === 'ready') for (const o of s.objects) if (hasPods(o)) watchPods(o);
      if (r.failed) {
        fatal = r.failed;
        stop.abort();
        return true;
      }
      s.done = r.done;
      report();
      return r.done;
    });
  };

  let error: unknown;
  try {
    await Promise.all(
      states.map((s) =>
        runTarget(s).catch((e: unknown) => {
          if (!signal.aborted) {
            error = e;
            stop.abort();
          }
        }),
      ),
    );
  } finally {
    if (ticker) clearInterval(ticker);
    stop.abort();
    await Promise.all(podWatches.values());
  }
  if (error !== undefined) throw error;
  const objects = states.flatMap((s) => s.objects);
  const notReady = states.filter((s) => !s.done).flatMap((s) => s.lines);
  if (fatal) return { ok: false, msg: fatal, timedOut: false, objects, notReady };
  if (states.every((s) => s.done)) return { ok: true, msg: `${targets.length === 1 ? describeTarget(targets[0] as WaitTarget) : `${targets.length} targets`}: ${mode.type === 'absent' ? 'absent' : 'ready'} after ${Math.round((Date.now() - started) / 1000)}s`, timedOut: false, objects, notReady: [] };
  if (opts.signal?.aborted) throw abortReason(opts.signal);
  // Timed out: say what was not ready, with recent Warning events.
  const events = await warningEvents(client, states.filter((s) => !s.done).flatMap((s) => (s.objects.length ? s.objects : [])));
  const msg = `timed out after ${Math.round(opts.timeoutMs / 1000)}s waiting for ${mode.type === 'absent' ? 'deletion' : mode.type === 'ready' ? 'readiness' : mode.type === 'condition' ? `condition ${mode.condition}=${mode.status}` : mode.describe}; not ready: ${notReady.join('; ')}${events.length ? `; recent warnings: ${events.join('; ')}` : ''}`;
  return { ok: false, msg, timedOut: true, objects, notReady };
}

/** The last few Warning events of some objects, as `Kind/name: Reason: message`. */
export async function warningEvents(client: KubeClient, objects: KubeObject[], perObject = 3): Promise<string[]> {
  const out: string[] = [];
  for (const o of objects.slice(0, 10)) {
    if (!o.metadata.name) continue;
    try {
      const { items } = await client.list('v1', 'Event', {
        namespace: o.metadata.namespace,
        fieldSelector: `involvedObject.name=${o.metadata.name},involvedObject.kind=${o.kind},type=Warning`,
      });
      const time = (e: KubeObject): string => String(e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp ?? '');
      for (const e of items.sort((a, b) => time(a).localeCompare(time(b))).slice(-perObject)) {
        out.push(`${o.kind}/${o.metadata.name}: ${String(e.reason ?? '')}: ${String(e.message ?? '').trim()}`);
      }
    } catch {
      // events are best effort
    }
  }
  return out;
}

/**
 * `lb_switch` provider `k8s_service`: steer a Kubernetes Service by editing its selector.
 *
 * - Blue/green: `selector: {color: green}` merges the given keys into the Service's selector
 *   (other keys kept, `null` removes a key). Refused when the new selector matches fewer than
 *   `min_ready` ready pods, so a typo or an empty colour cannot black-hole the traffic.
 * - Drain / ready this cluster: `state: drain` adds `drain_label` (default
 *   `kplay.dev/drained: "true"`) to the selector. No pod carries that label, so the Service keeps
 *   its other selector keys but has no endpoints on this cluster; `state: ready` removes it.
 *
 * The selector is written with a resourceVersion-guarded JSON merge patch (see `k8s_common.ts`
 * for why not server-side apply). Afterwards the provider waits until the Service's
 * EndpointSlices list exactly the pods the new selector matches (`endpoints_timeout`).
 */
import YAML from 'yaml';
import type { KubeClient, KubeObject, ObjectRef } from '../k8s/types.js';
import type { DiffEntry, ModuleContext, ModuleResult } from '../core/module.js';
import { clientFor, guard, LbError, readModifyWrite, selectorText, stringMap, where } from './k8s_common.js';
import { isRecord } from '../core/shape.js';
import { Default, Type, type Args } from '../core/args.js';
import type { LbProvider } from './provider.js';
import { sleep } from '../core/sleep.js';
import { NAMESPACE_PROPERTY, STATE_PROPERTY } from './shared.js';

/** Selector entry `state: drain` adds when `drain_label` is not given. */
export const DEFAULT_DRAIN_LABEL: Readonly<Record<string, string>> = { 'kplay.dev/drained': 'true' };

const labelMap = (what: string) => Type.Record(Type.String(), Type.String({ maxLength: 63 }), { minProperties: 1, propertyNames: { type: 'string', minLength: 1, maxLength: 316 }, description: what });

const schema = Type.Object({
  provider: Type.Literal('k8s_service'),
  service: Type.String({ minLength: 1, maxLength: 63, description: '(k8s_service, required) Name of the Service whose selector is switched.' }),
  namespace: NAMESPACE_PROPERTY,
  selector: Type.Optional(
    Type.Record(Type.String(), Type.Union([Type.String({ maxLength: 63 }), Type.Null()]), {
      minProperties: 1,
      propertyNames: { type: 'string', minLength: 1, maxLength: 316 },
      description:
        "(k8s_service) Selector keys to set, merged into the Service's selector: keys not given are kept, `null` removes a key. " +
        'E.g. `{color: green}` turns `app=web,color=blue` into `app=web,color=green`. ' +
        'Refused (nothing changed) when the new selector matches fewer than `min_ready` ready pods.',
    }),
  ),
  state: Type.Optional(STATE_PROPERTY),
  drain_label: Default(
    labelMap(
      '(k8s_service) Selector entries `state: drain` adds (and `state: ready` removes); no pod may carry them, so a drained Service matches no pod and has no endpoints on this cluster while keeping its other selector keys.',
    ),
    { ...DEFAULT_DRAIN_LABEL },
  ),
  min_ready: Default(
    Type.Integer({
      minimum: 0,
      description:
        '(k8s_service) Minimum number of ready pods the new selector must match, checked before writing (not when draining). `0` allows switching to a selector with no pods.',
    }),
    1,
  ),
  endpoints_timeout: Default(
    Type.Number({
      minimum: 0,
      description:
        "(k8s_service) After switching, seconds to wait until the Service's EndpointSlices list exactly the pods the new selector matches (none when drained); the task fails when they do not. `0` does not wait.",
    }),
    30,
  ),
});

/** Arguments of `lb_switch` with `provider: k8s_service` (after defaults). */
export type K8sServiceSwitchArgs = Args<typeof schema>;

/** EndpointSlice label naming the Service. */
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** How often the EndpointSlices are polled after a switch. */
const ENDPOINTS_POLL_MS = 250;

/** The selector before and after, as computed from the live Service. */
interface SelectorPlan {
  previous: Record<string, string>;
  next: Record<string, string>;
  /** Keys changed: `key: old → new`. */
  changes: string[];
  drainedBefore: boolean;
  drainedAfter: boolean;
  publishNotReady: boolean;
  /** Ready pods matching `next` (when checked). */
  readyPods?: number;
}

function isDrained(sel: Record<string, string>, drain: Record<string, string>): boolean {
  return Object.entries(drain).every(([k, v]) => sel[k] === v);
}

function selectorYaml(sel: Record<string, string>): string {
  const sorted = Object.fromEntries(Object.keys(sel).sort().map((k) => [k, sel[k]]));
  return YAML.stringify({ selector: sorted }, { lineWidth: 0 });
}

function podReady(p: KubeObject): boolean {
  const st = isRecord(p.status) ? p.status : {};
  const conds = Array.isArray(st.conditions) ? st.conditions : [];
  return conds.some((c) => isRecord(c) && c.type === 'Ready' && c.status === 'True');
}

/** Names of the pods the EndpointSlice controller would list for `selector`. */
async function expectedEndpoints(client: KubeClient, namespace: string, selector: Record<string, string>, publishNotReady: boolean, signal: AbortSignal): Promise<{ expected: Set<string>; ready: number }> {
  const { items } = await client.list('v1', 'Pod', { namespace, labelSelector: selectorText(selector), signal });
  const expected = new Set<string>();
  let ready = 0;
  for (const p of items) {
    if (p.metadata.deletionTimestamp) continue;
    const st = isRecord(p.status) ? p.status : {};
    const isReady = podReady(p);
    if (isReady) ready++;
    if (typeof st.podIP === 'string' && st.podIP && (isReady || publishNotReady)) expected.add(p.metadata.name ?? '');
  }
  return { expected, ready };
}

/** Ready endpoints of a Service (deduplicated over EndpointSlices, e.g. one per IP family). */
async function currentEndpoints(client: KubeClient, namespace: string, service: string, signal: AbortSignal): Promise<Set<string>> {
  const { items } = await client.list('discovery.k8s.io/v1', 'EndpointSlice', { namespace, labelSelector: `${SERVICE_NAME_LABEL}=${service}`, signal });
  const out = new Set<string>();
  for (const s of items) {
    for (const ep of Array.isArray(s.endpoints) ? s.endpoints : []) {
      if (!isRecord(ep)) continue;
      const cond = isRecord(ep.conditions) ? ep.conditions : {};
      if (cond.ready === false) continue;
      const target = isRecord(ep.targetRef) && typeof ep.targetRef.name === 'string' ? ep.targetRef.name : undefined;
      const addr = Array.isArray(ep.addresses) && typeof ep.addresses[0] === 'string' ? ep.addresses[0] : undefined;
      const key = target ?? addr;
      if (key) out.add(key);
    }
  }
  return out;
}

const sameSet = (a: Set<string>, b: Set<string>): boolean => a.size === b.size && [...a].every((x) => b.has(x));

async function run(args: K8sServiceSwitchArgs, ctx: ModuleContext): Promise<ModuleResult> {
  const { service, namespace } = args;
  const drain = args.drain_label;
  const minReady = args.min_ready;
  const timeoutMs = args.endpoints_timeout * 1000;
  if (args.selector === undefined && args.state === undefined) {
    return { status: 'failed', msg: 'lb_switch (k8s_service): give `selector` (switch colour), `state` (drain / ready) or both' };
  }
  const clash = Object.keys(args.selector ?? {}).filter((k) => k in drain);
  if (clash.length) {
    return { status: 'failed', msg: `lb_switch (k8s_service): \`selector\` sets ${clash.join(', ')}, which is the drain label; use \`state: drain|ready\` for it` };
  }
  const client = await clientFor(ctx);
  const ref: ObjectRef = { apiVersion: 'v1', kind: 'Service', name: service, namespace };
  const target = `${namespace}/${service}`;
  const label = where(ref, client.name);

  let endpointsBefore: Set<string> | undefined;
  const outcome = await readModifyWrite<SelectorPlan>(client, ref, ctx, async (live) => {
    const spec = isRecord(live.spec) ? live.spec : {};
    const previous = stringMap(spec.selector);
    if (Object.keys(previous).length === 0) {
      throw new LbError(
        `${label} has no selector (type ${String(spec.type ?? 'ClusterIP')}; its endpoints are managed by hand or it is an ExternalName): ` +
          'k8s_service switches traffic by editing the selector',
      );
    }
    const next = { ...previous };
    for (const [k, v] of Object.entries(args.selector ?? {})) {
      if (v === null) delete next[k];
      else next[k] = v;
    }
    if (args.state === 'drain') Object.assign(next, drain);
    else if (args.state === 'ready') for (const k of Object.keys(drain)) delete next[k];
    if (Object.keys(next).length === 0) throw new LbError(`the new selector of ${label} would be empty (it would select every pod in the namespace)`);
    const patchSel: Record<string, string | null> = {};
    const changes: string[] = [];
    for (const k of [...new Set([...Object.keys(previous), ...Object.keys(next)])].sort()) {
      if (previous[k] === next[k]) continue;
      patchSel[k] = next[k] ?? null;
      changes.push(previous[k] === undefined ? `+${k}=${next[k]}` : next[k] === undefined ? `-${k}=${previous[k]}` : `${k}: ${previous[k]} → ${next[k]}`);
    }
    const plan: SelectorPlan = {
      previous,
      next,
      changes,
      drainedBefore: isDrained(previous, drain),
      drainedAfter: isDrained(next, drain),
      publishNotReady: spec.publishNotReadyAddresses === true,
    };
    endpointsBefore = await currentEndpoints(client, namespace, service, ctx.signal);
    if (changes.length === 0) return { plan, patch: undefined };
    if (!plan.drainedAfter) {
      const { ready } = await expectedEndpoints(client, namespace, next, plan.publishNotReady, ctx.signal);
      plan.readyPods = ready;
      if (ready < minReady) {
        throw new LbError(
          `refusing to switch ${label} to selector ${selectorText(next)}: it matches ${ready} ready pod(s), min_ready is ${minReady}; nothing was changed`,
        );
      }
    }
    return { plan, patch: { spec: { selector: patchSel } } };
  });

  const { plan } = outcome;
  const before = endpointsBefore ?? new Set<string>();
  let endpointsAfter = before.size;
  let endpointsNote = '';
  let waitError: string | undefined;
  if (outcome.written) {
    ctx.log.info(`lb_switch: ${label}: selector ${plan.changes.join(', ')}`);
    const expectedSel = plan.drainedAfter ? undefined : plan.next;
    const started = Date.now();
    let last = before;
    let expected = new Set<string>();
    for (;;) {
      expected = expectedSel ? (await expectedEndpoints(client, namespace, expectedSel, plan.publishNotReady, ctx.signal)).expected : new Set<string>();
      last = await currentEndpoints(client, namespace, service, ctx.signal);
      if (sameSet(last, expected)) break;
      const waited = Date.now() - started;
      if (waited >= timeoutMs) {
        if (timeoutMs > 0) {
          waitError = `selector switched, but after ${Math.round(waited / 100) / 10}s the Service's EndpointSlices list ${last.size} ready endpoint(s), expected ${expected.size} (endpoints_timeout ${timeoutMs / 1000}s)`;
        } else endpointsNote = ' (not waited for)';
        break;
      }
      ctx.log.progress(`waiting for the endpoints of ${target}: ${last.size} listed, ${expected.size} expected`);
      if (!(await sleep(ENDPOINTS_POLL_MS, ctx.signal))) {
        waitError = 'aborted while waiting for the endpoints to follow the new selector';
        break;
      }
    }
    endpointsAfter = last.size;
  } else if (outcome.changed) {
    // Check mode: what the EndpointSlice controller would list for the new selector.
    endpointsAfter = plan.drainedAfter ? 0 : (await expectedEndpoints(client, namespace, plan.next, plan.publishNotReady, ctx.signal)).expected.size;
    endpointsNote = ' (predicted)';
  }

  const data: Record<string, unknown> = {
    provider: 'k8s_service',
    target,
    cluster: client.name,
    previous_selector: plan.previous,
    selector: plan.next,
    drained: plan.drainedAfter,
    previous_drained: plan.drainedBefore,
    endpoints_before: before.size,
    endpoints_after: endpointsAfter,
    resource_version: outcome.written ? outcome.after.metadata.resourceVersion : outcome.before.metadata.resourceVersion,
  };
  if (plan.readyPods !== undefined) data.ready_pods = plan.readyPods;
  const diff: DiffEntry[] | undefined = ctx.diffMode
    ? [{ label: `Service ${target} selector (cluster ${client.name})`, before: selectorYaml(plan.previous), after: selectorYaml(plan.next) }]
    : undefined;
  const what = (): string => {
    if (args.state === 'drain' && !plan.drainedBefore && plan.drainedAfter && plan.changes.length === Object.keys(drain).length) return 'drained';
    if (args.state === 'ready' && plan.drainedBefore && !plan.drainedAfter && plan.changes.length === Object.keys(drain).length) return 'back in service';
    return `selector ${plan.changes.join(', ')}`;
  };
  const eps = `endpoints ${before.size} → ${endpointsAfter}${endpointsNote}`;
  if (!outcome.changed) {
    const state = plan.drainedAfter ? 'drained' : 'in service';
    return { status: 'ok', msg: `${label}: already ${state}, selector ${selectorText(plan.next)} (${before.size} endpoint(s))`, data, ...(diff ? { diff } : {}) };
  }
  if (waitError) return { status: 'failed', msg: `${label}: ${what()}; ${waitError}`, data, ...(diff ? { diff } : {}) };
  const prefix = ctx.checkMode ? 'would switch ' : '';
  return { status: 'changed', msg: `${prefix}${label}: ${what()}; ${eps}`, data, ...(diff ? { diff } : {}) };
}


/** The `k8s_service` provider. */
export const k8sServiceProvider: LbProvider<typeof schema> = {
  name: 'k8s_service',
  summary:
    "Kubernetes Service selector: switch blue/green (`selector`) or drain / restore this cluster's endpoints (`state`).",
  narrow: { state: { enum: ['ready', 'drain'] } },
  schema,
  run: guard('k8s_service', (a) => `${a.namespace}/${a.service}`, run),
};

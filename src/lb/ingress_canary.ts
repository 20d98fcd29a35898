/**
 * `lb_switch` provider `ingress_canary`: set the share of traffic an ingress-nginx canary Ingress
 * receives, through its annotations `nginx.ingress.kubernetes.io/canary: "true"` and
 * `nginx.ingress.kubernetes.io/canary-weight: "N"` (written with a resourceVersion-guarded merge
 * patch, see `k8s_common.ts`).
 */
import YAML from 'yaml';
import type { KubeClient, KubeObject, ObjectRef } from '../k8s/types.js';
import type { DiffEntry, ModuleContext, ModuleResult } from '../core/module.js';
import { clientFor, guard, integerWeight, LbError, readModifyWrite, stringMap, where } from './k8s_common.js';
import { isRecord } from '../core/shape.js';
import { Type, type Args } from '../core/args.js';
import type { LbProvider } from './provider.js';
import { NAMESPACE_PROPERTY, WEIGHT_PROPERTY } from './shared.js';

const schema = Type.Object({
  provider: Type.Literal('ingress_canary'),
  ingress: Type.String({
    minLength: 1,
    maxLength: 253,
    description:
      '(ingress_canary, required) Name of the canary Ingress: the second Ingress for the same host and path as the main one, pointing at the new version. Never the main Ingress.',
  }),
  namespace: NAMESPACE_PROPERTY,
  weight: WEIGHT_PROPERTY,
});

/** Arguments of `lb_switch` with `provider: ingress_canary`. */
export type IngressCanarySwitchArgs = Args<typeof schema>;

/** ingress-nginx annotation prefix. */
const P = 'nginx.ingress.kubernetes.io/';
/** Marks an Ingress as a canary. */
export const CANARY = `${P}canary`;
/** Share of requests (out of `canary-weight-total`, default 100) routed to the canary. */
export const CANARY_WEIGHT = `${P}canary-weight`;
/** Total the weight is relative to. */
export const CANARY_WEIGHT_TOTAL = `${P}canary-weight-total`;
/** Canary rules that take precedence over the weight. */
const CANARY_OVERRIDES = [`${P}canary-by-header`, `${P}canary-by-cookie`];

function canaryYaml(ann: Record<string, string>): string {
  const shown: Record<string, string> = {};
  for (const k of Object.keys(ann).sort()) if (k.startsWith(`${P}canary`)) shown[k] = ann[k] ?? '';
  return YAML.stringify({ annotations: shown }, { lineWidth: 0 });
}

function parseWeight(v: string | undefined): number | undefined {
  return v !== undefined && /^\s*\d+\s*$/.test(v) ? Number(v) : undefined;
}

interface CanaryPlan {
  previous: Record<string, string>;
  next: Record<string, string>;
  previousWeight: number | undefined;
  previousCanary: boolean;
  total: number;
}

function hostsOf(o: KubeObject): Set<string> {
  const spec = isRecord(o.spec) ? o.spec : {};
  const rules = Array.isArray(spec.rules) ? spec.rules : [];
  return new Set(rules.map((r) => (isRecord(r) && typeof r.host === 'string' ? r.host : '')));
}

/**
 * Making an Ingress a canary only works next to a main (non-canary) Ingress for the same host:
 * ingress-nginx ignores a canary without one, so marking the only Ingress would drop its traffic.
 */
async function requireMainIngress(client: KubeClient, live: KubeObject, label: string, signal: AbortSignal): Promise<void> {
  const hosts = hostsOf(live);
  const { items } = await client.list('networking.k8s.io/v1', 'Ingress', { namespace: live.metadata.namespace, signal });
  const main = items.find(
    (o) => o.metadata.name !== live.metadata.name && stringMap(o.metadata.annotations)[CANARY] !== 'true' && [...hostsOf(o)].some((h) => hosts.has(h)),
  );
  if (!main) {
    const shown = [...hosts].map((h) => h || '(any host)').join(', ');
    throw new LbError(
      `${label} is not a canary yet and no other (main) Ingress in its namespace serves ${shown}: ` +
        'marking it as a canary would drop its traffic (ingress-nginx ignores a canary without a main Ingress); nothing was changed',
    );
  }
}

async function run(args: IngressCanarySwitchArgs, ctx: ModuleContext): Promise<ModuleResult> {
  const { ingress, namespace } = args;
  const weight = integerWeight(args.weight);
  const client = await clientFor(ctx);
  const ref: ObjectRef = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: ingress, namespace };
  const label = where(ref, client.name);
  const target = `${namespace}/${ingress}`;
  const out = await readModifyWrite<CanaryPlan>(client, ref, ctx, async (live) => {
    const previous = stringMap(live.metadata.annotations);
    const totalText = previous[CANARY_WEIGHT_TOTAL];
    const total = parseWeight(totalText) ?? 100;
    if (totalText !== undefined && parseWeight(totalText) === undefined) {
      throw new LbError(`${label} has an invalid ${CANARY_WEIGHT_TOTAL} annotation: '${totalText}'`);
    }
    if (weight > total) throw new LbError(`weight ${weight} is above ${total}, the total of ${label} (${CANARY_WEIGHT_TOTAL}: ${totalText ?? 'unset, 100'})`);
    const next: Record<string, string> = { ...previous, [CANARY]: 'true', [CANARY_WEIGHT]: String(weight) };
    const patch: Record<string, string> = {};
    for (const k of [CANARY, CANARY_WEIGHT]) if (previous[k] !== next[k]) patch[k] = next[k] ?? '';
    if (previous[CANARY] !== 'true') await requireMainIngress(client, live, label, ctx.signal);
    const plan: CanaryPlan = { previous, next, previousWeight: parseWeight(previous[CANARY_WEIGHT]), previousCanary: previous[CANARY] === 'true', total };
    return { plan, patch: Object.keys(patch).length ? { metadata: { annotations: patch } } : undefined };
  });
  const { plan } = out;
  const overrides = CANARY_OVERRIDES.filter((k) => plan.next[k] !== undefined);
  if (overrides.length) {
    ctx.log.warn(`${label} also sets ${overrides.join(', ')}: requests matching those rules ignore the canary weight`);
  }
  const data: Record<string, unknown> = {
    provider: 'ingress_canary',
    target,
    cluster: client.name,
    previous_weight: plan.previousWeight ?? null,
    weight,
    weight_total: plan.total,
    previous_canary: plan.previousCanary,
    canary: true,
    resource_version: out.written ? out.after.metadata.resourceVersion : out.before.metadata.resourceVersion,
  };
  const diff: DiffEntry[] | undefined = ctx.diffMode
    ? [{ label: `Ingress ${target} canary annotations (cluster ${client.name})`, before: canaryYaml(plan.previous), after: canaryYaml(plan.next) }]
    : undefined;
  const withDiff = diff ? { diff } : {};
  const pct = (w: number | undefined): string => (w === undefined ? 'unset' : plan.total === 100 ? `${w}%` : `${w}/${plan.total}`);
  if (!out.changed) return { status: 'ok', msg: `${label}: canary weight already ${pct(weight)}`, data, ...withDiff };
  if (out.written) ctx.log.info(`lb_switch: ${label}: canary weight ${pct(plan.previousWeight)} → ${pct(weight)}`);
  const parts = [`canary weight ${pct(plan.previousWeight)} → ${pct(weight)}`];
  if (!plan.previousCanary) parts.push(`${CANARY}: "true" (was ${plan.previous[CANARY] === undefined ? 'unset' : `"${plan.previous[CANARY]}"`})`);
  return { status: 'changed', msg: `${ctx.checkMode ? 'would set ' : ''}${label}: ${parts.join(', ')}`, data, ...withDiff };
}

/** The `ingress_canary` provider. */
export const ingressCanaryProvider: LbProvider<typeof schema> = {
  name: 'ingress_canary',
  summary: 'ingress-nginx canary Ingress: set the `canary` / `canary-weight` annotations.',
  narrow: { weight: { type: 'integer' } },
  schema,
  run: guard('ingress_canary', (a) => `${a.namespace}/${a.ingress}`, run),
};

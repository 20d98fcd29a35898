/**
 * `lb_switch` provider `httproute`: set the `weight` of a backendRef in a Gateway API
 * `HTTPRoute` (`gateway.networking.k8s.io/v1`), in one rule or in every rule that references the
 * backend. `rules` is a list, which a merge patch replaces wholesale, so the whole list is sent
 * back with only the weights changed, guarded by the resourceVersion that was read (see
 * `k8s_common.ts`): a concurrent edit makes the apiserver answer 409 and we recompute.
 */
import YAML from 'yaml';
import type { ObjectRef } from '../k8s/types.js';
import type { DiffEntry, ModuleContext, ModuleResult } from '../core/module.js';
import { clientFor, guard, integerWeight, LbError, readModifyWrite, where } from './k8s_common.js';
import { isRecord } from '../core/shape.js';
import { Type, type Args } from '../core/args.js';
import type { LbProvider } from './provider.js';
import { BACKEND_PROPERTY, NAMESPACE_PROPERTY, WEIGHT_PROPERTY } from './shared.js';

const schema = Type.Object({
  provider: Type.Literal('httproute'),
  route: Type.String({ minLength: 1, maxLength: 253, description: '(httproute, required) Name of the HTTPRoute.' }),
  namespace: NAMESPACE_PROPERTY,
  backend: BACKEND_PROPERTY,
  rule: Type.Optional(Type.Integer({ minimum: 0, description: '(httproute) Index (0-based) of the rule to change. Default: every rule that references `backend`.' })),
  weight: WEIGHT_PROPERTY,
});

/** Arguments of `lb_switch` with `provider: httproute`. */
export type HttpRouteSwitchArgs = Args<typeof schema>;

/** Gateway API's default backendRef weight. */
const DEFAULT_WEIGHT = 1;
const CRD_HINT = 'the Gateway API CRDs (httproutes.gateway.networking.k8s.io) are not installed';

/** One backendRef whose weight is (or would be) set. */
interface RefChange {
  rule: number;
  /** Index in the rule's backendRefs. */
  index: number;
  previous: number;
  /** Whether `weight` was absent (defaults to 1). */
  defaulted: boolean;
  /** Sum of the rule's weights after the change. */
  ruleTotal: number;
}

interface RoutePlan {
  changes: RefChange[];
  /** The affected rules' backendRefs before / after (for the diff). */
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}

const refsOf = (rule: unknown): unknown[] => (isRecord(rule) && Array.isArray(rule.backendRefs) ? rule.backendRefs : []);
const nameOf = (ref: unknown): string | undefined => (isRecord(ref) && typeof ref.name === 'string' ? ref.name : undefined);
const weightOf = (ref: unknown): number | undefined => (isRecord(ref) && typeof ref.weight === 'number' ? ref.weight : undefined);

/** `a (rules 0, 1), b (rule 0)` — every backendRef name and where it is used. */
function knownBackends(rules: unknown[]): string {
  const uses = new Map<string, number[]>();
  rules.forEach((r, i) => {
    for (const ref of refsOf(r)) {
      const n = nameOf(ref);
      if (n === undefined) continue;
      const l = uses.get(n) ?? [];
      if (!l.includes(i)) l.push(i);
      uses.set(n, l);
    }
  });
  if (uses.size === 0) return '(none)';
  return [...uses].map(([n, l]) => `${n} (rule${l.length > 1 ? 's' : ''} ${l.join(', ')})`).join(', ');
}

function plan(rules: unknown[], args: HttpRouteSwitchArgs, label: string): { plan: RoutePlan; rules: unknown[] | undefined } {
  const { backend } = args;
  const weight = integerWeight(args.weight);
  if (args.rule !== undefined && args.rule >= rules.length) {
    throw new LbError(`${label} has no rule ${args.rule}: it has ${rules.length} rule(s)${rules.length ? ` (0–${rules.length - 1})` : ''}`);
  }
  const indexes = args.rule !== undefined ? [args.rule] : rules.map((_, i) => i);
  const matched = indexes.filter((i) => refsOf(rules[i]).some((ref) => nameOf(ref) === backend));
  if (matched.length === 0) {
    const scope = args.rule !== undefined ? `rule ${args.rule} of ${label}` : label;
    const known = args.rule !== undefined ? knownBackends([rules[args.rule]]).replace(/ \(rule 0\)/g, '') : knownBackends(rules);
    throw new LbError(`unknown backend '${backend}' in ${scope}; known backendRefs: ${known}`);
  }
  const next = rules.map((r) => (isRecord(r) ? { ...r, backendRefs: refsOf(r).map((ref) => (isRecord(ref) ? { ...ref } : ref)) } : r));
  const changes: RefChange[] = [];
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  let dirty = false;
  for (const i of matched) {
    const refs = refsOf(next[i]);
    let total = 0;
    refs.forEach((ref, n) => {
      if (nameOf(ref) === backend && isRecord(ref)) {
        const prev = weightOf(ref);
        changes.push({ rule: i, index: n, previous: prev ?? DEFAULT_WEIGHT, defaulted: prev === undefined, ruleTotal: 0 });
        if ((prev ?? DEFAULT_WEIGHT) !== weight) {
          ref.weight = weight;
          dirty = true;
        }
      }
      total += weightOf(ref) ?? DEFAULT_WEIGHT;
    });
    for (const c of changes) if (c.rule === i) c.ruleTotal = total;
    before[`rules[${i}].backendRefs`] = refsOf(rules[i]);
    after[`rules[${i}].backendRefs`] = refs;
  }
  return { plan: { changes, before, after }, rules: dirty ? next : undefined };
}

const pct = (w: number, total: number): number => (total > 0 ? Math.round((w / total) * 1000) / 10 : 0);

async function run(args: HttpRouteSwitchArgs, ctx: ModuleContext): Promise<ModuleResult> {
  const { route, namespace, backend } = args;
  const weight = integerWeight(args.weight);
  const client = await clientFor(ctx);
  const ref: ObjectRef = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', name: route, namespace };
  const label = where(ref, client.name);
  const target = `${namespace}/${route}`;
  const out = await readModifyWrite<RoutePlan>(
    client,
    ref,
    ctx,
    (live) => {
      const spec = isRecord(live.spec) ? live.spec : {};
      const rules = Array.isArray(spec.rules) ? spec.rules : [];
      const p = plan(rules, args, label);
      return { plan: p.plan, patch: p.rules ? { spec: { rules: p.rules } } : undefined };
    },
    CRD_HINT,
  );
  const { changes } = out.plan;
  const prevs = [...new Set(changes.map((c) => c.previous))];
  const data: Record<string, unknown> = {
    provider: 'httproute',
    target,
    cluster: client.name,
    backend,
    previous_weight: prevs.length === 1 ? prevs[0] : prevs,
    weight,
    rules: changes.map((c) => ({
      rule: c.rule,
      backend_ref: c.index,
      previous_weight: c.previous,
      weight,
      traffic_percent: pct(weight, c.ruleTotal),
    })),
    resource_version: out.written ? out.after.metadata.resourceVersion : out.before.metadata.resourceVersion,
  };
  const diff: DiffEntry[] | undefined = ctx.diffMode
    ? [{ label: `HTTPRoute ${target} backendRefs (cluster ${client.name})`, before: YAML.stringify(out.plan.before, { lineWidth: 0 }), after: YAML.stringify(out.plan.after, { lineWidth: 0 }) }]
    : undefined;
  const withDiff = diff ? { diff } : {};
  const ruleList = [...new Set(changes.map((c) => c.rule))];
  const rulesText = `rule${ruleList.length > 1 ? 's' : ''} ${ruleList.join(', ')}`;
  const share = changes.map((c) => `${pct(weight, c.ruleTotal)}%`);
  const shareText = [...new Set(share)].length === 1 ? share[0] : share.join(' / ');
  if (!out.changed) return { status: 'ok', msg: `${label}: backend ${backend} already has weight ${weight} in ${rulesText} (${shareText} of the traffic)`, data, ...withDiff };
  const prevText = changes.map((c) => `${c.previous}${c.defaulted ? ' (default)' : ''}`);
  const from = [...new Set(prevText)].join('/');
  if (out.written) ctx.log.info(`lb_switch: ${label}: ${backend} weight ${from} → ${weight}`);
  return {
    status: 'changed',
    msg: `${ctx.checkMode ? 'would set ' : ''}${label}: backend ${backend} weight ${from} → ${weight} in ${rulesText} (${shareText} of the traffic)`,
    data,
    ...withDiff,
  };
}

/** The `httproute` provider. */
export const httpRouteProvider: LbProvider<typeof schema> = {
  name: 'httproute',
  summary: 'Gateway API HTTPRoute (`gateway.networking.k8s.io/v1`): set the `weight` of a backendRef.',
  narrow: { weight: { type: 'integer' } },
  schema,
  run: guard('httproute', (a) => `${a.namespace}/${a.route}`, run),
};

/**
 * A plan is a value: what a playbook would change, per cluster and task (objects and fields with
 * their diffs, Helm chart/values changes, load balancer actions), secrets masked, plus digests of
 * the inputs it was computed from. It can be printed (`kplay show`), stored, approved (`kplay
 * approve`, bound to its digest) and carried out (`kplay run --plan`), which refuses when the
 * inputs or the live state moved since: the check-mode pass before the run must find exactly the
 * planned changes, object by object.
 */
import { canonicalJson } from '../k8s/normalize.js';
import { sha256 } from '../audit/chain.js';
import type { RunEvent } from '../report/events.js';
import type { DiffEntry } from '../core/module.js';
import type { InputsDigest } from './inputs.js';
import { isRecord } from '../core/shape.js';

/** Plan file format version. */
export const PLAN_VERSION = 1;

/** One task result of the check-mode pass that would change something (or failed). */
export interface PlannedTask {
  task: string;
  module?: string;
  item?: string;
  status: 'changed' | 'failed' | 'unreachable';
  msg?: string;
  /** Per object / release / LB entry: the masked before/after texts. */
  diff: DiffEntry[];
}

/** An approval, bound to the digest of the plan it approved. */
export interface Approval {
  by: string;
  at: string;
  digest: string;
  comment?: string;
}

/** The plan file. */
export interface Plan {
  kplay_plan: number;
  created: string;
  created_by: string;
  playbook: string;
  inventory: string;
  limit?: string;
  tags: string[];
  skip_tags: string[];
  extra_var_names: string[];
  inputs: InputsDigest;
  /** Cluster → the tasks that would change it (clusters without changes have an empty list). */
  clusters: Record<string, PlannedTask[]>;
  /** Problems of the check-mode pass (failed tasks, unreachable clusters): such a plan cannot be carried out. */
  errors: { cluster: string; task: string; msg?: string }[];
  /** SHA-256 of everything above (approvals excluded). */
  digest: string;
  approvals: Approval[];
}

/** Collects the events of a check-mode run into the changes of a plan. */
export class PlanCollector {
  readonly clusters: Record<string, PlannedTask[]> = {};
  readonly errors: { cluster: string; task: string; msg?: string }[] = [];

  onEvent(e: RunEvent): void {
    if (e.type === 'play_start') for (const c of e.clusters) this.clusters[c] ??= [];
    if (e.type !== 'task_result' || e.loop_summary) return;
    const list = (this.clusters[e.cluster] ??= []);
    if (e.status === 'changed') list.push({ task: e.task, module: e.module, item: e.item, status: 'changed', msg: e.msg, diff: (e.diff ?? []).filter((d) => d.before !== d.after) });
    else if ((e.status === 'failed' && !e.ignored) || e.status === 'unreachable') {
      list.push({ task: e.task, module: e.module, item: e.item, status: e.status, msg: e.msg, diff: [] });
      this.errors.push({ cluster: e.cluster, task: e.task, msg: e.msg });
    }
  }
}

/** The digest of a plan's content (everything but `digest` and `approvals`). */
export function planDigest(plan: Omit<Plan, 'digest' | 'approvals'> & Partial<Pick<Plan, 'digest' | 'approvals'>>): string {
  const { digest, approvals, ...content } = plan;
  void digest;
  void approvals;
  return sha256(canonicalJson(content));
}

/** Approvals that are bound to the plan as it is now (an edited plan loses them). */
export function validApprovals(plan: Plan): Approval[] {
  const digest = planDigest(plan);
  return plan.digest === digest ? plan.approvals.filter((a) => a.digest === digest) : [];
}


/** Parse a plan file's JSON, checking its shape (throws a message saying what is wrong). */
export function parsePlan(text: string, file: string): Plan {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file} is not a kplay plan (not JSON: ${e instanceof Error ? e.message : String(e)})`);
  }
  if (!isRecord(v) || v.kplay_plan !== PLAN_VERSION) throw new Error(`${file} is not a kplay plan of version ${PLAN_VERSION} (make it with kplay plan PLAYBOOK -i INV -o ${file})`);
  for (const k of ['created', 'created_by', 'playbook', 'inventory', 'digest'] as const) if (typeof v[k] !== 'string') throw new Error(`${file}: ${k} is missing`);
  if (!isRecord(v.clusters) || !isRecord(v.inputs) || !Array.isArray(v.approvals) || !Array.isArray(v.errors)) throw new Error(`${file}: clusters, inputs, errors or approvals are missing`);
  return v as unknown as Plan;
}

/** A difference between the plan and a fresh check-mode pass, naming cluster, task and object. */
export interface PlanMismatch {
  cluster: string;
  task: string;
  object?: string;
  reason: string;
}

const key = (t: PlannedTask): string => `${t.task}\u0000${t.item ?? ''}`;
const label = (t: PlannedTask): string => `${t.task}${t.item ? ` (item=${t.item})` : ''}`;

/**
 * What differs between the planned changes and those of a fresh check-mode pass: tasks that would
 * now change more, less or something else, objects whose live state (the diff's before side) or
 * desired state (its after side) moved. Empty: the plan still holds.
 */
export function comparePlans(planned: Record<string, PlannedTask[]>, fresh: Record<string, PlannedTask[]>): PlanMismatch[] {
  const out: PlanMismatch[] = [];
  for (const cluster of [...new Set([...Object.keys(planned), ...Object.keys(fresh)])].sort()) {
    const p = new Map((planned[cluster] ?? []).map((t) => [key(t), t]));
    const f = new Map((fresh[cluster] ?? []).map((t) => [key(t), t]));
    if (!(cluster in planned)) {
      out.push({ cluster, task: '-', reason: 'the cluster is not in the plan' });
      continue;
    }
    for (const [k, t] of p) {
      const now = f.get(k);
      if (!now) {
        out.push({ cluster, task: label(t), reason: 'the plan changes something here, but now nothing would change (the change was made by someone else?)' });
        continue;
      }
      if (now.status !== t.status) {
        out.push({ cluster, task: label(t), reason: `planned ${t.status}, now ${now.status}${now.msg ? `: ${now.msg}` : ''}` });
        continue;
      }
      const pd = new Map(t.diff.map((d) => [d.label, d]));
      const fd = new Map(now.diff.map((d) => [d.label, d]));
      for (const [l, d] of pd) {
        const n = fd.get(l);
        if (!n) out.push({ cluster, task: label(t), object: l, reason: 'planned to change, now unchanged' });
        else if (n.before !== d.before) out.push({ cluster, task: label(t), object: l, reason: 'its live state moved since the plan (edited by someone?)' });
        else if (n.after !== d.after) out.push({ cluster, task: label(t), object: l, reason: 'its desired state is no longer the planned one' });
      }
      for (const l of fd.keys()) if (!pd.has(l)) out.push({ cluster, task: label(t), object: l, reason: 'would now change, but is not in the plan' });
      if (t.diff.length === 0 && now.diff.length === 0 && (now.msg ?? '') !== (t.msg ?? '')) out.push({ cluster, task: label(t), reason: `planned "${t.msg ?? ''}", now "${now.msg ?? ''}"` });
    }
    for (const [k, t] of f) if (!p.has(k)) out.push({ cluster, task: label(t), reason: `would now change, but the plan changes nothing here${t.diff.length ? `: ${t.diff.map((d) => d.label).join(', ')}` : t.msg ? `: ${t.msg}` : ''}` });
  }
  return out;
}

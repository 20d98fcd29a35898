/**
 * When a run is refused because of plans (exit 5): a plan file that was edited after it was made
 * or whose check-mode pass failed, clusters that require an approved plan (`require_approval:
 * true` in their inventory vars or in the vars of a play that targets them) and have none, and
 * a plan that no longer holds — its inputs changed, or a fresh check-mode pass finds other
 * changes than the planned ones (cluster, task and object named).
 */
import { readFile } from 'node:fs/promises';
import { inventoryVars } from '../inventory/host-vars.js';
import { matchClusters } from '../inventory/patterns.js';
import type { Inventory } from '../inventory/types.js';
import { InputError } from '../load/errors.js';
import { playClusters } from '../playbook/targets.js';
import type { Playbook } from '../playbook/types.js';
import type { ModuleRegistry } from '../plugins/registry.js';
import type { Masker } from '../core/mask.js';
import { inputChanges, inputsDigest } from './inputs.js';
import { comparePlans, parsePlan, planDigest, type Approval, type Plan, type PlannedTask } from './plan-file.js';

/** Why a run is refused: one line per reason, and what to do next. */
export interface Refusal {
  lines: string[];
  hint: string;
}

/** Read and check a plan file: its digest must match its content. */
export async function readPlan(file: string): Promise<{ plan: Plan; intact: boolean }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new InputError(`cannot read plan ${file}`, undefined, 'make one with kplay plan PLAYBOOK -i INV -o FILE');
  }
  let plan: Plan;
  try {
    plan = parsePlan(text, file);
  } catch (e) {
    throw new InputError(e instanceof Error ? e.message : String(e));
  }
  return { plan, intact: planDigest(plan) === plan.digest };
}

/** A plan read for `kplay run --plan FILE` that cannot be carried out at all (edited, or its pass failed). */
export function brokenPlan(file: string, read: { plan: Plan; intact: boolean }): Refusal | undefined {
  if (!read.intact) return { lines: [`${file} was modified after it was made (its digest does not match its content)`], hint: 'make a new plan with kplay plan' };
  if (read.plan.errors.length) return { lines: read.plan.errors.map((e) => `${e.cluster}: ${e.task}: ${e.msg ?? 'failed'} (in the plan's check-mode pass)`), hint: 'fix them and make a new plan' };
  return undefined;
}

/**
 * Clusters this run would change that require an approved plan (`require_approval: true` in
 * their inventory vars, or in the vars of a play that targets them), with the reason.
 */
export function approvalRequired(playbook: Playbook, inv: Inventory, limit: string | undefined): { cluster: string; why: string }[] {
  const limited = limit ? new Set(matchClusters(inv, limit)) : undefined;
  const truthy = (v: unknown): boolean => v === true || v === 'true' || v === 'yes';
  const out = new Map<string, string>();
  for (const play of playbook.plays) {
    for (const c of playClusters(inv, play.hosts).clusters) {
      if (limited && !limited.has(c)) continue;
      if (truthy(inventoryVars(inv, c).require_approval)) out.set(c, 'require_approval in its inventory vars');
      else if (truthy(play.vars.require_approval) && !out.has(c)) out.set(c, `require_approval in play "${play.name ?? play.hosts.toString()}"`);
    }
  }
  return [...out].map(([cluster, why]) => ({ cluster, why }));
}

/** What {@link approvalRefusal} decides on. */
export interface ApprovalCase {
  required: { cluster: string; why: string }[];
  /** The plan carried out (`--plan`), its file, and its valid approvals. */
  plan?: Plan;
  planFile?: string;
  approvals: Approval[];
  replan: boolean;
  /** For the hint: how the run was called. */
  playbook: string;
  inventory?: string;
}

/** A real run on clusters that require an approved plan: refused without one, or with `--replan`. */
export function approvalRefusal(c: ApprovalCase): Refusal | undefined {
  if (c.required.length && (!c.plan || c.approvals.length === 0)) {
    return {
      lines: c.required.map((r) => `${r.cluster} requires an approved plan (${r.why})`),
      hint: c.plan ? `approve it first: kplay approve ${c.planFile ?? ''}` : `make and approve a plan: kplay plan ${c.playbook} -i ${c.inventory ?? 'INV'} -o plan.json; kplay approve plan.json; kplay run --plan plan.json`,
    };
  }
  if (c.required.length && c.replan) return { lines: c.required.map((r) => `${r.cluster} requires an approved plan (${r.why}): --replan would change it beyond what was approved`), hint: 'make, approve and run a new plan' };
  return undefined;
}

/** The inputs of a run, as a plan's inputs digest covers them. */
export interface PlanInputs {
  playbook: Playbook;
  inventory?: Inventory;
  extraVars: Record<string, unknown>;
  registry: ModuleRegistry;
  masker: Masker;
}

/**
 * Why a plan cannot be carried out now (empty: it holds): its inputs changed, or the changes of a
 * fresh check-mode pass (`checkPass`, run only when the inputs are the same) differ from the planned ones.
 */
export async function planRefusals(plan: Plan, planFile: string | undefined, loaded: PlanInputs, checkPass: () => Promise<Record<string, PlannedTask[]>>): Promise<string[]> {
  const now = await inputsDigest({ playbookDir: loaded.playbook.dir, inventory: loaded.inventory, extraVars: loaded.masker.maskValue(loaded.extraVars), registry: loaded.registry, exclude: planFile ? [planFile] : [], mask: (t) => loaded.masker.mask(t) });
  const changed = inputChanges(plan.inputs, now);
  if (changed.length) return changed.map((c) => `input ${c}`);
  return comparePlans(plan.clusters, await checkPass()).map((m) => `cluster ${m.cluster}, task "${m.task}"${m.object ? `, ${m.object}` : ''}: ${m.reason}`);
}

/**
 * Making and approving plans: a plan's value from a check-mode pass and the inputs it ran on
 * (digest included), writing a plan file atomically (a reader never sees half a plan), and who
 * approves (`--as`, else the kubeconfig user, else the OS user@host).
 */
import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { whoAmI } from '../audit/record.js';
import { currentKubeUser } from '../k8s/kubeconfig.js';
import { inputsDigest } from './inputs.js';
import { PLAN_VERSION, planDigest, type Plan, type PlannedTask } from './plan-file.js';
import type { PlanInputs } from './refusal.js';

/** Write a file atomically (a reader never sees half a plan). */
export async function writeAtomic(file: string, text: string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, text, { mode: 0o644 });
  await rename(tmp, file);
}

/** Write a plan file (pretty JSON), atomically. */
export function writePlan(file: string, plan: Plan): Promise<void> {
  return writeAtomic(file, `${JSON.stringify(plan, null, 2)}\n`);
}

/** What a new plan is made of. */
export interface NewPlan {
  /** The playbook file as given. */
  playbookArg: string;
  /** The inventory as given (`''`: none). */
  inventoryArg: string;
  limit?: string;
  tags: string[];
  skipTags: string[];
  /** The plan file being written (left out of the inputs digest). */
  out: string;
  loaded: PlanInputs;
  /** The check-mode pass: changes per cluster, and its problems. */
  pass: { clusters: Record<string, PlannedTask[]>; errors: Plan['errors'] };
}

/** A new plan (unapproved, digest set) from a check-mode pass and the inputs it ran on. */
export async function makePlan(n: NewPlan): Promise<Plan> {
  const { loaded } = n;
  const masker = loaded.masker;
  const inputs = await inputsDigest({ playbookDir: loaded.playbook.dir, inventory: loaded.inventory, extraVars: masker.maskValue(loaded.extraVars), registry: loaded.registry, exclude: [n.out], mask: (t) => masker.mask(t) });
  const { user, host } = whoAmI();
  const content: Omit<Plan, 'digest' | 'approvals'> = {
    kplay_plan: PLAN_VERSION,
    created: new Date().toISOString(),
    created_by: `${user}@${host}`,
    playbook: path.relative(process.cwd(), path.resolve(n.playbookArg)) || n.playbookArg,
    inventory: n.inventoryArg,
    ...(n.limit ? { limit: n.limit } : {}),
    tags: n.tags,
    skip_tags: n.skipTags,
    extra_var_names: Object.keys(loaded.extraVars).sort(),
    inputs,
    clusters: n.pass.clusters,
    errors: n.pass.errors,
  };
  return { ...content, digest: planDigest(content), approvals: [] };
}

/** Who approves: `--as`, else the kubeconfig user, else the OS user@host. */
export function approver(as: string | undefined): string {
  if (as) return as;
  const { user, host } = whoAmI();
  const kube = currentKubeUser();
  return kube ? `${kube} (${user}@${host})` : `${user}@${host}`;
}

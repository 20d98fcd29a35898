/**
 * Change management commands:
 * - `kplay plan PLAYBOOK -i INV -o plan.json`: a check-mode pass everywhere, written as a plan;
 * - `kplay show plan.json`: the plan, readable (or `--output json`);
 * - `kplay approve plan.json [--as NAME]`: record an approval bound to the plan's digest;
 * and the check-mode pass `kplay run --plan plan.json` compares with the plan. Making, reading and
 * refusing plans is src/plan/ (make.ts, refusal.ts); this file maps flags to them and prints.
 */
import { existsSync } from 'node:fs';
import { EXIT, type ExitCode } from '../core/exit.js';
import { matchClusters } from '../inventory/patterns.js';
import { loadInventory } from '../inventory/resolve.js';
import { connect } from '../k8s/client.js';
import { decideGate, GATE_NAME } from '../audit/gate.js';
import { errorMessage, InputError } from '../load/errors.js';
import { approver, makePlan, writePlan } from '../plan/make.js';
import { PlanCollector, validApprovals, type Approval, type Plan } from '../plan/plan-file.js';
import { readPlan } from '../plan/refusal.js';
import { unifiedDiff } from '../report/diff.js';
import { listOption, reportError } from './common.js';
import { loadAll, type Loaded } from '../run/inputs.js';
import { hasKubeContext } from '../k8s/kubeconfig.js';
import { executeRun, type RunFlags } from './run-flags.js';


/** Flags of `kplay plan`. */
export interface PlanFlags extends RunFlags {
  /** Where to write the plan. */
  out: string;
}

/** Run the check-mode pass of a plan: the changes per cluster, and the problems. */
export async function checkPass(flags: RunFlags, loaded: Loaded): Promise<PlanCollector & { interrupted: boolean }> {
  const collector = new PlanCollector();
  const { summary } = await executeRun({ ...flags, check: true, diff: true, lock: false }, (e) => collector.onEvent(e), loaded);
  return Object.assign(collector, { interrupted: summary.interrupted });
}

export async function planCommand(playbook: string, flags: PlanFlags): Promise<ExitCode> {
  let loaded: Loaded | undefined;
  try {
    if (!flags.out) throw new InputError('kplay plan needs -o FILE', undefined, 'e.g. kplay plan upgrade.yml -i prod -o plan.json');
    loaded = await loadAll(playbook, flags, true);
    if (flags.verbose > 0) process.stderr.write('running the playbook in check mode...\n');
    const pass = await checkPass(flags, loaded);
    if (pass.interrupted) return EXIT.interrupted;
    const plan = await makePlan({ playbookArg: playbook, inventoryArg: flags.inventory ?? '', limit: flags.limit, tags: listOption(flags.tags), skipTags: listOption(flags.skipTags), out: flags.out, loaded, pass });
    await writePlan(flags.out, plan);
    printPlan(plan, { diff: flags.diff !== false, color: false });
    process.stdout.write(`\nplan written to ${flags.out} (digest ${plan.digest.slice(0, 16)})${plan.errors.length ? '' : `; carry it out with: kplay run --plan ${flags.out}`}\n`);
    if (plan.errors.length) {
      process.stdout.write(`the check-mode pass had ${plan.errors.length} error(s): this plan cannot be carried out\n`);
      return EXIT.failed;
    }
    return EXIT.ok;
  } catch (e) {
    return reportError(e, loaded?.masker);
  }
}

function printPlan(plan: Plan, opts: { diff: boolean; color: boolean }): void {
  const w = (s: string): boolean => process.stdout.write(`${s}\n`);
  const changes = Object.values(plan.clusters).reduce((n, l) => n + l.filter((t) => t.status === 'changed').length, 0);
  for (const [cluster, tasks] of Object.entries(plan.clusters)) {
    if (tasks.length === 0) {
      w(`${cluster}: no changes`);
      continue;
    }
    w(`${cluster}: ${tasks.filter((t) => t.status === 'changed').length} task(s) would change`);
    for (const t of tasks) {
      w(`  ${t.status === 'changed' ? '~' : '!'} ${t.task}${t.item ? ` (item=${t.item})` : ''}${t.module ? ` [${t.module}]` : ''}${t.msg ? `: ${t.msg}` : ''}`);
      if (!opts.diff) continue;
      for (const d of t.diff) {
        const text = unifiedDiff(d.before, d.after, d.label);
        if (text) w(text.replace(/^/gm, '      '));
      }
    }
  }
  w('');
  w(`${changes} change(s) on ${Object.values(plan.clusters).filter((l) => l.length).length} of ${Object.keys(plan.clusters).length} cluster(s)`);
}

/** `kplay show plan.json`. */
export async function showCommand(file: string, flags: { output: string; diff?: boolean }): Promise<ExitCode> {
  try {
    const { plan, intact } = await readPlan(file);
    const approvals = validApprovals(plan);
    if (flags.output === 'json') {
      process.stdout.write(`${JSON.stringify({ ...plan, intact, approved: approvals.length > 0 })}\n`);
      return intact ? EXIT.ok : EXIT.refused;
    }
    const w = (s: string): boolean => process.stdout.write(`${s}\n`);
    w(`plan ${file}: ${plan.playbook} on ${plan.inventory}${plan.limit ? ` (limit ${plan.limit})` : ''}`);
    w(`  made ${plan.created} by ${plan.created_by}; digest ${plan.digest}${intact ? '' : ' — MODIFIED after it was made: it cannot be approved or carried out'}`);
    w(`  inputs ${plan.inputs.digest.slice(0, 16)}: ${Object.keys(plan.inputs.files).length} file(s), ${Object.keys(plan.inputs.modules).length} module(s), kplay ${plan.inputs.kplay}${plan.extra_var_names.length ? `, extra vars ${plan.extra_var_names.join(', ')}` : ''}`);
    for (const a of plan.approvals) w(`  approved by ${a.by} at ${a.at}${a.comment ? ` (${a.comment})` : ''}${approvals.includes(a) ? '' : ' — NOT VALID: the plan changed since'}`);
    if (plan.approvals.length === 0) w('  not approved');
    w('');
    printPlan(plan, { diff: flags.diff !== false, color: false });
    for (const e of plan.errors) w(`! ${e.cluster}: ${e.task}: ${e.msg ?? ''}`);
    return intact ? EXIT.ok : EXIT.refused;
  } catch (e) {
    return reportError(e);
  }
}

/** `kplay approve plan.json [--as NAME] [--comment TEXT]`. */
export async function approvePlan(file: string, flags: { as?: string; comment?: string }): Promise<ExitCode> {
  let read: { plan: Plan; intact: boolean };
  try {
    if (!existsSync(file) && /^\d{8}T\d{6,9}-[0-9a-f]{6}$/.test(file)) {
      throw new InputError(`${file} is a run id, not a plan file`, undefined, `to approve a gate that run is waiting at: kplay approve ${file} --gate NAME -i INVENTORY`);
    }
    read = await readPlan(file);
  } catch (e) {
    return reportError(e);
  }
  const { plan, intact } = read;
  if (!intact) {
    process.stderr.write(`ERROR: ${file} was modified after it was made (its digest does not match): it cannot be approved. Make a new plan.\n`);
    return EXIT.refused;
  }
  if (plan.errors.length) {
    process.stderr.write(`ERROR: ${file} has ${plan.errors.length} error(s) from its check-mode pass: it cannot be approved. Fix them and make a new plan.\n`);
    return EXIT.refused;
  }
  const approval: Approval = { by: approver(flags.as), at: new Date().toISOString(), digest: plan.digest, ...(flags.comment ? { comment: flags.comment } : {}) };
  plan.approvals.push(approval);
  await writePlan(file, plan);
  process.stdout.write(`approved ${file} (digest ${plan.digest.slice(0, 16)}) by ${approval.by} at ${approval.at}\n`);
  return EXIT.ok;
}

/** `kplay approve RUN_ID --gate NAME -i INV [--limit P] [--reject]`: decide a gate a run is waiting at. */
export async function approveGate(runId: string, flags: { gate: string; inventory?: string; limit?: string; as?: string; comment?: string; reject?: boolean }): Promise<ExitCode> {
  try {
    if (!GATE_NAME.test(flags.gate)) throw new InputError(`--gate '${flags.gate}' is not a gate name (lower-case letters, digits, -)`);
    if (!flags.inventory) throw new InputError('approving a gate needs -i INVENTORY (the gate is held in the clusters)', undefined, `kplay approve ${runId} --gate ${flags.gate} -i INVENTORY`);
    const inv = await loadInventory(flags.inventory, { cwd: process.cwd() });
    const names = flags.limit ? matchClusters(inv, flags.limit) : [...inv.clusters.keys()];
    const by = approver(flags.as);
    const decided: string[] = [];
    const errors: string[] = [];
    await Promise.all(
      names.map(async (name) => {
        const c = inv.clusters.get(name);
        if (!c || !hasKubeContext(c.kubeconfig, c.context)) return;
        try {
          const client = await connect({ name, context: c.context, kubeconfig: c.kubeconfig });
          if (await decideGate(client, runId, flags.gate, { state: flags.reject ? 'rejected' : 'approved', by, comment: flags.comment })) decided.push(name);
        } catch (e) {
          errors.push(`${name}: ${errorMessage(e)}`);
        }
      }),
    );
    for (const e of errors) process.stderr.write(`WARNING: ${e}\n`);
    if (decided.length === 0) {
      process.stderr.write(`ERROR: run ${runId} is not waiting at gate ${flags.gate} in ${names.join(', ')}${errors.length ? ' (some clusters could not be read)' : ''}\n`);
      return errors.length ? EXIT.unreachable : EXIT.usage;
    }
    process.stdout.write(`${flags.reject ? 'rejected' : 'approved'} gate ${flags.gate} of run ${runId} on ${decided.sort().join(', ')} as ${by}\n`);
    return EXIT.ok;
  } catch (e) {
    return reportError(e);
  }
}

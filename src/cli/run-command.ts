/**
 * `kplay run [PLAYBOOK] -i INV [--plan plan.json [--replan]]`: flags → engine → exit code. With
 * `--plan`, the playbook, inventory, limit and tags come from the plan unless given, the inputs
 * must be the plan's and a fresh check-mode pass must find exactly the planned changes, else the
 * run is refused (exit 5) naming the cluster, task and object. Clusters that require approval
 * (`require_approval: true`) are only changed by an approved plan.
 */
import { listCommand, wantsListing, type ListFlags } from './list.js';
import type { JournalState } from '../audit/journal.js';
import { resumeShard } from '../fleet/spec.js';
import { EXIT, type ExitCode } from '../core/exit.js';
import type { Inventory } from '../inventory/types.js';
import { InputError } from '../load/errors.js';
import { validApprovals, type Plan } from '../plan/plan-file.js';
import { approvalRefusal, approvalRequired, brokenPlan, planRefusals, readPlan, type Refusal } from '../plan/refusal.js';
import { defaultOutput, listOption, makeReporter, reportError } from './common.js';
import { loadAll, type Loaded } from '../run/inputs.js';
import { checkResumable, readResumed, reportResume } from '../run/resume.js';
import { checkPass } from './plan.js';
import { executeRun, type RunFlags } from './run-flags.js';

function refuse({ lines, hint }: Refusal): ExitCode {
  process.stderr.write(`ERROR: refused:\n${lines.map((l) => `  - ${l}`).join('\n')}\n${hint}\n`);
  return EXIT.refused;
}

export async function runCommand(playbookArg: string | undefined, flags: RunFlags & ListFlags): Promise<ExitCode> {
  let loaded: Loaded | undefined;
  try {
    // no `-o`: the Ansible configuration may ask for ansible-core's default output
    if (!flags.output) flags = { ...flags, output: defaultOutput() };
    let plan: Plan | undefined;
    let playbook = playbookArg;
    if (flags.plan) {
      const read = await readPlan(flags.plan);
      const broken = brokenPlan(flags.plan, read);
      if (broken) return refuse(broken);
      plan = read.plan;
      playbook ??= plan.playbook;
      flags = {
        ...flags,
        inventory: flags.inventory ?? plan.inventory,
        limit: flags.limit ?? plan.limit ?? Object.keys(plan.clusters).join(','),
        tags: listOption(flags.tags).length ? flags.tags : plan.tags,
        skipTags: listOption(flags.skipTags).length ? flags.skipTags : plan.skip_tags,
      };
    }
    let resumed: JournalState | undefined;
    if (flags.resume) {
      if (flags.plan) throw new InputError('--resume and --plan cannot be used together', undefined, 'resume the run that carried out the plan: kplay run --resume RUN_ID');
      resumed = await readResumed(flags.recordDir, flags.resume);
      const h = resumed.header;
      playbook ??= h.playbook;
      flags = {
        ...flags,
        inventory: flags.inventory ?? h.inventory,
        limit: flags.limit ?? h.limit,
        tags: listOption(flags.tags).length ? flags.tags : h.tags,
        skipTags: listOption(flags.skipTags).length ? flags.skipTags : h.skip_tags,
        resumeState: resumed,
        resumedFrom: h.run_id,
        shardSpec: resumeShard(h.shard, h.run_id, flags),
      };
    }
    if (!playbook) throw new InputError('no playbook given', undefined, 'kplay run PLAYBOOK -i INVENTORY, or kplay run --plan plan.json, or kplay run --resume RUN_ID');
    if (wantsListing(flags)) return await listCommand(playbook, flags);
    loaded = await loadAll(playbook, flags, true);
    if (resumed) {
      await checkResumable(resumed, loaded);
      reportResume(resumed, loaded, (line) => process.stderr.write(`${line}\n`));
    }
    const approvals = plan ? validApprovals(plan) : [];
    if (!flags.check) {
      const required = approvalRequired(loaded.playbook, loaded.inventory as Inventory, flags.limit);
      const refused = approvalRefusal({ required, plan, planFile: flags.plan, approvals, replan: flags.replan === true, playbook, inventory: flags.inventory });
      if (refused) return refuse(refused);
    }
    if (plan && !flags.replan && !flags.check) {
      if (flags.verbose > 0) process.stderr.write('checking that the plan still holds (check-mode pass)...\n');
      const pass = (): Promise<Plan['clusters']> => checkPass(flags, loaded as Loaded).then((p) => p.clusters);
      const refusals = await planRefusals(plan, flags.plan, loaded, pass);
      if (refusals.length) return refuse({ lines: refusals, hint: `the plan no longer holds: make a new plan (kplay plan … -o ${flags.plan ?? 'plan.json'}), or run with --replan to carry out the playbook as it is now` });
    }
    const planRecord = plan && flags.plan ? { file: flags.plan, digest: plan.digest, approvals: approvals.map((a) => ({ by: a.by, at: a.at, ...(a.comment ? { comment: a.comment } : {}) })), replan: flags.replan === true } : undefined;
    const masker = loaded.masker;
    const reporter = makeReporter(flags.output, { verbosity: flags.verbose, diff: flags.diff === true, color: flags.color === false ? false : undefined, progress: flags.progress, mask: (s) => masker.mask(s) });
    const { summary, recordFile, recordErrors } = await executeRun({ ...flags, planRecord }, (e) => reporter.handle(e), loaded);
    reporter.close();
    for (const err of recordErrors) process.stderr.write(`WARNING: could not write ${err}\n`);
    if (recordFile && flags.verbose > 0 && flags.output !== 'ansible') process.stderr.write(`run record: ${recordFile}\n`);
    return summary.exitCode;
  } catch (e) {
    return reportError(e, loaded?.masker) || EXIT.usage;
  }
}

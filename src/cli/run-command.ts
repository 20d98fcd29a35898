/**
 * `kplay run [PLAYBOOK] -i INV [--plan plan.json [--replan]]`: flags → engine → exit code. With
 * `--plan`, the playbook, inventory, limit and tags come from the plan unless given, the inputs
 * must be the plan's and a fresh check-mode pass must find exactly the planned changes, else the
 * run is refused (exit 5) naming the cluster, task and object. Clusters that require approval
 * (`require_approval: true`) are only changed by an approved plan.
 */
import { setting } from '../core/settings.js';
import path from 'node:path';
import { readJournal, type JournalState } from '../audit/journal.js';
import { changedFiles, playbookDigests, Resume } from '../executor/resume.js';
import { resumeShard } from '../fleet/spec.js';
import { EXIT, type ExitCode } from '../core/exit.js';
import type { Inventory } from '../inventory/types.js';
import { matchClusters } from '../inventory/patterns.js';
import { InputError } from '../load/errors.js';
import { validApprovals, type Plan } from '../plan/plan.js';
import { listOption, loadAll, makeReporter, reportError, type Loaded } from './common.js';
import { approvalRequired, planRefusals, readPlan } from './plan.js';
import { executeRun, type RunFlags } from './run.js';

function refuse(lines: string[], hint: string): ExitCode {
  process.stderr.write(`ERROR: refused:\n${lines.map((l) => `  - ${l}`).join('\n')}\n${hint}\n`);
  return EXIT.refused;
}

export async function runCommand(playbookArg: string | undefined, flags: RunFlags): Promise<ExitCode> {
  let loaded: Loaded | undefined;
  try {
    let plan: Plan | undefined;
    let playbook = playbookArg;
    if (flags.plan) {
      const read = await readPlan(flags.plan);
      if (!read.intact) return refuse([`${flags.plan} was modified after it was made (its digest does not match its content)`], 'make a new plan with kplay plan');
      plan = read.plan;
      if (plan.errors.length) return refuse(plan.errors.map((e) => `${e.cluster}: ${e.task}: ${e.msg ?? 'failed'} (in the plan's check-mode pass)`), 'fix them and make a new plan');
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
      const dir = path.resolve(flags.recordDir ?? setting('recordDir'));
      try {
        resumed = await readJournal(dir, flags.resume);
      } catch (e) {
        throw new InputError(e instanceof Error ? e.message : String(e), undefined, 'kplay history (local records) lists the runs; --resume last takes the newest');
      }
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
    loaded = await loadAll(playbook, flags, true);
    if (resumed) {
      const extra = loaded.extraVars;
      const missing = resumed.header.extra_var_names.filter((n) => !(n in extra));
      if (missing.length) throw new InputError(`run ${resumed.header.run_id} was started with -e ${missing.join(', ')}: pass the same extra variables again (their values are never recorded)`);
      await checkSamePlaybook(resumed, loaded);
      reportResume(resumed, loaded);
    }
    const approvals = plan ? validApprovals(plan) : [];
    if (!flags.check) {
      const required = approvalRequired(loaded, flags.limit);
      if (required.length && (!plan || approvals.length === 0)) {
        return refuse(
          required.map((r) => `${r.cluster} requires an approved plan (${r.why})`),
          plan ? `approve it first: kplay approve ${flags.plan ?? ''}` : `make and approve a plan: kplay plan ${playbook} -i ${flags.inventory ?? 'INV'} -o plan.json; kplay approve plan.json; kplay run --plan plan.json`,
        );
      }
      if (required.length && flags.replan) return refuse(required.map((r) => `${r.cluster} requires an approved plan (${r.why}): --replan would change it beyond what was approved`), 'make, approve and run a new plan');
    }
    if (plan && !flags.replan && !flags.check) {
      if (flags.verbose > 0) process.stderr.write('checking that the plan still holds (check-mode pass)...\n');
      const refusals = await planRefusals(plan, flags, loaded);
      if (refusals.length) return refuse(refusals, `the plan no longer holds: make a new plan (kplay plan … -o ${flags.plan ?? 'plan.json'}), or run with --replan to carry out the playbook as it is now`);
    }
    const planRecord = plan && flags.plan ? { file: flags.plan, digest: plan.digest, approvals: approvals.map((a) => ({ by: a.by, at: a.at, ...(a.comment ? { comment: a.comment } : {}) })), replan: flags.replan === true } : undefined;
    const reporter = makeReporter(flags.output, { verbosity: flags.verbose, diff: flags.diff === true, color: flags.color === false ? false : undefined, progress: flags.progress });
    const { summary, recordFile, recordErrors } = await executeRun({ ...flags, planRecord }, (e) => reporter.handle(e), loaded);
    reporter.close();
    for (const err of recordErrors) process.stderr.write(`WARNING: could not write ${err}\n`);
    if (recordFile && flags.verbose > 0) process.stderr.write(`run record: ${recordFile}\n`);
    return summary.exitCode;
  } catch (e) {
    return reportError(e, loaded?.masker) || EXIT.usage;
  }
}

/**
 * Refuse to resume when a task file of the playbook changed since the interrupted run: task
 * identities (file, line, column) may have moved, so what was done could not be told apart.
 */
async function checkSamePlaybook(state: JournalState, loaded: Loaded): Promise<void> {
  const before = state.header.playbook_files;
  if (!before) return; // a journal of an older kplay: resumed per play, as it recorded
  const changed = changedFiles(before, await playbookDigests(loaded.playbook, (t) => loaded.masker.mask(t)));
  if (changed.length === 0) return;
  throw new InputError(
    `cannot resume run ${state.header.run_id}: the playbook changed since it ran (${changed.join(', ')}), so its tasks may no longer be where the run recorded them`,
    undefined,
    'put the files back as they were to resume, or start a new run of the playbook as it is now (without --resume): tasks that declare state find their work done',
  );
}

/** Say what the resumed run left: which clusters finished which plays, and load balancer changes it may have left half-done. */
function reportResume(state: JournalState, loaded: Loaded): void {
  const inv = loaded.inventory as Inventory;
  const w = (m: string): boolean => process.stderr.write(`${m}\n`);
  w(`resuming run ${state.header.run_id} (started ${state.header.started})`);
  const unfinished = new Set<string>();
  const past = new Resume(state);
  loaded.playbook.plays.forEach((play, i) => {
    const targets = matchClusters(inv, play.hosts);
    const finished = state.finishedPlays.get(i) ?? [];
    w(`  play ${i + 1} '${play.name}': finished on ${finished.length ? finished.join(', ') : 'no cluster'}`);
    for (const c of targets) if (!finished.includes(c)) unfinished.add(c);
  });
  for (const c of [...unfinished].sort()) {
    const done = [...state.tasks.values()].filter((t) => t.cluster === c && !state.done.has(`${t.key.split(':')[0] ?? ''}|${c}`) && past.past(c, t.key).kind === 'done');
    const interrupted = [...state.started].filter((id) => id.startsWith(`${c}|`) && !state.tasks.has(id)).length;
    if (done.length || interrupted) w(`  ${c}: ${done.length} task(s) finished in unfinished plays (restored, not run again)${interrupted ? `, ${interrupted} interrupted (run again)` : ''}`);
  }
  for (const lb of state.lb) {
    if (unfinished.has(lb.cluster)) w(`  WARNING: ${lb.cluster}: load balancer task '${lb.task}' changed (${lb.msg ?? 'changed'}) and the play did not finish there: the server may still be drained; the resumed run carries the play out again`);
  }
}

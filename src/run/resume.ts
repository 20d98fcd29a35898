/**
 * Resuming a run (`kplay run --resume RUN_ID|last`): reading the interrupted run's journal,
 * checking the run can be carried on (the same extra variable names, the same task files), and
 * what the resumed run left, said before carrying on. Restoring finished tasks is the engine's
 * (src/executor/resume.ts).
 */
import path from 'node:path';
import { setting } from '../core/settings.js';
import { readJournal, type JournalState } from '../audit/journal.js';
import { changedFiles, playbookDigests, Resume } from '../executor/resume.js';
import { matchClusters } from '../inventory/patterns.js';
import type { Inventory } from '../inventory/types.js';
import { InputError } from '../load/errors.js';
import type { Loaded } from './inputs.js';

/** The journal of run `which` (`last`: the newest) in the record directory (`--record-dir`, else the `recordDir` setting). */
export async function readResumed(recordDir: string | undefined, which: string): Promise<JournalState> {
  const dir = path.resolve(recordDir ?? setting('recordDir'));
  try {
    return await readJournal(dir, which);
  } catch (e) {
    throw new InputError(e instanceof Error ? e.message : String(e), undefined, 'kplay history (local records) lists the runs; --resume last takes the newest');
  }
}

/** Refuse to resume without the run's extra variables, or when a task file of the playbook changed since it ran. */
export async function checkResumable(state: JournalState, loaded: Loaded): Promise<void> {
  const extra = loaded.extraVars;
  const missing = state.header.extra_var_names.filter((n) => !(n in extra));
  if (missing.length) throw new InputError(`run ${state.header.run_id} was started with -e ${missing.join(', ')}: pass the same extra variables again (their values are never recorded)`);
  await checkSamePlaybook(state, loaded);
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

/** Say (`w`, line by line) what the resumed run left: which clusters finished which plays, and load balancer changes it may have left half-done. */
export function reportResume(state: JournalState, loaded: Loaded, w: (line: string) => void): void {
  const inv = loaded.inventory as Inventory;
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

/**
 * `kplay drift PLAYBOOK -i INV [--limit]`: run the playbook in check mode on every cluster (in
 * parallel, `--forks`) and report, per cluster, only what differs from the desired state:
 * objects and fields (changed values and fields added by hand, each attributed to the field
 * manager that owns it now), Helm releases, LB states; secrets masked — each drifted thing once,
 * with the tasks that manage it (see src/report/drift-report.ts). Then a summary table.
 *
 * `--output html`: the same as one self-contained page (`src/report/html/drift.ts`).
 *
 * Exit 0 no drift, 3 drift found (a field another field manager took is drift: the check-mode
 * conflict that fails its task names the field and the manager), 2 errors (failed/unreachable
 * tasks), 1 usage errors. Tasks
 * tagged `transient` (steps undone later in the same playbook, such as draining a load
 * balancer) are skipped unless named in --tags.
 *
 * `--explain` lists what built-in and `drift_ignore` rules hid. `--repair` then runs the
 * playbook for real on the drifted clusters, where only modules that declare state
 * (`k8s_apply`, `helm_release`) change anything — under the cluster lock, with a run record —
 * and exits 0 when everything was repaired.
 */
import { stringify } from 'yaml';
import { EXIT, type ExitCode } from '../core/exit.js';
import { InputError } from '../load/errors.js';
import type { RunEvent } from '../report/events.js';
import { listOption, reportError } from './common.js';
import { loadAll, type Loaded } from '../run/inputs.js';
import { executeRun, type RunFlags } from './run-flags.js';
import { DriftCollector, driftText, RepairCollector, type ClusterReport } from '../report/drift-report.js';
import { driftJunit } from '../report/drift-junit.js';
import { renderDriftReport } from '../report/html/drift.js';

/** Flags of `kplay drift`. */
export interface DriftFlags extends RunFlags {
  /** Show what built-in and user rules hid. */
  explain?: boolean;
  /** Take the drift back (a real run of the state-declaring tasks on the drifted clusters). */
  repairDrift?: boolean;
}

/** Run the drift check; collect per-cluster reports. */
async function check(flags: DriftFlags, loaded: Loaded, skip: string[]): Promise<{ reports: Map<string, ClusterReport>; interrupted: boolean }> {
  const collector = new DriftCollector();
  const onEvent = (e: RunEvent): void => collector.add(e);
  if (flags.verbose > 0) process.stderr.write('running the playbook in check mode...\n');
  const { summary } = await executeRun({ ...flags, check: true, diff: true, skipTags: skip, lock: false }, onEvent, loaded);
  return { reports: collector.reports(), interrupted: summary.interrupted };
}

export async function driftCommand(playbook: string, flags: DriftFlags): Promise<ExitCode> {
  let loaded: Loaded | undefined;
  try {
    if (flags.output === 'html' && flags.repairDrift) throw new InputError('--output html does not go with --repair', undefined, 'make the report of the check with --output html, then run kplay drift --repair (its run has a run report of its own: kplay report last)');
    loaded = await loadAll(playbook, flags, true);
    const tags = listOption(flags.tags);
    const skip = [...listOption(flags.skipTags), ...(tags.includes('transient') ? [] : ['transient'])];
    const { reports, interrupted } = await check(flags, loaded, skip);
    const all = [...reports.values()];
    const driftFound = all.some((r) => r.drift.length > 0);
    const errors = all.some((r) => r.errors.length > 0);
    let code: ExitCode = interrupted ? EXIT.interrupted : errors ? EXIT.failed : driftFound ? EXIT.drift : EXIT.ok;
    const w = (s: string): boolean => process.stdout.write(`${s}\n`);

    if (flags.output === 'json') {
      if (!flags.repairDrift) w(JSON.stringify({ drift: driftFound, exit_code: code, clusters: Object.fromEntries(reports) }));
    } else if (flags.output === 'junit') {
      if (!flags.repairDrift) process.stdout.write(driftJunit(reports));
    } else if (flags.output === 'html') {
      if (!flags.repairDrift) process.stdout.write(renderDriftReport(reports, { playbook, inventory: flags.inventory ?? '', time: new Date().toISOString(), exit_code: code }));
    } else {
      for (const line of driftText(reports, { diff: flags.diff !== false, explain: flags.explain === true })) w(line);
      w('');
      w(driftFound ? `drift found (exit ${code})` : errors ? `errors while checking (exit ${code})` : 'no drift: every cluster matches the playbook');
    }
    if (flags.repairDrift && driftFound && !interrupted) code = await repair(flags, loaded, skip, [...reports].filter(([, r]) => r.drift.length > 0).map(([c]) => c), reports);
    else if (flags.repairDrift && flags.output === 'json') w(JSON.stringify({ drift: driftFound, exit_code: code, clusters: Object.fromEntries(reports) }));
    if (flags.verbose > 1 && flags.output !== 'json' && flags.output !== 'junit') w(stringify({ clusters: Object.fromEntries([...reports].map(([c, r]) => [c, r.state])) }));
    return code;
  } catch (e) {
    return reportError(e, loaded?.masker);
  }
}

/**
 * Take the drift back: run the playbook for real on the drifted clusters, where only the tasks
 * of modules that declare state change anything (every other task runs in check mode), under the
 * cluster lock and with a run record, as a normal run. Exit 0 when every repair succeeded.
 */
async function repair(flags: DriftFlags, loaded: Loaded, skip: string[], clusters: string[], before: Map<string, ClusterReport>): Promise<ExitCode> {
  // every module, not only those loaded so far: a file included at run time may use others
  await loaded.registry.loadAll();
  const modules = new Set(loaded.registry.list().filter((m) => m.module.declaresState === true).map((m) => m.module.name));
  const collector = new RepairCollector(modules);
  const { repaired, failed } = collector;
  const w = (s: string): boolean => process.stdout.write(`${s}\n`);
  const onEvent = (e: RunEvent): void => collector.add(e);
  if (flags.output !== 'json' && flags.output !== 'junit') w(`\nrepairing ${clusters.join(', ')} (only ${[...modules].sort().join(', ')} tasks change anything)...`);
  const { summary, recordFile } = await executeRun({ ...flags, check: false, diff: true, skipTags: skip, limit: clusters.join(','), repair: modules }, onEvent, loaded);
  const code = summary.interrupted ? EXIT.interrupted : failed.size ? EXIT.failed : EXIT.ok;
  if (flags.output === 'json') {
    w(JSON.stringify({ drift: true, repaired: Object.fromEntries(repaired), errors: Object.fromEntries(failed), exit_code: code, clusters: Object.fromEntries(before), record: recordFile }));
    return code;
  }
  for (const c of clusters) {
    for (const r of repaired.get(c) ?? []) w(`${c}: repaired ${r.task}${r.msg ? `: ${r.msg}` : ''}`);
    for (const p of failed.get(c) ?? []) w(`${c}: ! ${p.task}: ${p.status.toUpperCase()}: ${p.msg ?? ''}`);
  }
  w(code === EXIT.ok ? `drift repaired on ${clusters.length} cluster(s) (exit 0)` : `repair incomplete (exit ${code})`);
  return code;
}

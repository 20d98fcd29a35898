/**
 * `kplay drift PLAYBOOK -i INV [--limit]`: run the playbook in check mode on every cluster (in
 * parallel, `--forks`) and report, per cluster, only what differs from the desired state:
 * objects and fields (changed values and fields added by hand, each attributed to the field
 * manager that owns it now), Helm releases, LB states; secrets masked. Then a summary table.
 *
 * Exit 0 no drift, 3 drift found, 2 errors (failed/unreachable tasks), 1 usage errors. Tasks
 * tagged `transient` (steps undone later in the same playbook, such as draining a load
 * balancer) are skipped unless named in --tags.
 *
 * `--explain` lists what built-in and `drift_ignore` rules hid. `--repair` then runs the
 * playbook for real on the drifted clusters, where only modules that declare state
 * (`k8s_apply`, `helm_release`) change anything — under the cluster lock, with a run record —
 * and exits 0 when everything was repaired.
 */
import { stringify } from 'yaml';
import { EXIT } from '../executor/run.js';
import type { DriftField, HiddenField } from '../k8s/drift.js';
import type { ObjectDrift } from '../k8s/plan.js';
import type { RunEvent } from '../report/events.js';
import { unifiedDiff } from '../report/diff.js';
import { tableLines } from '../report/table.js';
import type { DiffEntry } from '../sdk/module.js';
import { listOption, loadAll, reportError, type Loaded } from './common.js';
import { executeRun, type RunFlags } from './run.js';
import { isRecord as isObj } from '../load/shape.js';

/** Flags of `kplay drift`. */
export interface DriftFlags extends RunFlags {
  /** Show what built-in and user rules hid. */
  explain?: boolean;
  /** Take the drift back (a real run of the state-declaring tasks on the drifted clusters). */
  repairDrift?: boolean;
}

/** One drifted task result of a cluster. */
interface DriftItem {
  task: string;
  item?: string;
  msg?: string;
  objects: ObjectDrift[];
  diff: DiffEntry[];
}

interface DriftProblem {
  task: string;
  status: string;
  msg?: string;
}

/** A cluster's drift state, as the summary table and `--output json|junit` give it. */
type ClusterState = 'in sync' | 'drifted' | 'unreachable' | 'error';

interface ClusterReport {
  state: ClusterState;
  /** Managed objects checked (k8s_apply resources, helm release objects). */
  objects: number;
  drifted_objects: number;
  drift: DriftItem[];
  hidden: (HiddenField & { object: string; task: string })[];
  errors: DriftProblem[];
}


/** The `drift` entries of a module result's data (k8s_apply, helm_release); others give none. */
function objectDrifts(data: Record<string, unknown> | undefined): ObjectDrift[] {
  const raw = data?.drift;
  if (!Array.isArray(raw)) return [];
  return raw.filter((d): d is ObjectDrift => isObj(d) && typeof d.kind === 'string' && typeof d.name === 'string' && Array.isArray(d.fields) && Array.isArray(d.hidden));
}

/** How many managed objects a result covers. */
function objectCount(data: Record<string, unknown> | undefined): number {
  if (Array.isArray(data?.resources)) return data.resources.length;
  if (Array.isArray(data?.objects)) return data.objects.length;
  return 0;
}

const objectLabel = (o: ObjectDrift): string => `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;

function fieldLine(f: DriftField): string {
  const who = f.manager ? `${f.manager}${f.operation ? ` (${f.operation}${f.time ? `, ${f.time}` : ''})` : ''}` : 'unknown manager';
  const owns = f.change === 'changed' ? (f.kplay_owns ? '; kplay still owns it' : '; kplay no longer owns it') : '';
  return `${f.change === 'added' ? '+' : '~'} ${f.path}  ${f.change === 'added' ? 'added' : 'changed'} by ${who}${owns}`;
}

/** Run the drift check; collect per-cluster reports. */
async function check(flags: DriftFlags, loaded: Loaded, skip: string[]): Promise<{ reports: Map<string, ClusterReport>; interrupted: boolean }> {
  const reports = new Map<string, ClusterReport>();
  const report = (c: string): ClusterReport => {
    let r = reports.get(c);
    if (!r) {
      r = { state: 'in sync', objects: 0, drifted_objects: 0, drift: [], hidden: [], errors: [] };
      reports.set(c, r);
    }
    return r;
  };
  const onEvent = (e: RunEvent): void => {
    if (e.type === 'play_start') e.clusters.forEach((c) => report(c));
    if (e.type !== 'task_result' || e.loop_summary) return;
    const r = report(e.cluster);
    const objects = objectDrifts(e.data);
    r.objects += objectCount(e.data);
    for (const o of objects) for (const h of o.hidden) r.hidden.push({ ...h, object: objectLabel(o), task: e.task });
    if (e.status === 'changed') {
      const drifted = objects.filter((o) => o.action !== 'unchanged');
      r.drifted_objects += drifted.length;
      r.drift.push({ task: e.task, item: e.item, msg: e.msg, objects: drifted, diff: (e.diff ?? []).filter((d) => d.before !== d.after) });
    } else if ((e.status === 'failed' && !e.ignored) || e.status === 'unreachable') {
      r.errors.push({ task: e.task, status: e.status, msg: e.msg });
    }
  };
  if (flags.verbose > 0) process.stderr.write('running the playbook in check mode...\n');
  const { summary } = await executeRun({ ...flags, check: true, diff: true, skipTags: skip, lock: false }, onEvent, loaded);
  for (const r of reports.values()) {
    r.state = r.errors.some((p) => p.status === 'unreachable') ? 'unreachable' : r.errors.length ? 'error' : r.drift.length ? 'drifted' : 'in sync';
  }
  return { reports, interrupted: summary.interrupted };
}

const xml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** JUnit XML: one test suite per cluster, one test case per drifted or failed task (plus one passing case per in-sync cluster). */
function junit(reports: Map<string, ClusterReport>): string {
  const suites = [...reports].map(([c, r]) => {
    const cases: string[] = [];
    for (const d of r.drift) {
      const fields = d.objects.flatMap((o) => o.fields.map((f) => `${objectLabel(o)} ${fieldLine(f)}`));
      cases.push(`    <testcase classname="${xml(c)}" name="${xml(d.task)}${d.item ? ` (${xml(d.item)})` : ''}"><failure type="drift" message="${xml(d.msg ?? 'drift')}">${xml(fields.join('\n'))}</failure></testcase>`);
    }
    for (const p of r.errors) cases.push(`    <testcase classname="${xml(c)}" name="${xml(p.task)}"><error type="${xml(p.status)}" message="${xml(p.msg ?? p.status)}"/></testcase>`);
    if (cases.length === 0) cases.push(`    <testcase classname="${xml(c)}" name="in sync (${r.objects} objects)"/>`);
    return `  <testsuite name="${xml(c)}" tests="${cases.length}" failures="${r.drift.length}" errors="${r.errors.length}">\n${cases.join('\n')}\n  </testsuite>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="kplay drift">\n${suites.join('\n')}\n</testsuites>\n`;
}

function table(reports: Map<string, ClusterReport>): string[] {
  return tableLines([['CLUSTER', 'STATE', 'OBJECTS', 'DRIFTED', 'HIDDEN'], ...[...reports].map(([c, r]) => [c, r.state, String(r.objects), String(r.drifted_objects), String(r.hidden.length)])]);
}

export async function driftCommand(playbook: string, flags: DriftFlags): Promise<number> {
  let loaded: Loaded | undefined;
  try {
    loaded = await loadAll(playbook, flags, true);
    const tags = listOption(flags.tags);
    const skip = [...listOption(flags.skipTags), ...(tags.includes('transient') ? [] : ['transient'])];
    const { reports, interrupted } = await check(flags, loaded, skip);
    const all = [...reports.values()];
    const driftFound = all.some((r) => r.drift.length > 0);
    const errors = all.some((r) => r.errors.length > 0);
    let code: number = interrupted ? EXIT.interrupted : errors ? EXIT.failed : driftFound ? EXIT.drift : EXIT.ok;
    const w = (s: string): boolean => process.stdout.write(`${s}\n`);

    if (flags.output === 'json') {
      if (!flags.repairDrift) w(JSON.stringify({ drift: driftFound, exit_code: code, clusters: Object.fromEntries(reports) }));
    } else if (flags.output === 'junit') {
      if (!flags.repairDrift) process.stdout.write(junit(reports));
    } else {
      for (const [c, r] of reports) {
        if (r.drift.length === 0 && r.errors.length === 0) w(`${c}: in sync`);
        else w(`${c}: ${r.drift.length ? `DRIFT in ${r.drift.length} task(s)` : ''}${r.drift.length && r.errors.length ? ', ' : ''}${r.errors.length ? `${r.errors.length} error(s)` : ''}`);
        for (const it of r.drift) {
          w(`  - ${it.task}${it.item ? ` (item=${it.item})` : ''}${it.msg ? `: ${it.msg}` : ''}`);
          for (const o of it.objects) {
            if (o.fields.length === 0) continue;
            w(`      ${objectLabel(o)}`);
            for (const f of o.fields) w(`        ${fieldLine(f)}`);
          }
          if (flags.diff === false) continue; // --no-diff: summaries only
          for (const d of it.diff) {
            const text = unifiedDiff(d.before, d.after, d.label);
            if (text) w(text.replace(/^/gm, '      '));
          }
        }
        for (const p of r.errors) w(`  ! ${p.task}: ${p.status.toUpperCase()}: ${p.msg ?? ''}`);
        if (flags.explain && r.hidden.length) {
          w(`  hidden by rules (--explain):`);
          for (const h of r.hidden) w(`    ${h.object} ${h.path} (${h.change} by ${h.manager ?? 'unknown manager'}): ${h.rule}`);
        }
      }
      w('');
      for (const line of table(reports)) w(line);
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
async function repair(flags: DriftFlags, loaded: Loaded, skip: string[], clusters: string[], before: Map<string, ClusterReport>): Promise<number> {
  const modules = new Set(loaded.registry.list().filter((m) => m.module.declaresState === true).map((m) => m.module.name));
  const repaired = new Map<string, { task: string; msg?: string }[]>();
  const failed = new Map<string, DriftProblem[]>();
  const w = (s: string): boolean => process.stdout.write(`${s}\n`);
  const onEvent = (e: RunEvent): void => {
    if (e.type !== 'task_result' || e.loop_summary) return;
    if (e.status === 'changed' && e.module !== undefined && modules.has(e.module)) repaired.set(e.cluster, [...(repaired.get(e.cluster) ?? []), { task: e.task, msg: e.msg }]);
    if ((e.status === 'failed' && !e.ignored) || e.status === 'unreachable') failed.set(e.cluster, [...(failed.get(e.cluster) ?? []), { task: e.task, status: e.status, msg: e.msg }]);
  };
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

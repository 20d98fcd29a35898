/**
 * The fleet drift report of `kplay drift`, built from the events of a check-mode run: per
 * cluster, each drifted thing ONCE — a live object (its drifted fields, attributed), or what a
 * task manages besides objects (a Helm release's chart and values, a load balancer state) — with
 * the tasks that manage it and report it. Two tasks managing the same object (a check-mode plan
 * task and the upgrade it guards, two `k8s_apply` sets sharing an object) report it once: one
 * diff, one count. Rendered as text (here), JSON, JUnit (drift-junit.ts) and HTML (html/drift.ts).
 */
import type { DriftField, HiddenField } from '../k8s/drift.js';
import type { ObjectDrift } from '../k8s/object-plan.js';
import type { RunEvent } from './events.js';
import { unifiedDiff } from './diff.js';
import { tableLines } from './table.js';
import type { DiffEntry } from '../core/module.js';
import { isRecord } from '../core/shape.js';

/** A task (and loop item) that reported a drifted thing, with what it said. */
export interface DriftTaskRef {
  task: string;
  item?: string;
  msg?: string;
}

/** One drifted thing of a cluster, reported once whatever the number of tasks managing it. */
export interface DriftEntry {
  /** `Deployment web/api` (a live object), `helm release web/api` (what a task manages besides objects), or the task's name (a changed task that names nothing). */
  object: string;
  /** Set for a live object whose drift the tasks attributed (kind, apiVersion, name, namespace, action). */
  kind?: string;
  apiVersion?: string;
  name?: string;
  namespace?: string;
  /** `update` (fields differ), `create` (it is missing), `delete` (it should not exist). */
  action?: ObjectDrift['action'];
  /** Its drifted fields (changed values, fields added by hand), each once. */
  fields: DriftField[];
  /** The tasks that manage it and report it, in run order. */
  tasks: DriftTaskRef[];
  /** Its diffs (before/after), each once. */
  diff: DiffEntry[];
}

/** A failed or unreachable task. */
export interface DriftProblem {
  task: string;
  status: string;
  msg?: string;
}

/** A cluster's drift state, as the summary table and `--output json|junit` give it. */
export type ClusterState = 'in sync' | 'drifted' | 'unreachable' | 'error';

/** What `kplay drift` reports for one cluster. */
export interface ClusterReport {
  state: ClusterState;
  /** Managed objects checked (k8s_apply resources, helm release objects), each once. */
  objects: number;
  /** Live objects with drift, each once. */
  drifted_objects: number;
  drift: DriftEntry[];
  /** Fields rules hid, each once, with the tasks that found them. */
  hidden: (HiddenField & { object: string; tasks: string[] })[];
  errors: DriftProblem[];
}

/** The `drift` entries of a module result's data (k8s_apply, helm_release); others give none. */
function objectDrifts(data: Record<string, unknown> | undefined): ObjectDrift[] {
  const raw = data?.drift;
  if (!Array.isArray(raw)) return [];
  return raw.filter((d): d is ObjectDrift => isRecord(d) && typeof d.kind === 'string' && typeof d.name === 'string' && Array.isArray(d.fields) && Array.isArray(d.hidden));
}

/**
 * A check-mode failure that is drift: `k8s_apply` met fields another field manager took
 * (`kubectl apply --server-side --force-conflicts`), so a real run would fail on the conflict —
 * the live values differ from the playbook's, attributed to that manager in its `drift`.
 */
function conflictDrift(status: string, data: Record<string, unknown> | undefined, drifts: readonly ObjectDrift[]): boolean {
  return status === 'failed' && Array.isArray(data?.conflicts) && data.conflicts.length > 0 && drifts.some((d) => d.action !== 'unchanged' && d.fields.length > 0);
}

/** `Kind ns/name`, as object labels are written everywhere (diff labels too). */
export function objectLabel(o: { kind: string; name: string; namespace?: string }): string {
  return `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
}

/** Labels of the managed objects of a result (`resources` of k8s_apply, `objects` of helm_release). */
function managedLabels(data: Record<string, unknown> | undefined): string[] {
  const list = Array.isArray(data?.resources) ? data.resources : Array.isArray(data?.objects) ? data.objects : [];
  const out: string[] = [];
  for (const o of list) {
    if (!isRecord(o) || typeof o.kind !== 'string') continue;
    const meta = isRecord(o.metadata) ? o.metadata : o;
    if (typeof meta.name !== 'string') continue;
    out.push(objectLabel({ kind: o.kind, name: meta.name, ...(typeof meta.namespace === 'string' ? { namespace: meta.namespace } : {}) }));
  }
  return out;
}

/** `task` or `task (item=x)`. */
export function taskName(t: { task: string; item?: string }): string {
  return `${t.task}${t.item !== undefined ? ` (item=${t.item})` : ''}`;
}

/** Collects the task results of a check-mode run into per-cluster reports. */
export class DriftCollector {
  private readonly clusters = new Map<string, { report: ClusterReport; entries: Map<string, DriftEntry>; managed: Set<string>; hidden: Map<string, ClusterReport['hidden'][number]> }>();

  private of(cluster: string): { report: ClusterReport; entries: Map<string, DriftEntry>; managed: Set<string>; hidden: Map<string, ClusterReport['hidden'][number]> } {
    let c = this.clusters.get(cluster);
    if (!c) {
      c = { report: { state: 'in sync', objects: 0, drifted_objects: 0, drift: [], hidden: [], errors: [] }, entries: new Map(), managed: new Set(), hidden: new Map() };
      this.clusters.set(cluster, c);
    }
    return c;
  }

  /** Take one run event. */
  add(e: RunEvent): void {
    if (e.type === 'play_start') e.clusters.forEach((c) => this.of(c));
    if (e.type !== 'task_result' || e.loop_summary) return;
    const c = this.of(e.cluster);
    const ref: DriftTaskRef = { task: e.task, ...(e.item !== undefined ? { item: e.item } : {}), ...(e.msg !== undefined ? { msg: e.msg } : {}) };
    for (const label of managedLabels(e.data)) c.managed.add(label);
    const drifts = objectDrifts(e.data);
    for (const o of drifts) {
      for (const h of o.hidden) {
        const object = objectLabel(o);
        const key = `${object}|${h.path}|${h.change}|${h.rule}`;
        const seen = c.hidden.get(key);
        if (seen) addOnce(seen.tasks, taskName(ref));
        else c.hidden.set(key, { ...h, object, tasks: [taskName(ref)] });
      }
    }
    if (e.status === 'changed' || conflictDrift(e.status, e.data, drifts)) {
      let named = false;
      for (const o of drifts.filter((d) => d.action !== 'unchanged')) {
        const entry = this.entry(c.entries, objectLabel(o));
        Object.assign(entry, { kind: o.kind, apiVersion: o.apiVersion, name: o.name, ...(o.namespace ? { namespace: o.namespace } : {}), action: o.action });
        for (const f of o.fields) if (!entry.fields.some((x) => x.path === f.path && x.change === f.change)) entry.fields.push(f);
        addTask(entry, ref);
        named = true;
      }
      for (const d of (e.diff ?? []).filter((x) => x.before !== x.after)) {
        const entry = this.entry(c.entries, d.label);
        if (!entry.diff.some((x) => x.before === d.before && x.after === d.after)) entry.diff.push(d);
        addTask(entry, ref);
        named = true;
      }
      if (!named) addTask(this.entry(c.entries, `task ${taskName(ref)}`), ref);
    } else if ((e.status === 'failed' || e.status === 'unreachable') && !e.ignored) {
      c.report.errors.push({ task: e.task, status: e.status, ...(e.msg !== undefined ? { msg: e.msg } : {}) });
    }
  }

  private entry(entries: Map<string, DriftEntry>, object: string): DriftEntry {
    let entry = entries.get(object);
    if (!entry) {
      entry = { object, fields: [], tasks: [], diff: [] };
      entries.set(object, entry);
    }
    return entry;
  }

  /** The reports, by cluster, in the order clusters were seen. */
  reports(): Map<string, ClusterReport> {
    const out = new Map<string, ClusterReport>();
    for (const [name, c] of this.clusters) {
      const drift = [...c.entries.values()];
      for (const d of drift) if (d.kind !== undefined) c.managed.add(d.object);
      const r: ClusterReport = {
        ...c.report,
        objects: c.managed.size,
        drifted_objects: drift.filter((d) => d.kind !== undefined).length,
        drift,
        hidden: [...c.hidden.values()],
      };
      r.state = r.errors.some((p) => p.status === 'unreachable') ? 'unreachable' : r.errors.length ? 'error' : drift.length ? 'drifted' : 'in sync';
      out.set(name, r);
    }
    return out;
  }
}

function addOnce(list: string[], s: string): void {
  if (!list.includes(s)) list.push(s);
}

function addTask(entry: DriftEntry, ref: DriftTaskRef): void {
  if (!entry.tasks.some((t) => t.task === ref.task && t.item === ref.item)) entry.tasks.push(ref);
}

/** One drifted field, as the text and JUnit reports say it (who changed it, whether kplay still owns it). */
export function fieldLine(f: DriftField): string {
  const who = f.manager ? `${f.manager}${f.operation ? ` (${f.operation}${f.time ? `, ${f.time}` : ''})` : ''}` : 'unknown manager';
  const owns = f.change === 'changed' ? (f.kplay_owns ? '; kplay still owns it' : '; kplay no longer owns it') : '';
  return `${f.change === 'added' ? '+' : '~'} ${f.path}  ${f.change === 'added' ? 'added' : 'changed'} by ${who}${owns}`;
}

/** Options of {@link driftText}. */
export interface DriftTextOptions {
  /** Print the diffs (`--no-diff`: summaries only). */
  diff: boolean;
  /** List what rules hid (`--explain`). */
  explain: boolean;
}

/**
 * The text report: per cluster, each drifted thing once with the tasks that manage it, what they
 * would do (each distinct message once), its fields and diff; then the summary table.
 */
export function driftText(reports: Map<string, ClusterReport>, opts: DriftTextOptions): string[] {
  const lines: string[] = [];
  const w = (s: string): void => {
    lines.push(s);
  };
  for (const [c, r] of reports) {
    if (r.drift.length === 0 && r.errors.length === 0) {
      w(`${c}: in sync`);
      continue;
    }
    const tasks = new Set(r.drift.flatMap((d) => d.tasks.map(taskName)));
    const head = r.drift.length ? `DRIFT in ${r.drift.length} object(s), reported by ${tasks.size} task(s)` : '';
    w(`${c}: ${head}${head && r.errors.length ? ', ' : ''}${r.errors.length ? `${r.errors.length} error(s)` : ''}`);
    const said = new Set<string>();
    for (const d of r.drift) {
      const by = d.tasks.map(taskName);
      w(`  - ${d.object}  (${by.length > 1 ? 'tasks' : 'task'}: ${by.join('; ')})`);
      for (const t of d.tasks) {
        if (t.msg === undefined || said.has(t.msg)) continue;
        said.add(t.msg);
        w(`      ${t.msg}`);
      }
      for (const f of d.fields) w(`      ${fieldLine(f)}`);
      if (!opts.diff) continue; // --no-diff: summaries only
      for (const e of d.diff) {
        const text = unifiedDiff(e.before, e.after, e.label);
        if (text) w(text.replace(/^/gm, '      '));
      }
    }
    for (const p of r.errors) w(`  ! ${p.task}: ${p.status.toUpperCase()}: ${p.msg ?? ''}`);
    if (opts.explain && r.hidden.length) {
      w(`  hidden by rules (--explain):`);
      for (const h of r.hidden) w(`    ${h.object} ${h.path} (${h.change} by ${h.manager ?? 'unknown manager'}): ${h.rule}`);
    }
  }
  w('');
  lines.push(...tableLines([['CLUSTER', 'STATE', 'OBJECTS', 'DRIFTED', 'HIDDEN'], ...[...reports].map(([c, r]) => [c, r.state, String(r.objects), String(r.drifted_objects), String(r.hidden.length)])]));
  return lines;
}

/** Collects a repair run's events (`kplay drift --repair`): per cluster, what it repaired and the tasks that failed. */
export class RepairCollector {
  readonly repaired = new Map<string, { task: string; msg?: string }[]>();
  readonly failed = new Map<string, DriftProblem[]>();

  /** `modules`: the modules that declare state (the only ones a repair run changes anything with). */
  constructor(private readonly modules: ReadonlySet<string>) {}

  /** Take one run event. */
  add(e: RunEvent): void {
    if (e.type !== 'task_result' || e.loop_summary) return;
    if (e.status === 'changed' && e.module !== undefined && this.modules.has(e.module)) this.repaired.set(e.cluster, [...(this.repaired.get(e.cluster) ?? []), { task: e.task, msg: e.msg }]);
    if ((e.status === 'failed' && !e.ignored) || e.status === 'unreachable') this.failed.set(e.cluster, [...(this.failed.get(e.cluster) ?? []), { task: e.task, status: e.status, msg: e.msg }]);
  }
}

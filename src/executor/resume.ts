/**
 * Resuming at (cluster, task) granularity.
 *
 * **Identity.** A task's identity is `<play index>:<file>:<line>:<col>#<n>`: the play, where the
 * task is written (its file relative to the playbook's directory, so a role's or an included
 * file's tasks are told apart), and `n`, how many times that task already ran on that cluster in
 * this play — the second item of an `include_tasks` loop, a file imported twice, a handler flushed
 * a second time. Runs of one playbook walk its tasks in the same order on a cluster, so the n-th
 * run of a task is the same step in both (the run records the SHA-256 of the task files it loaded
 * and a resume refuses when one changed; an entry whose module differs is refused too, for files
 * included at run time).
 *
 * **Journal.** As each task finishes on a cluster, the journal gets what it left for later tasks:
 * the variables it set (register, set_fact, include_vars, a run_once result copied to the batch),
 * the handlers it notified, its status — see `src/audit/journal.ts`.
 *
 * **Restore.** Resuming, a task finished on a cluster (ok, changed, a failure ignored, or a
 * failure its block's rescue handled) is not run again there: it is reported `skipped` with
 * `done in run <id> (<status>)`, and what it left is restored, in order, so later tasks see the
 * same variables and the handlers it notified still run at the next flush. A task that started but
 * did not finish (the run was killed in it), or failed, runs again, and the run says so; a task
 * that was skipped (its condition false) did nothing and is evaluated again.
 * Granularity: a whole task with its loop (a loop cut short runs all its items again); blocks,
 * rescue and always are walked as written, with each of their tasks restored or run.
 *
 * **Secrets.** A value holding a secret is never written to the journal (see `holdsSecret`):
 * resuming, such a task is run again when that is harmless — it changes nothing
 * (`set_fact`, `include_vars`, `debug`, `assert`, read-only modules) or declares state (applying it
 * again changes nothing) — so the value is computed again, never read from the disk. Otherwise the
 * resume stops on that cluster with an error naming the task and the variables.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { JournalState, JournalTask, TaskFinished } from '../audit/journal.js';
import type { SourcePos } from '../load/errors.js';
import type { Playbook, TaskNode } from '../playbook/types.js';
import type { AnyModule } from '../core/module.js';

type Obj = Record<string, unknown>;

/** What a task leaves on a cluster (a `ClusterState`). */
export interface ClusterVars {
  facts: Obj;
  includedVars: Obj;
  notified: Set<string>;
}

/** Modules that change nothing anywhere: run again when their journaled result holds a secret. */
const PURE = new Set(['set_fact', 'include_vars', 'debug', 'assert', 'fail', 'validate_argument_spec']);

/** Whether running a module again is harmless (it changes nothing, or declares state). */
export function safeToRunAgain(mod: Pick<AnyModule, 'name' | 'readOnly' | 'declaresState'> | undefined): boolean {
  return mod !== undefined && (PURE.has(mod.name) || mod.readOnly === true || mod.declaresState === true);
}

/** Why what a finished task set cannot be restored from the journal (undefined: it can). */
export function unrestorable(t: Pick<JournalTask, 'withheld' | 'oversize'>): string | undefined {
  const why: string[] = [];
  if (t.withheld?.length) why.push(`what it set (${t.withheld.join(', ')}) holds a secret, which the journal never keeps`);
  if (t.oversize?.length) why.push(`what it set (${t.oversize.join(', ')}) is too large for the journal (over 1 MiB as JSON)`);
  return why.length ? why.join('; ') : undefined;
}

/** Where a task is written, relative to the playbook's directory: the base of its identity. */
export function taskBase(playIndex: number, pos: SourcePos, playbookDir: string): string {
  const rel = path.relative(path.resolve(playbookDir), path.resolve(pos.file)).split(path.sep).join('/');
  return `${playIndex}:${rel}:${pos.line}:${pos.col}`;
}

/** Counts the runs of each task per cluster within a play: the `#n` of identities. */
export class TaskKeys {
  private readonly seen = new Map<string, number>();

  /** The identity of the next run of the task at `base` on `cluster`. */
  next(cluster: string, base: string): string {
    const id = `${cluster}\u0000${base}`;
    const n = this.seen.get(id) ?? 0;
    this.seen.set(id, n + 1);
    return `${base}#${n}`;
  }
}

/** What a cluster's variables and notifications were before a task ran. */
export interface Snapshot {
  facts: Obj;
  included: Obj;
  notified: Set<string>;
}

/** Take a snapshot of `cs` (shallow: a changed variable is a new value). */
export function snapshot(cs: ClusterVars): Snapshot {
  return { facts: { ...cs.facts }, included: { ...cs.includedVars }, notified: new Set(cs.notified) };
}

/** What a task left on `cs` since `before`: variables set or removed, include_vars, handlers notified. */
export function changesSince(cs: ClusterVars, before: Snapshot): Pick<TaskFinished, 'set' | 'unset' | 'included' | 'notified'> {
  const set: Obj = {};
  for (const [k, v] of Object.entries(cs.facts)) if (!(k in before.facts) || before.facts[k] !== v) set[k] = v;
  const unset = Object.keys(before.facts).filter((k) => !(k in cs.facts));
  const included: Obj = {};
  for (const [k, v] of Object.entries(cs.includedVars)) if (!(k in before.included) || before.included[k] !== v) included[k] = v;
  const notified = [...cs.notified].filter((n) => !before.notified.has(n));
  return {
    ...(Object.keys(set).length ? { set } : {}),
    ...(unset.length ? { unset } : {}),
    ...(Object.keys(included).length ? { included } : {}),
    ...(notified.length ? { notified } : {}),
  };
}

/** Apply what a finished task left to `cs`: its variables, and (`notify`) the handlers it notified. */
export function restoreInto(cs: ClusterVars, t: JournalTask, notify: boolean): void {
  for (const k of t.unset ?? []) delete cs.facts[k];
  if (t.set) Object.assign(cs.facts, structuredClone(t.set));
  if (t.included) Object.assign(cs.includedVars, structuredClone(t.included));
  if (notify) for (const n of t.notified ?? []) cs.notified.add(n);
}

/** What the journal of an interrupted run says about one task on one cluster. */
export type TaskPast =
  | { kind: 'new' }
  /** Finished (or failed and rescued): restore it. */
  | { kind: 'done'; entry: JournalTask }
  /** Started and never finished: the run was stopped in it. */
  | { kind: 'interrupted' }
  /** Failed (not ignored, not rescued): run again. */
  | { kind: 'failed'; entry: JournalTask };

/** The journal of the run being resumed, as the executor asks it. */
export class Resume {
  constructor(readonly state: JournalState) {}

  /** The run resumed. */
  get runId(): string {
    return this.state.header.run_id;
  }

  /** What became of task `key` on `cluster` in the resumed run. */
  past(cluster: string, key: string): TaskPast {
    const id = `${cluster}|${key}`;
    const entry = this.state.tasks.get(id);
    if (!entry) return this.state.started.has(id) ? { kind: 'interrupted' } : { kind: 'new' };
    // a skipped task did nothing: evaluated again (its condition sees the same restored variables)
    if (entry.status === 'skipped') return { kind: 'new' };
    if (entry.status === 'unreachable') return { kind: 'failed', entry };
    if (entry.status === 'failed' && !entry.ignored && !this.state.rescued.has(id)) return { kind: 'failed', entry };
    return { kind: 'done', entry };
  }

  /** The entries of play `play` on `cluster`, in the order they were written (a play the cluster finished). */
  playEntries(play: number, cluster: string): JournalTask[] {
    const prefix = `${play}:`;
    return [...this.state.tasks.values()].filter((t) => t.cluster === cluster && t.key.startsWith(prefix));
  }

  /** Whether `cluster` finished play `play`. */
  playDone(play: number, cluster: string): boolean {
    return this.state.done.has(`${play}|${cluster}`);
  }
}

/** Every task file of a loaded playbook (absolute paths): the playbook, imported files, static roles. */
export function taskFiles(playbook: Playbook): string[] {
  const files = new Set<string>([path.resolve(playbook.file)]);
  const walk = (nodes: TaskNode[]): void => {
    for (const n of nodes) {
      files.add(path.resolve(n.pos.file));
      if (n.kind === 'block') walk([...n.block, ...n.rescue, ...n.always]);
    }
  };
  for (const play of playbook.plays) {
    files.add(path.resolve(play.pos.file));
    walk([...play.preTasks, ...play.tasks, ...play.postTasks, ...play.handlers]);
  }
  return [...files].sort();
}

/**
 * SHA-256 of each task file of the playbook, by path relative to its directory, known secrets
 * masked before hashing (no hash in the journal lets anyone guess a secret).
 */
export async function playbookDigests(playbook: Playbook, mask: (text: string) => string = (t) => t): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of taskFiles(playbook)) {
    const rel = path.relative(path.resolve(playbook.dir), f).split(path.sep).join('/');
    const text = await readFile(f, 'utf8').catch(() => undefined);
    out[rel] = text === undefined ? 'unreadable' : createHash('sha256').update(mask(text)).digest('hex');
  }
  return out;
}

/** The task files that changed between two digests (added, removed or edited), sorted. */
export function changedFiles(before: Record<string, string>, now: Record<string, string>): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(now)]);
  return [...names].filter((n) => before[n] !== now[n]).sort();
}

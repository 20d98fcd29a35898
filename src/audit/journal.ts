/**
 * The resume journal of a run: `<record dir>/<run id>.journal` (mode 0600), JSON lines appended as
 * the run goes, so a run killed at any point (Ctrl-C, SIGTERM, `kill -9`) leaves it complete up to
 * its last finished step. Lines:
 *
 * - the header (`type: journal`): what the run was, and the SHA-256 of every task file the
 *   playbook loaded, so a resume refuses a playbook whose task identities may have moved;
 * - `start` / `task`: a task began / finished on a cluster, by its identity (see
 *   `src/executor/resume.ts`), with what it left for later tasks: the variables it set
 *   (`register`, `set_fact`, `include_vars`, copies of a `run_once` result) and the handlers it
 *   notified. Values that hold a secret are never written: their names are listed in `withheld`
 *   (the resumed run runs such a task again when that is safe, see resume.ts);
 * - `rescued`: a block's rescue handled the failure of that task;
 * - `done`: a cluster finished every task of a play; `lb`: a load balancer change.
 *
 * Lines are written with `write(2)` as each cluster finishes a task (a killed process loses none)
 * and flushed to the disk (`fsync`) once per task step, so a crash of the machine loses at most
 * the step in flight. `kplay run --resume RUN_ID|last` reads it back ({@link readJournal}).
 */
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ResultStatus, RunEvent } from '../report/events.js';
import { SECRET_NAME, type Masker } from '../core/mask.js';
import { isRecord } from '../core/shape.js';

type Obj = Record<string, unknown>;

/** The first line of a journal: what the run was, to run it again. */
export interface JournalHeader {
  type: 'journal';
  run_id: string;
  /** Absolute path of the playbook. */
  playbook: string;
  /** The inventory as given (an absolute path when it was a path). */
  inventory: string;
  limit?: string;
  tags: string[];
  skip_tags: string[];
  /** Names of the extra variables (values are never written: give them again). */
  extra_var_names: string[];
  started: string;
  /**
   * Task files the playbook loaded (path relative to the playbook's directory → SHA-256 of the
   * text, known secrets masked): a resume refuses when one changed. Absent in older journals.
   */
  playbook_files?: Record<string, string>;
  /** A shard of a fleet run (`--shard`): resuming runs the same shard of the same fleet run. */
  shard?: { index: number; shards: number; fleet_run?: string; namespace: string; context: string; kubeconfig?: string };
}

/** A load balancer change of the run, reported when resuming (the server may still be drained). */
export interface JournalLbChange {
  cluster: string;
  task: string;
  msg?: string;
}

/** A task that finished on a cluster, as the journal keeps it (values masked or withheld). */
export interface JournalTask {
  type: 'task';
  cluster: string;
  /** The task's identity (`<play>:<file>:<line>:<col>#<n>`, see `src/executor/resume.ts`). */
  key: string;
  /** The task's name as shown. */
  task: string;
  module: string;
  status: ResultStatus;
  /** A failure `ignore_errors` ignored. */
  ignored?: boolean;
  /** The run it ran in (an entry carried over from a resumed run keeps that run's id). */
  run: string;
  /** Variables (facts, `register`) it set, by name. */
  set?: Obj;
  /** Variables it removed. */
  unset?: string[];
  /** `include_vars` variables it set. */
  included?: Obj;
  /** Handlers / topics it notified. */
  notified?: string[];
  /** Variables it set whose values were not written: they hold a secret. */
  withheld?: string[];
  /** Variables it set whose values were not written: larger than {@link MAX_JOURNAL_VALUE} as JSON, or not JSON. */
  oversize?: string[];
  /** A failed task: what a rescue sees (`ansible_failed_task`, `ansible_failed_result`), masked. */
  failure?: { task: string; name: string; result: Obj };
}

/** What the executor reports when a task finished on a cluster (values in clear: the journal masks them). */
export type TaskFinished = Omit<JournalTask, 'type' | 'withheld' | 'oversize'>;

/**
 * Where the executor writes task progress (implemented by {@link Journal}). Declared here so the
 * executor depends on an interface, not on files.
 */
export interface TaskJournal {
  /** A task is about to run on a cluster. */
  started(cluster: string, key: string, task: string): void;
  /** A task finished on a cluster. */
  finished(t: TaskFinished): void;
  /** A rescue handled the failure of task `key` on `cluster`. */
  rescued(cluster: string, key: string): void;
  /** An entry of the resumed run, restored: kept in this journal too (a resumed run can be resumed). */
  carried(t: JournalTask): void;
  /** A cluster finished a play in the resumed run (or in one before it). */
  playDone(play: number, cluster: string): void;
  /** Flush to the disk: the end of a task step. */
  sync(): void;
}

/** A journal read back. */
export interface JournalState {
  header: JournalHeader;
  /** `play index|cluster` of the plays clusters finished. */
  done: Set<string>;
  lb: JournalLbChange[];
  /** Clusters that finished at least one play, per play index. */
  finishedPlays: Map<number, string[]>;
  /** The last `task` entry per `cluster|key`, in the order they were written. */
  tasks: Map<string, JournalTask>;
  /** `cluster|key` of the tasks that started (finished or not). */
  started: Set<string>;
  /** `cluster|key` of failed tasks whose failure a rescue handled. */
  rescued: Set<string>;
}

/** Whether a value (or a key below it) holds a secret: a registered one, or under a secret-looking name. */
export function holdsSecret(name: string, value: unknown, masker: Masker | undefined, depth = 0): boolean {
  if (depth > 32) return false;
  if (SECRET_NAME.test(name) && value !== null && value !== undefined && value !== '' && typeof value !== 'boolean') return true;
  if (masker?.isSecret(value)) return true;
  if (Array.isArray(value)) return value.some((v) => holdsSecret('', v, masker, depth + 1));
  if (isRecord(value)) return Object.entries(value).some(([k, v]) => holdsSecret(k, v, masker, depth + 1));
  return false;
}

/** `value` as JSON text can give it back (false: it cannot, e.g. a cycle or a bigint). */
function jsonSafe(value: unknown): boolean {
  try {
    return value === undefined || JSON.stringify(value) !== undefined;
  } catch {
    return false;
  }
}

/** A value larger than this as JSON is not journaled (a `k8s_info` of thousands of objects on fifty clusters): the task runs again instead. */
export const MAX_JOURNAL_VALUE = 1 << 20;

/** JSON text of `value` within `max` characters, or undefined (too large, or not JSON). */
function jsonWithin(value: unknown, max: number): string | undefined {
  try {
    const text = JSON.stringify(value);
    return text !== undefined && text.length <= max ? text : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Split what a task set into what may be written and the names withheld: values holding a secret
 * (`withheld`), or that JSON cannot keep or larger than {@link MAX_JOURNAL_VALUE} (`oversize`).
 * Never writes a secret: what is kept is masked again all the same.
 */
export function keepable(values: Obj | undefined, masker: Masker | undefined, withheld: string[], oversize: string[] = withheld): Obj | undefined {
  if (!values) return undefined;
  const out: Obj = {};
  for (const [k, v] of Object.entries(values)) {
    if (holdsSecret(k, v, masker)) withheld.push(k);
    else if (v !== undefined && jsonWithin(v, MAX_JOURNAL_VALUE) === undefined) oversize.push(k);
    else out[k] = masker ? masker.maskValue(v) : v;
  }
  return Object.keys(out).length ? out : undefined;
}

/** The journal line of a finished task: masked, values holding secrets withheld. */
export function journalTask(t: TaskFinished, masker: Masker | undefined): JournalTask {
  const withheld: string[] = [];
  const oversize: string[] = [];
  const set = keepable(t.set, masker, withheld, oversize);
  const included = keepable(t.included, masker, withheld, oversize);
  const mask = <T>(v: T): T => (masker ? masker.maskValue(v) : v);
  return {
    type: 'task',
    cluster: t.cluster,
    key: t.key,
    task: mask(t.task),
    module: t.module,
    status: t.status,
    ...(t.ignored ? { ignored: true } : {}),
    run: t.run,
    ...(set ? { set } : {}),
    ...(t.unset?.length ? { unset: t.unset } : {}),
    ...(included ? { included } : {}),
    ...(t.notified?.length ? { notified: t.notified } : {}),
    ...(withheld.length ? { withheld } : {}),
    ...(oversize.length ? { oversize } : {}),
    ...(t.failure ? { failure: jsonSafe(t.failure) ? mask(t.failure) : { task: mask(t.failure.task), name: mask(t.failure.name), result: {} } } : {}),
  };
}

/** Writes a run's journal as it goes. */
export class Journal implements TaskJournal {
  private fd: number | undefined;
  private dirty = false;

  constructor(
    readonly file: string,
    header: JournalHeader,
    /** Masks every line (the run's masker). */
    private readonly masker?: Masker,
  ) {
    this.fd = openSync(file, 'w', 0o600);
    this.append(header as unknown as Obj);
    this.sync();
  }

  /** Feed every (masked) event of the run. */
  onEvent(e: RunEvent): void {
    if (e.type === 'cluster_done') this.playDone(e.play_index, e.cluster);
    else if (e.type === 'task_result' && e.status === 'changed' && e.module === 'lb_switch') this.append({ type: 'lb', cluster: e.cluster, task: e.task, msg: e.msg });
  }

  started(cluster: string, key: string, task: string): void {
    this.append({ type: 'start', cluster, key, task: this.masker ? this.masker.mask(task) : task });
  }

  finished(t: TaskFinished): void {
    this.append(journalTask(t, this.masker) as unknown as Obj);
  }

  rescued(cluster: string, key: string): void {
    this.append({ type: 'rescued', cluster, key });
  }

  carried(t: JournalTask): void {
    this.append(t as unknown as Obj);
  }

  playDone(play: number, cluster: string): void {
    this.append({ type: 'done', play, cluster });
    this.sync();
  }

  sync(): void {
    if (this.fd === undefined || !this.dirty) return;
    fsyncSync(this.fd);
    this.dirty = false;
  }

  /** Flush and close (the run is over). */
  close(): void {
    if (this.fd === undefined) return;
    try {
      this.sync();
    } finally {
      closeSync(this.fd);
      this.fd = undefined;
    }
  }

  private append(line: Obj): void {
    if (this.fd === undefined) return;
    writeSync(this.fd, `${JSON.stringify(line)}\n`);
    this.dirty = true;
  }
}

/** The journal file of run `id` (`last`: the newest journal) in `dir`. */
async function journalFile(dir: string, id: string): Promise<string> {
  if (id !== 'last') return path.join(dir, `${path.basename(id)}.journal`);
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.journal')).sort();
  const newest = names[names.length - 1];
  if (!newest) throw new Error(`no run journal in ${dir}: only runs that were not --check keep one`);
  return path.join(dir, newest);
}

/** A `task` line read back, or undefined when it is not one (an older or damaged line). */
function asTask(l: Obj): JournalTask | undefined {
  if (l.type !== 'task' || typeof l.cluster !== 'string' || typeof l.key !== 'string' || typeof l.status !== 'string' || typeof l.run !== 'string') return undefined;
  const strings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);
  const failure = isRecord(l.failure) && typeof l.failure.task === 'string' ? { task: l.failure.task, name: typeof l.failure.name === 'string' ? l.failure.name : '', result: isRecord(l.failure.result) ? l.failure.result : {} } : undefined;
  return {
    type: 'task',
    cluster: l.cluster,
    key: l.key,
    task: typeof l.task === 'string' ? l.task : l.key,
    module: typeof l.module === 'string' ? l.module : '',
    status: l.status as ResultStatus,
    ...(l.ignored === true ? { ignored: true } : {}),
    run: l.run,
    ...(isRecord(l.set) ? { set: l.set } : {}),
    ...(strings(l.unset) ? { unset: strings(l.unset) } : {}),
    ...(isRecord(l.included) ? { included: l.included } : {}),
    ...(strings(l.notified) ? { notified: strings(l.notified) } : {}),
    ...(strings(l.withheld) ? { withheld: strings(l.withheld) } : {}),
    ...(strings(l.oversize) ? { oversize: strings(l.oversize) } : {}),
    ...(failure ? { failure } : {}),
  };
}

/** Parse a journal's text (a line cut short by a kill is left out). */
export function parseJournal(text: string, file: string): JournalState {
  const lines = text.split('\n').filter((l) => l.trim()).flatMap((l) => {
    try {
      const v: unknown = JSON.parse(l);
      return isRecord(v) ? [v] : [];
    } catch {
      return []; // a line cut by a kill
    }
  });
  const first = lines[0];
  if (!first || first.type !== 'journal' || typeof first.run_id !== 'string' || typeof first.playbook !== 'string') throw new Error(`${file} is not a kplay run journal`);
  const header = first as unknown as JournalHeader;
  const state: JournalState = { header, done: new Set(), lb: [], finishedPlays: new Map(), tasks: new Map(), started: new Set(), rescued: new Set() };
  for (const l of lines.slice(1)) {
    if (l.type === 'done' && typeof l.play === 'number' && typeof l.cluster === 'string') {
      if (state.done.has(`${l.play}|${l.cluster}`)) continue;
      state.done.add(`${l.play}|${l.cluster}`);
      state.finishedPlays.set(l.play, [...(state.finishedPlays.get(l.play) ?? []), l.cluster]);
    } else if (l.type === 'lb' && typeof l.cluster === 'string' && typeof l.task === 'string') state.lb.push({ cluster: l.cluster, task: l.task, msg: typeof l.msg === 'string' ? l.msg : undefined });
    else if (l.type === 'start' && typeof l.cluster === 'string' && typeof l.key === 'string') state.started.add(`${l.cluster}|${l.key}`);
    else if (l.type === 'rescued' && typeof l.cluster === 'string' && typeof l.key === 'string') state.rescued.add(`${l.cluster}|${l.key}`);
    else {
      const t = asTask(l);
      if (!t) continue;
      const id = `${t.cluster}|${t.key}`;
      state.tasks.delete(id); // the last entry wins, in the order written
      state.tasks.set(id, t);
    }
  }
  return state;
}

/** Read the journal of run `id` (`last`: the newest journal) in `dir`. */
export async function readJournal(dir: string, id: string): Promise<JournalState> {
  const file = await journalFile(dir, id);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new Error(`no journal of run ${id} in ${dir} (pass --record-dir if the run used another one)`);
  }
  return parseJournal(text, file);
}

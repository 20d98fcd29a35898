/**
 * The resume journal of a run: `<record dir>/<run id>.journal`, appended (synchronously, so a
 * killed run leaves it complete up to its last finished step) with one line per cluster that
 * finished a play, and one per load balancer change. `kplay run --resume RUN_ID|last` reads it:
 * clusters that finished a play are left out of it, the others run it again (modules are
 * idempotent, so what the interrupted run already did is found done and reported ok).
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { RunEvent } from '../report/events.js';
import { isRecord as isObj } from '../load/shape.js';

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
}

/** A load balancer change of the run, reported when resuming (the server may still be drained). */
export interface JournalLbChange {
  cluster: string;
  task: string;
  msg?: string;
}

/** A journal read back. */
export interface JournalState {
  header: JournalHeader;
  /** `play index|cluster` of the plays clusters finished. */
  done: Set<string>;
  lb: JournalLbChange[];
  /** Clusters that finished at least one play, per play index. */
  finishedPlays: Map<number, string[]>;
}

/** Writes a run's journal as its events come. */
export class Journal {
  constructor(
    readonly file: string,
    header: JournalHeader,
  ) {
    writeFileSync(file, `${JSON.stringify(header)}\n`, { mode: 0o600 });
  }

  /** Feed every (masked) event of the run. */
  onEvent(e: RunEvent): void {
    if (e.type === 'cluster_done') this.append({ type: 'done', play: e.play_index, cluster: e.cluster });
    else if (e.type === 'task_result' && e.status === 'changed' && e.module === 'lb_switch') this.append({ type: 'lb', cluster: e.cluster, task: e.task, msg: e.msg });
  }

  private append(line: Record<string, unknown>): void {
    appendFileSync(this.file, `${JSON.stringify(line)}\n`);
  }
}


/** Read the journal of run `id` (`last`: the newest journal) in `dir`. */
export async function readJournal(dir: string, id: string): Promise<JournalState> {
  let file: string;
  if (id === 'last') {
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.journal')).sort();
    const newest = names[names.length - 1];
    if (!newest) throw new Error(`no run journal in ${dir}: only runs that were not --check keep one`);
    file = path.join(dir, newest);
  } else file = path.join(dir, `${path.basename(id)}.journal`);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new Error(`no journal of run ${id} in ${dir} (pass --record-dir if the run used another one)`);
  }
  const lines = text.split('\n').filter((l) => l.trim()).flatMap((l) => {
    try {
      const v: unknown = JSON.parse(l);
      return isObj(v) ? [v] : [];
    } catch {
      return []; // a line cut by a kill
    }
  });
  const first = lines[0];
  if (!first || first.type !== 'journal' || typeof first.run_id !== 'string' || typeof first.playbook !== 'string') throw new Error(`${file} is not a kplay run journal`);
  const header = first as unknown as JournalHeader;
  const done = new Set<string>();
  const finishedPlays = new Map<number, string[]>();
  const lb: JournalLbChange[] = [];
  for (const l of lines.slice(1)) {
    if (l.type === 'done' && typeof l.play === 'number' && typeof l.cluster === 'string') {
      done.add(`${l.play}|${l.cluster}`);
      finishedPlays.set(l.play, [...(finishedPlays.get(l.play) ?? []), l.cluster]);
    } else if (l.type === 'lb' && typeof l.cluster === 'string' && typeof l.task === 'string') lb.push({ cluster: l.cluster, task: l.task, msg: typeof l.msg === 'string' ? l.msg : undefined });
  }
  return { header, done, lb, finishedPlays };
}

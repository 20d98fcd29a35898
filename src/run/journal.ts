/**
 * The resume journal of a run as an observer (see observer.ts): opened before the run (its header
 * names the playbook, inventory, selection and the digests of the playbook's files, so
 * `kplay run --resume` can find and check them), fed every event and each task's entry, closed at
 * the end. Best effort: a journal that cannot be opened is said once (the run then cannot be
 * resumed), and one that cannot be written (a full disk) is dropped without stopping the run.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Journal, type TaskJournal } from '../audit/journal.js';
import type { ShardSpec } from '../fleet/shard.js';
import { errorMessage } from '../load/errors.js';
import type { Playbook } from '../playbook/types.js';
import type { RunEvent } from '../report/events.js';
import type { Masker } from '../core/mask.js';
import { playbookDigests } from '../executor/resume.js';
import type { RunObserver } from './observer.js';

/** What the journal's header records. */
export interface JournalStart {
  runId: string;
  playbook: Playbook;
  /** The inventory as given on the command line (`--resume` loads it again). */
  inventoryArg?: string;
  limit?: string;
  tags: string[];
  skipTags: string[];
  extraVars: Record<string, unknown>;
  shard?: ShardSpec;
}

/** The journal of a run (see the file header). */
export class JournalObserver implements RunObserver {
  private journal: Journal | undefined;

  private constructor(journal: Journal | undefined) {
    this.journal = journal;
  }

  /** Open the journal in `recordDir`; when that fails, `warn` says so and the run goes on without one. */
  static async start(recordDir: string, s: JournalStart, masker: Masker, warn: (e: RunEvent) => void): Promise<JournalObserver> {
    try {
      await mkdir(recordDir, { recursive: true });
      const playbookFiles = await playbookDigests(s.playbook, (t) => masker.mask(t));
      const sh = s.shard;
      return new JournalObserver(
        new Journal(path.join(recordDir, `${s.runId}.journal`), {
          type: 'journal',
          run_id: s.runId,
          playbook: path.resolve(s.playbook.file),
          inventory: s.inventoryArg && existsSync(s.inventoryArg) ? path.resolve(s.inventoryArg) : (s.inventoryArg ?? ''),
          ...(s.limit ? { limit: s.limit } : {}),
          tags: s.tags,
          skip_tags: s.skipTags,
          extra_var_names: Object.keys(s.extraVars).sort(),
          started: new Date().toISOString(),
          playbook_files: playbookFiles,
          ...(sh ? { shard: { index: sh.index, shards: sh.shards, ...(sh.fleetRun ? { fleet_run: sh.fleetRun } : {}), namespace: sh.namespace, context: sh.context, ...(sh.kubeconfig ? { kubeconfig: sh.kubeconfig } : {}) } } : {}),
        }, masker),
      );
    } catch (e) {
      warn({ type: 'warning', msg: `no resume journal (${errorMessage(e)}): this run cannot be resumed with --resume` });
      return new JournalObserver(undefined);
    }
  }

  onEvent(e: RunEvent): void {
    try {
      this.journal?.onEvent(e);
    } catch {
      this.journal = undefined; // a full disk must not stop the run; the record reports what happened
    }
  }

  /** The journal as the engine writes each task's entry (undefined: there is none). */
  tasks(): TaskJournal | undefined {
    const journal = this.journal;
    return journal ? safeJournal(journal, () => (this.journal = undefined)) : undefined;
  }

  stop(): Promise<void> {
    try {
      this.journal?.close();
    } catch {
      // the journal is best effort (a full disk): the record says what happened
    }
    return Promise.resolve();
  }
}

/** The journal as the executor writes it: a write that fails (a full disk) drops it instead of stopping the run. */
function safeJournal(journal: Journal, drop: () => void): TaskJournal {
  let ok = true;
  const guard = (fn: () => void): void => {
    if (!ok) return;
    try {
      fn();
    } catch {
      ok = false;
      drop();
    }
  };
  return {
    started: (c, k, t) => guard(() => journal.started(c, k, t)),
    finished: (t) => guard(() => journal.finished(t)),
    rescued: (c, k) => guard(() => journal.rescued(c, k)),
    carried: (t) => guard(() => journal.carried(t)),
    playDone: (p, c) => guard(() => journal.playDone(p, c)),
    sync: () => guard(() => journal.sync()),
  };
}

/**
 * The run service: the engine's run of a playbook (src/executor/playbook-run.ts) together with
 * what makes it safe to run on real clusters, each an observer of the run's events started and
 * stopped here (observer.ts) — the cluster locks taken before the first change on each cluster
 * (locks.ts), the run records (records.ts) and the resume journal (journal.ts) — and, for a shard
 * of a fleet, the fleet's failure budget (src/fleet/shard.ts). `kplay run`, `kplay plan`,
 * `kplay drift` and programs using the SDK all run playbooks through here; commands only turn
 * flags into {@link ManagedRunOptions} and the outcome into an exit code.
 */
import { setting } from '../core/settings.js';
import { DEFAULT_FORKS } from '../core/settings-table.js';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { JournalState } from '../audit/journal.js';
import type { HolderInfo } from '../audit/lock.js';
import { gitInfo, RunRecorder, whoAmI, type RunHeader } from '../audit/record.js';
import { limitSet, runPlaybook, type RunSummary } from '../executor/playbook-run.js';
import { Resume } from '../executor/resume.js';
import type { ClusterState } from '../executor/state.js';
import { openShard, type ShardSpec } from '../fleet/shard.js';
import { withImplicitLocalhost } from '../inventory/localhost.js';
import { checkPatterns } from '../inventory/patterns.js';
import type { Inventory } from '../inventory/types.js';
import type { Playbook, VarPrompt } from '../playbook/types.js';
import type { ModuleRegistry } from '../plugins/registry.js';
import type { RunEvent } from '../report/events.js';
import type { Masker } from '../core/mask.js';
import { JournalObserver } from './journal.js';
import { LockObserver } from './locks.js';
import type { RunObserver } from './observer.js';
import { RecordObserver, type RecordsWritten } from './records.js';

/** A fresh run id: time-sortable and unique. */
export function newRunId(): string {
  // milliseconds included: run ids sort in start order (the record chains rely on it)
  const t = new Date().toISOString().replace(/[-:.]/g, '').replace(/Z$/, '');
  return `${t}-${randomBytes(3).toString('hex')}`;
}

/** Everything a managed run needs. */
export interface ManagedRunOptions {
  playbook: Playbook;
  inventory: Inventory;
  registry: ModuleRegistry;
  extraVars: Record<string, unknown>;
  /** See {@link RunOptions.ask}. */
  ask?: (p: VarPrompt) => Promise<string>;
  masker: Masker;
  /** `--check`: change nothing; no lock, record or journal. @default false */
  check?: boolean;
  /** `--diff`. @default false */
  diff?: boolean;
  limit?: string;
  tags?: string[];
  skipTags?: string[];
  startAtTask?: string;
  /** `-v` count (Ansible's `ansible_verbosity`). @default 0 */
  verbosity?: number;
  /** Clusters worked on at once. @default {@link DEFAULT_FORKS} */
  forks?: number;
  /** A repair run (`kplay drift --repair`): only these modules change anything. */
  repair?: ReadonlySet<string>;
  /**
   * Resuming: the journal of the interrupted run (`readJournal`). Clusters that finished a play are
   * left out of it; tasks finished on a cluster are restored, not run again (see resume.ts).
   */
  resume?: JournalState;
  /** Take the cluster locks. @default true */
  lock?: boolean;
  /** How long to wait for a lock another run holds. @default 60000 */
  lockTimeoutMs?: number;
  /** Run records kept per cluster. @default 20 */
  keepRecords?: number;
  /** Directory of the local run records and journals. @default $KPLAY_RECORD_DIR or .kplay/runs */
  recordDir?: string;
  /** The inventory as given on the command line (for the journal, so `--resume` finds it). */
  inventoryArg?: string;
  /** The plan carried out (for the run record). */
  plan?: RunHeader['plan'];
  /** The run this one resumes. */
  resumedFrom?: string;
  /**
   * This run is a shard of a fleet (`--shard I/N`): it runs its part of the inventory, and with a
   * fleet run id shares the failure budget in the management cluster (src/fleet/).
   */
  shard?: ShardSpec;
  /** Stops the run (Ctrl-C). */
  signal: AbortSignal;
  /** Every event, masked. */
  onEvent(e: RunEvent): void;
}

/** What a managed run produced. */
export interface ManagedRunResult {
  summary: RunSummary;
  recorder?: RunRecorder;
  /** The local run record written. */
  recordFile?: string;
  /** Run records that could not be written (masked). */
  recordErrors: string[];
}

/** Run a playbook with locks, run records and a resume journal (see the file header). */
export async function runManaged(o: ManagedRunOptions): Promise<ManagedRunResult> {
  const { masker } = o;
  // a play on `localhost` runs on Ansible's implicit localhost when the inventory has none
  const inventory = withImplicitLocalhost(o.inventory, [...o.playbook.plays.map((p) => p.hosts), o.limit], { cwd: process.cwd() });
  // only the limit: a play whose pattern matches nothing is skipped with a warning (as ansible-playbook)
  checkPatterns(inventory, [], o.limit);
  const check = o.check === true;
  const tags = o.tags ?? [];
  const skipTags = o.skipTags ?? [];
  const runId = newRunId();
  const { user, host } = whoAmI();
  // git runs while the playbook does: only the run record needs it, at the end.
  const git = check ? undefined : gitInfo(o.playbook.dir);
  // --check changes nothing: no record, no journal (and no lock: nothing is changed)
  const records = check
    ? undefined
    : new RecordObserver(
        new RunRecorder({
          run_id: runId,
          user,
          host,
          git: undefined, // set before the record is written, in this place of the header
          started: new Date().toISOString(),
          playbook: o.playbook.file,
          inventory: inventory.source,
          limit: o.limit,
          tags,
          skip_tags: skipTags,
          extra_var_names: Object.keys(o.extraVars).sort(),
          check,
          lock: o.lock !== false,
          ...(o.plan ? { plan: o.plan } : {}),
          ...(o.resumedFrom ? { resumed_from: o.resumedFrom } : {}),
          ...(o.shard?.fleetRun ? { fleet: { run: o.shard.fleetRun, shard: o.shard.index, shards: o.shard.shards } } : {}),
        }),
        o.signal,
      );
  const recordDir = path.resolve(o.recordDir ?? setting('recordDir'));
  const journal = records
    ? await JournalObserver.start(recordDir, { runId, playbook: o.playbook, inventoryArg: o.inventoryArg, limit: o.limit, tags, skipTags, extraVars: o.extraVars, shard: o.shard }, masker, (e) => o.onEvent(e))
    : undefined;
  const observers: RunObserver[] = [...(records ? [records] : []), ...(journal ? [journal] : [])];
  const emit = (e: RunEvent): void => {
    const masked = masker.maskValue(e);
    for (const ob of observers) ob.onEvent?.(masked);
    o.onEvent(masked);
  };
  const holder: HolderInfo = { runId, user, host, playbook: path.relative(process.cwd(), o.playbook.file) || o.playbook.file, pid: process.pid };
  const locks = new LockObserver(holder, o.lockTimeoutMs ?? 60_000, o.signal, emit);
  observers.push(locks);
  // Before a cluster's first change: its lock (unless --no-lock), and the read of its run records
  // as that change goes out (the end of the run then only writes; see records.ts).
  const beforeFirstChange = async (cs: ClusterState, vars: Record<string, unknown>): Promise<void> => {
    if (o.lock !== false) await locks.lock(cs, vars);
    records?.watchWrites(cs);
  };
  const shard = o.shard ? await openShard(o.shard, { runId, resumedFrom: o.resumedFrom, clusters: [...(limitSet({ inventory, limit: o.limit }) ?? inventory.clusters.keys())], signal: o.signal, emit }) : undefined;
  try {
    const summary = await runPlaybook({
      playbook: o.playbook,
      inventory,
      registry: o.registry,
      extraVars: o.extraVars,
      ...(o.ask ? { ask: o.ask } : {}),
      check,
      repair: o.repair,
      resume: o.resume ? new Resume(o.resume) : undefined,
      journal: journal?.tasks(),
      diff: o.diff === true,
      limit: o.limit,
      tags,
      skipTags,
      startAtTask: o.startAtTask,
      verbosity: o.verbosity ?? 0,
      forks: o.forks ?? DEFAULT_FORKS,
      runId,
      masker,
      signal: o.signal,
      emit,
      beforeFirstChange: o.lock === false && !records ? undefined : beforeFirstChange,
      ...(shard ? { fleet: shard.hooks } : {}),
    });
    await shard?.finish(summary);
    const written: RecordsWritten = records && git ? await records.write(recordDir, summary.clusters, o.keepRecords ?? 20, git) : { recordErrors: [] };
    return { summary, recorder: records?.recorder, recordFile: written.recordFile, recordErrors: written.recordErrors.map((m) => masker.mask(m)) };
  } catch (e) {
    await shard?.crashed(e);
    throw e;
  } finally {
    // records first (no write is a change any more), then the journal, then the locks
    for (const ob of observers) await ob.stop();
  }
}

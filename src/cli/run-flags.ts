/** `kplay run` / `plan` / `drift` flags → the run service's options (src/run/managed-run.ts: locks, records, journal). */
import type { JournalState } from '../audit/journal.js';
import { terminalAsk } from './prompt.js';
import type { RunHeader } from '../audit/record.js';
import { runManaged, type ManagedRunResult } from '../run/managed-run.js';
import type { Inventory } from '../inventory/types.js';
import { InputError } from '../load/errors.js';
import type { RunEvent } from '../report/events.js';
import { shardSpec, type ShardFlags, type ShardSpec } from '../fleet/spec.js';
import { interruptController, listOption, RunCrashedError } from './common.js';
import type { LoadFlags, Loaded } from '../run/inputs.js';
import { setting } from '../core/settings.js';
import { DEFAULT_FORKS } from '../core/settings-table.js';


/** Flags of `kplay run` (and `kplay drift`); `--shard I/N` and the fleet flags are src/fleet/spec.ts's. */
export interface RunFlags extends LoadFlags, ShardFlags {
  check?: boolean;
  diff?: boolean;
  limit?: string;
  tags?: string[];
  skipTags?: string[];
  startAtTask?: string;
  forks: string;
  /** `-o`: `text`, `json` or `ansible`; empty when not given (see `defaultOutput`). */
  output: string;
  /** `--progress plain|board` (default: board on a terminal with text output). */
  progress?: string;
  verbose: number;
  color?: boolean;
  /** `--no-lock` sets this to false. */
  lock?: boolean;
  lockTimeout?: string;
  recordDir?: string;
  keepRecords?: string;
  /** A repair run (`kplay drift --repair`): only these modules change anything, see RunOptions.repair. */
  repair?: ReadonlySet<string>;
  /** `--plan FILE`: carry out this plan only (see `run-command.ts`). */
  plan?: string;
  /** `--replan`: with `--plan`, run the playbook as it is now even when the plan no longer holds. */
  replan?: boolean;
  /** The plan carried out, for the run record. */
  planRecord?: RunHeader['plan'];
  /** `--resume RUN_ID|last`: carry on an interrupted run (see `run-command.ts`). */
  resume?: string;
  /** Resuming: the journal of the run resumed (see src/executor/resume.ts), and its id. */
  resumeState?: JournalState;
  resumedFrom?: string;
  /** The shard this run is (resolved from the flags, the environment, or the resumed run's journal). */
  shardSpec?: ShardSpec;
}

function positiveInt(value: string | undefined, flag: string, dflt: number): number {
  if (value === undefined) return dflt;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InputError(`${flag} must be a non-negative number, got '${value}'`);
  return n;
}

/**
 * Everything `kplay run`, `kplay plan` and `kplay drift` share: flags → a managed run (src/run/managed-run.ts).
 * An error after a task ran for real (not `--check`) is thrown as a {@link RunCrashedError}: clusters may have changed.
 */
export async function executeRun(flags: RunFlags, onEvent: (e: RunEvent) => void, loaded: Loaded): Promise<ManagedRunResult> {
  // --forks, else ANSIBLE_FORKS / `forks` of ansible.cfg, else kplay's default
  const forks = flags.forks === String(DEFAULT_FORKS) ? setting('forks') : Number(flags.forks);
  if (!Number.isInteger(forks) || forks < 1) throw new InputError(`--forks must be a positive integer, got '${flags.forks}'`);
  const shard = flags.resumeState ? flags.shardSpec : (flags.shardSpec ?? shardSpec(flags));
  const intr = interruptController(() => undefined);
  // vars_prompt: asked on a terminal (not under --output json, whose stdout is read by a program)
  const ask = flags.output === 'json' ? undefined : terminalAsk();
  let tasksRan = false;
  try {
    return await runManaged({
      playbook: loaded.playbook,
      inventory: loaded.inventory as Inventory,
      registry: loaded.registry,
      extraVars: loaded.extraVars,
      ...(ask ? { ask } : {}),
      masker: loaded.masker,
      check: flags.check === true,
      diff: flags.diff === true,
      limit: flags.limit,
      tags: listOption(flags.tags),
      skipTags: listOption(flags.skipTags),
      startAtTask: flags.startAtTask,
      verbosity: flags.verbose,
      forks,
      repair: flags.repair,
      resume: flags.resumeState,
      lock: flags.lock !== false,
      lockTimeoutMs: positiveInt(flags.lockTimeout, '--lock-timeout', 60) * 1000,
      keepRecords: positiveInt(flags.keepRecords, '--keep-records', 20),
      recordDir: flags.recordDir,
      inventoryArg: flags.inventory,
      plan: flags.planRecord,
      resumedFrom: flags.resumedFrom,
      ...(shard ? { shard } : {}),
      signal: intr.signal,
      onEvent: (e) => {
        if (e.type === 'task_result') tasksRan = true;
        onEvent(e);
      },
    });
  } catch (e) {
    throw tasksRan && flags.check !== true ? new RunCrashedError(e) : e;
  } finally {
    intr.dispose();
  }
}

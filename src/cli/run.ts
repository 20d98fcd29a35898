/** `kplay run`: parse flags → load → run (with locks and run records) → exit code. */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYamlText } from 'yaml';
import { FileLock } from '../audit/filelock.js';
import { ClusterLock, type HolderInfo } from '../audit/lock.js';
import { Journal } from '../audit/journal.js';
import { gitInfo, RunRecorder, whoAmI, type RunHeader } from '../audit/record.js';
import { matchClusters } from '../inventory/patterns.js';
import { runPlaybook, type RunSummary } from '../executor/run.js';
import type { ClusterState } from '../executor/state.js';
import type { Inventory } from '../inventory/types.js';
import { connect } from '../k8s/client.js';
import type { KubeClient } from '../k8s/types.js';
import { errorMessage, InputError } from '../load/errors.js';
import type { RunEvent } from '../report/events.js';
import { interruptController, listOption, newRunId, type LoadFlags, type Loaded } from './common.js';

/** Flags of `kplay run` (and `kplay drift`). */
export interface RunFlags extends LoadFlags {
  check?: boolean;
  diff?: boolean;
  limit?: string;
  tags?: string[];
  skipTags?: string[];
  startAtTask?: string;
  forks: string;
  output: string;
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
  /** Resuming: `play index|cluster` pairs already finished, and the run resumed. */
  resumeDone?: ReadonlySet<string>;
  resumedFrom?: string;
}

/** Check every play's host pattern and the limit before anything runs. */
export function checkPatterns(inv: Inventory, hosts: (string | string[])[], limit: string | undefined): void {
  for (const h of hosts) matchClusters(inv, h);
  if (limit) matchClusters(inv, limit);
}

/** The Kubernetes client of a cluster, shared with the modules of the run (same adapter slot). */
/** True when `kubeconfig` exists and defines `context` (else there is no cluster to lock). */
export function hasKubeContext(kubeconfig: string | undefined, context: string): boolean {
  if (!kubeconfig || !existsSync(kubeconfig)) return false;
  try {
    const doc: unknown = parseYamlText(readFileSync(kubeconfig, 'utf8'));
    const contexts = typeof doc === 'object' && doc !== null ? (doc as { contexts?: unknown }).contexts : undefined;
    return Array.isArray(contexts) && contexts.some((c) => typeof c === 'object' && c !== null && (c as { name?: unknown }).name === context);
  } catch {
    return true; // unreadable: let the cluster connection report it
  }
}

export function clusterClient(cs: ClusterState): Promise<KubeClient> {
  return cs.adapter<KubeClient>('k8s', () => connect({ name: cs.name, context: cs.inv.context, kubeconfig: cs.inv.kubeconfig }));
}

function positiveInt(value: string | undefined, flag: string, dflt: number): number {
  if (value === undefined) return dflt;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InputError(`${flag} must be a non-negative number, got '${value}'`);
  return n;
}

/** Everything `kplay run` and `kplay drift` share: load, check, run; returns the summary. */
export async function executeRun(
  flags: RunFlags,
  onEvent: (e: RunEvent) => void,
  loaded: Loaded,
): Promise<{ summary: RunSummary; recorder?: RunRecorder; recordFile?: string; recordErrors: string[] }> {
  const forks = Number(flags.forks);
  if (!Number.isInteger(forks) || forks < 1) throw new InputError(`--forks must be a positive integer, got '${flags.forks}'`);
  const lockTimeoutMs = positiveInt(flags.lockTimeout, '--lock-timeout', 60) * 1000;
  const keep = positiveInt(flags.keepRecords, '--keep-records', 20);
  const inventory = loaded.inventory as Inventory;
  checkPatterns(inventory, loaded.playbook.plays.map((p) => p.hosts), flags.limit);
  const masker = loaded.masker;
  const check = flags.check === true;
  const runId = newRunId();
  const { user, host } = whoAmI();
  const recorder = check
    ? undefined
    : new RunRecorder({
        run_id: runId,
        user,
        host,
        git: await gitInfo(loaded.playbook.dir),
        started: new Date().toISOString(),
        playbook: loaded.playbook.file,
        inventory: inventory.source,
        limit: flags.limit,
        tags: listOption(flags.tags),
        skip_tags: listOption(flags.skipTags),
        extra_var_names: Object.keys(loaded.extraVars).sort(),
        check,
        lock: flags.lock !== false,
        ...(flags.planRecord ? { plan: flags.planRecord } : {}),
        ...(flags.resumedFrom ? { resumed_from: flags.resumedFrom } : {}),
      });
  const recordDirPath = path.resolve(flags.recordDir ?? process.env.KPLAY_RECORD_DIR ?? '.kplay/runs');
  let journal: Journal | undefined;
  if (recorder) {
    try {
      await mkdir(recordDirPath, { recursive: true });
      journal = new Journal(path.join(recordDirPath, `${runId}.journal`), {
        type: 'journal',
        run_id: runId,
        playbook: path.resolve(loaded.playbook.file),
        inventory: flags.inventory && existsSync(flags.inventory) ? path.resolve(flags.inventory) : (flags.inventory ?? ''),
        ...(flags.limit ? { limit: flags.limit } : {}),
        tags: listOption(flags.tags),
        skip_tags: listOption(flags.skipTags),
        extra_var_names: Object.keys(loaded.extraVars).sort(),
        started: new Date().toISOString(),
      });
    } catch (e) {
      onEvent({ type: 'warning', msg: `no resume journal (${errorMessage(e)}): this run cannot be resumed with --resume` });
    }
  }
  const holder: HolderInfo = { runId, user, host, playbook: path.relative(process.cwd(), loaded.playbook.file) || loaded.playbook.file, pid: process.pid };
  const locks = new Map<string, { release(): Promise<void> }>();
  const intr = interruptController(() => undefined);
  const emit = (e: RunEvent): void => {
    const masked = masker.maskValue(e);
    recorder?.onEvent(masked);
    try {
      journal?.onEvent(masked);
    } catch {
      journal = undefined; // a full disk must not stop the run; the record reports what happened
    }
    onEvent(masked);
  };
  try {
    const summary = await runPlaybook({
      playbook: loaded.playbook,
      inventory,
      registry: loaded.registry,
      extraVars: loaded.extraVars,
      check,
      repair: flags.repair,
      resumeDone: flags.resumeDone,
      diff: flags.diff === true,
      limit: flags.limit,
      tags: listOption(flags.tags),
      skipTags: listOption(flags.skipTags),
      startAtTask: flags.startAtTask,
      forks,
      runId,
      masker,
      signal: intr.signal,
      emit,
      beforeFirstChange:
        flags.lock === false
          ? undefined
          : async (cs) => {
              if (!hasKubeContext(cs.inv.kubeconfig, cs.inv.context)) {
                // No cluster to hold a Lease in (a load-balancer-only entry): a local lock file.
                emit({ type: 'warning', cluster: cs.name, msg: `no kubeconfig context "${cs.inv.context}" for ${cs.name}: locking with a local lock file (protects against other runs on this machine; use --no-lock to skip)` });
                const fileLock = await FileLock.acquire(cs.name, {
                  holder,
                  timeoutMs: lockTimeoutMs,
                  signal: intr.signal,
                  onWait: (msg) => emit({ type: 'warning', cluster: cs.name, msg }),
                  onTakeOver: (msg) => emit({ type: 'warning', cluster: cs.name, msg }),
                });
                locks.set(cs.name, fileLock);
                return;
              }
              const client = await clusterClient(cs);
              const lock = await ClusterLock.acquire(client, {
                holder,
                timeoutMs: lockTimeoutMs,
                signal: intr.signal,
                onWait: (msg) => emit({ type: 'warning', cluster: cs.name, msg }),
                onTakeOver: (msg) => emit({ type: 'warning', cluster: cs.name, msg }),
              });
              locks.set(cs.name, lock);
            },
    });
    const recordErrors: string[] = [];
    let recordFile: string | undefined;
    if (recorder) {
      const dir = recordDirPath;
      try {
        recordFile = await recorder.writeLocal(dir);
      } catch (e) {
        recordErrors.push(`local run record in ${dir}: ${errorMessage(e)}`);
      }
      // In-cluster records only where something changed.
      await Promise.all(
        summary.clusters
          .filter((cs) => cs.clusterChanged && !cs.unreachable)
          .map(async (cs) => {
            try {
              await recorder.writeCluster(await clusterClient(cs), cs.name, keep);
            } catch (e) {
              recordErrors.push(`run record in cluster ${cs.name}: ${errorMessage(e)}`);
            }
          }),
      );
    }
    return { summary, recorder, recordFile, recordErrors: recordErrors.map((m) => masker.mask(m)) };
  } finally {
    await Promise.all([...locks.values()].map((l) => l.release().catch(() => undefined)));
    intr.dispose();
  }
}


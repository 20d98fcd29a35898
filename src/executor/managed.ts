/**
 * A managed run: the engine's run of a playbook together with what makes it safe to run on real
 * clusters — a cluster lock taken before the first change on each cluster (a Lease, or a local
 * lock file for entries without a kubeconfig context), the run record (local JSON lines, and in
 * each cluster that changed), and the resume journal. `kplay run`, `kplay plan`, `kplay drift`
 * and programs using the SDK all run playbooks through here; commands only turn flags into
 * {@link ManagedRunOptions} and the outcome into an exit code.
 */
import { DEFAULT_FORKS, setting } from '../core/settings.js';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { FileLock } from '../audit/filelock.js';
import { Journal, type JournalState, type TaskJournal } from '../audit/journal.js';
import { ClusterLock, type HolderInfo } from '../audit/lock.js';
import { SYSTEM_NAMESPACE } from '../audit/system.js';
import { byName, gitInfo, listRecords, RunRecorder, whoAmI, type RunHeader } from '../audit/record.js';
import { withImplicitLocalhost } from '../inventory/localhost.js';
import { checkPatterns } from '../inventory/patterns.js';
import type { Inventory } from '../inventory/types.js';
import { connect, connectOptionsFrom } from '../k8s/client.js';
import { hasKubeContext } from '../k8s/kubeconfig.js';
import type { KubeClient, KubeObject } from '../k8s/types.js';
import { errorMessage } from '../load/errors.js';
import type { Playbook, VarPrompt } from '../playbook/types.js';
import type { RunEvent } from '../report/events.js';
import type { Masker } from '../core/mask.js';
import type { ModuleRegistry } from '../plugins/registry.js';
import { playbookDigests, Resume } from './resume.js';
import { limitSet, runPlaybook, type RunSummary } from './run.js';
import { openShard, type ShardSpec } from '../fleet/shard.js';
import type { ClusterState } from './state.js';


/** A fresh run id: time-sortable and unique. */
export function newRunId(): string {
  // milliseconds included: run ids sort in start order (the record chains rely on it)
  const t = new Date().toISOString().replace(/[-:.]/g, '').replace(/Z$/, '');
  return `${t}-${randomBytes(3).toString('hex')}`;
}

/** The Kubernetes client of a cluster, shared with the modules of the run (same adapter slot). */
/** The cluster's client (created with the task's variables — `k8s_qps`, `k8s_burst` — when the lock needs it first). */
function clusterClient(cs: ClusterState, vars: Record<string, unknown> = cs.inv.vars): Promise<KubeClient> {
  return cs.adapter<KubeClient>('k8s', () => connect({ name: cs.name, context: cs.inv.context, kubeconfig: cs.inv.kubeconfig }, connectOptionsFrom(vars)));
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
  const recorder = check
    ? undefined
    : new RunRecorder({
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
      });
  const recordDir = path.resolve(o.recordDir ?? setting('recordDir'));
  let journal: Journal | undefined;
  if (recorder) {
    try {
      await mkdir(recordDir, { recursive: true });
      const playbookFiles = await playbookDigests(o.playbook, (t) => masker.mask(t));
      journal = new Journal(path.join(recordDir, `${runId}.journal`), {
        type: 'journal',
        run_id: runId,
        playbook: path.resolve(o.playbook.file),
        inventory: o.inventoryArg && existsSync(o.inventoryArg) ? path.resolve(o.inventoryArg) : (o.inventoryArg ?? ''),
        ...(o.limit ? { limit: o.limit } : {}),
        tags,
        skip_tags: skipTags,
        extra_var_names: Object.keys(o.extraVars).sort(),
        started: new Date().toISOString(),
        playbook_files: playbookFiles,
        ...(o.shard ? { shard: { index: o.shard.index, shards: o.shard.shards, ...(o.shard.fleetRun ? { fleet_run: o.shard.fleetRun } : {}), namespace: o.shard.namespace, context: o.shard.context, ...(o.shard.kubeconfig ? { kubeconfig: o.shard.kubeconfig } : {}) } } : {}),
      }, masker);
    } catch (e) {
      o.onEvent({ type: 'warning', msg: `no resume journal (${errorMessage(e)}): this run cannot be resumed with --resume` });
    }
  }
  const holder: HolderInfo = { runId, user, host, playbook: path.relative(process.cwd(), o.playbook.file) || o.playbook.file, pid: process.pid };
  const locks = new Map<string, { release(): Promise<void> }>();
  const lockTimeoutMs = o.lockTimeoutMs ?? 60_000;
  const emit = (e: RunEvent): void => {
    const masked = masker.maskValue(e);
    recorder?.onEvent(masked);
    try {
      journal?.onEvent(masked);
    } catch {
      journal = undefined; // a full disk must not stop the run; the record reports what happened
    }
    o.onEvent(masked);
  };
  const lockCluster = async (cs: ClusterState, vars: Record<string, unknown>): Promise<void> => {
    const waitOpts = {
      holder,
      timeoutMs: lockTimeoutMs,
      signal: o.signal,
      onWait: (msg: string) => emit({ type: 'warning', cluster: cs.name, msg }),
      onTakeOver: (msg: string) => emit({ type: 'warning', cluster: cs.name, msg }),
    };
    if (!hasKubeContext(cs.inv.kubeconfig, cs.inv.context)) {
      // No cluster to hold a Lease in (a load-balancer-only entry): a local lock file.
      const which = cs.inv.context === '' ? `no kubeconfig context for ${cs.name} (${cs.inv.kubeconfig ?? 'the kubeconfig'} has no current-context or does not exist)` : `no kubeconfig context "${cs.inv.context}" for ${cs.name}`;
      emit({ type: 'warning', cluster: cs.name, msg: `${which}: locking with a local lock file (protects against other runs on this machine; use --no-lock to skip)` });
      locks.set(cs.name, await FileLock.acquire(cs.name, waitOpts));
      return;
    }
    const lock = await ClusterLock.acquire(await clusterClient(cs, vars), waitOpts);
    lock.onLost((msg) => {
      emit({ type: 'warning', cluster: cs.name, msg });
      cs.lockLost.abort(new Error(msg));
    });
    locks.set(cs.name, lock);
  };
  // Under the cluster lock, the cluster's run records are read as the run's first write to it goes
  // out, so that writing this run's record at the end is one request (see listRecords); a run that
  // changes nothing reads none. Without the lock they are read at the end, as late as possible: a
  // run at the same time could add a record meanwhile, and both would link to the same one (the
  // chain would fork). Best effort: the end reads them itself when this failed.
  const recordLists = new Map<string, Promise<KubeObject[] | undefined>>();
  const unhook: (() => void)[] = [];
  const beforeFirstChange = async (cs: ClusterState, vars: Record<string, unknown>): Promise<void> => {
    await lockCluster(cs, vars);
    if (!recorder) return;
    cs.whenAdapter<KubeClient>('k8s', (client) =>
      unhook.push(client.onWrite((p) => {
        // the lock's own Lease (renewed, released) is not a change
        if (p.startsWith(`/apis/coordination.k8s.io/v1/namespaces/${SYSTEM_NAMESPACE}/leases/`)) return false;
        if (!recordLists.has(cs.name)) recordLists.set(cs.name, listRecords(client, o.signal).catch(() => undefined));
        return true;
      })),
    );
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
      journal: journal ? safeJournal(journal, () => (journal = undefined)) : undefined,
      diff: o.diff === true,
      limit: o.limit,
      tags,
      skipTags,
      startAtTask: o.startAtTask,
      forks: o.forks ?? DEFAULT_FORKS,
      runId,
      masker,
      signal: o.signal,
      emit,
      beforeFirstChange: o.lock === false ? undefined : beforeFirstChange,
      ...(shard ? { fleet: shard.hooks } : {}),
    });
    await shard?.finish(summary);
    // the run's own record writes are not changes
    for (const f of unhook) f();
    const recordErrors: string[] = [];
    let recordFile: string | undefined;
    if (recorder) {
      recorder.header.git = await git;
      // The local record is written while the in-cluster ones are (they do not depend on each other).
      let localError: string | undefined;
      const local = recorder.writeLocal(recordDir).then(
        (f) => {
          recordFile = f;
        },
        (e: unknown) => {
          localError = `local run record in ${recordDir}: ${errorMessage(e)}`;
        },
      );
      // In-cluster records only where something changed: one per apiserver, holding every
      // inventory entry that reaches it (entries sharing a cluster share the record, so each
      // cluster's chain of records stays one line), written with the first entry's client that can.
      const byServer = new Map<string, { names: string[]; clients: KubeClient[]; listed: Promise<KubeObject[] | undefined>[] }>();
      for (const cs of summary.clusters.filter((c) => c.clusterChanged && !c.unreachable).sort((a, b) => byName(a.name, b.name))) {
        try {
          const client = await clusterClient(cs);
          const key = client.server.replace(/\/+$/, '');
          const g = byServer.get(key) ?? { names: [], clients: [], listed: [] };
          g.names.push(cs.name);
          g.clients.push(client);
          const listed = recordLists.get(cs.name);
          if (listed) g.listed.push(listed);
          byServer.set(key, g);
        } catch (e) {
          recordErrors.push(`run record in cluster ${cs.name}: ${errorMessage(e)}`);
        }
      }
      await Promise.all(
        [...byServer.values()].map(async ({ names, clients, listed }) => {
          const known = await firstListed(listed);
          let last: unknown;
          for (const client of clients) {
            try {
              await recorder.writeCluster(client, names, o.keepRecords ?? 20, known);
              return;
            } catch (e) {
              last = e;
            }
          }
          recordErrors.push(`run record in cluster ${names.join(', ')}: ${errorMessage(last)}`);
        }),
      );
      await local;
      if (localError) recordErrors.unshift(localError);
    }
    return { summary, recorder, recordFile, recordErrors: recordErrors.map((m) => masker.mask(m)) };
  } catch (e) {
    await shard?.crashed(e);
    throw e;
  } finally {
    for (const f of unhook) f();
    try {
      journal?.close();
    } catch {
      // the journal is best effort (a full disk): the record says what happened
    }
    await Promise.all([...locks.values()].map((l) => l.release().catch(() => undefined)));
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

/**
 * The first of `lists` that was read (waiting for one still in flight: it answers as soon as a new
 * LIST would), else undefined.
 */
async function firstListed(lists: Promise<KubeObject[] | undefined>[]): Promise<KubeObject[] | undefined> {
  for (const p of lists) {
    const v = await p;
    if (v) return v;
  }
  return undefined;
}

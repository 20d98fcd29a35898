/**
 * Run records (the audit trail). Every non-check run writes one record:
 *  - locally, as JSON lines in `<record dir>/<run id>.jsonl` (default `.kplay/runs/` in the
 *    working directory; `--record-dir` or `KPLAY_RECORD_DIR`): a `run` line, one `task` line per
 *    cluster per task (per loop item), and a `recap` line;
 *  - in each cluster where something changed, as a ConfigMap `kplay-run-<run id>` in
 *    `kplay-system` (labels: run id, playbook), keeping the last N (default 20) per cluster;
 *    inventory entries that reach the same apiserver share that one record.
 * Records hold extra-var names, never values; every string is masked. Task lines carry their start
 * (ms after the run's start), play, batch, retries and what they waited on, for `kplay report`;
 * all of it optional, so records of older kplay read (and verify) as before.
 *
 * Records are hash-chained per cluster (see `chain.ts`): a local record's `run` line carries
 * `chain` (cluster → link to the previous local record of that cluster) and its last line a
 * `digest` of the lines before it; an in-cluster record carries `prev` and the ConfigMap key
 * `record.sha256`. `kplay history verify` checks both. A cluster's chain ends in a head ConfigMap
 * moved by compare-and-swap before each record is written (`cluster-head.ts`), and local records
 * are linked and written under `records.lock` in the record directory, so runs ending at the same
 * moment never link to the same record.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { KubeClient, KubeObject } from '../k8s/types.js';
import type { ClusterStats, RunEvent } from '../report/events.js';
import { unifiedDiff } from '../report/diff.js';
import { GATE_CLUSTER_MEASUREMENTS_CAP, gateField, trimGate } from '../report/gate.js';
import type { BatchRecord, RunHeader, RunRecord, TaskRecord, WarningRecord } from '../report/records.js';

export type { BatchRecord, LocalRecord, RunHeader, RunRecord, TaskRecord, WarningRecord } from '../report/records.js';
export { clusterChainEntries, listClusterRecordEntries, listClusterRecords, listRecords, localChainEntries, parseLocalRecord, readLocalRecords, RECORD_LABEL, RUN_ID_LABEL, type ClusterRecordEntry } from './record-read.js';
import { chainOrder, sha256, type ChainLink } from './chain.js';
import { listRecords, recordHead, RECORD_LABEL, RUN_ID_LABEL } from './record-read.js';
import { writeHeads } from './chain-heads.js';
import { previousLinks } from './record-links.js';
import { SYSTEM_NAMESPACE } from './system.js';
import { claimHead, isHead } from './cluster-head.js';
import { FileLock } from './filelock.js';
import { LockHeldError } from './lock.js';
import { isRecord } from '../core/shape.js';

const pexec = promisify(execFile);

export const PLAYBOOK_LABEL = 'kplay.dev/playbook';
/** Max bytes of one in-cluster record (ConfigMaps are limited to 1 MiB). */
const MAX_CM_BYTES = 512 * 1024;

/**
 * Whether git could find a repository from `dir`: a `.git` in it or above it, or `GIT_DIR` set.
 * Without one, `git` would only say "not a git repository": two processes (~30 ms of CPU while
 * the first tasks run) spared.
 */
function maybeInGitRepo(dir: string): boolean {
  if (process.env.GIT_DIR) return true;
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if (existsSync(path.join(d, '.git'))) return true;
    if (path.dirname(d) === d) return false;
  }
}

/** Git commit/author of the playbook directory, if it is in a git work tree. */
export async function gitInfo(dir: string): Promise<RunHeader['git']> {
  if (!maybeInGitRepo(dir)) return undefined;
  try {
    const [{ stdout }, { stdout: st }] = await Promise.all([
      pexec('git', ['-C', dir, 'log', '-1', '--format=%H%n%an <%ae>'], { timeout: 5000 }),
      pexec('git', ['-C', dir, 'status', '--porcelain', '--', '.'], { timeout: 5000 }),
    ]);
    const [commit, author] = stdout.trim().split('\n');
    return commit ? { commit, author: author ?? '', dirty: st.trim().length > 0 } : undefined;
  } catch {
    return undefined;
  }
}

/** The current OS user and host. */
export function whoAmI(): { user: string; host: string } {
  let user = process.env.USER ?? 'unknown';
  try {
    user = os.userInfo().username;
  } catch {
    // no passwd entry (containers)
  }
  return { user, host: os.hostname() };
}

/** Collects events of a run into a record. */
export class RunRecorder {
  readonly tasks: TaskRecord[] = [];
  readonly batches: BatchRecord[] = [];
  readonly warnings: WarningRecord[] = [];
  recap: Record<string, ClusterStats> = {};
  exitCode = 0;
  interrupted = false;
  elapsedMs: number | undefined;
  private readonly t0: number;
  /** Per cluster: the play and batch it is in. */
  private readonly where = new Map<string, { play: string; batch: number }>();
  /** Per cluster and task: retries and the last progress message since its last result. */
  private readonly pending = new Map<string, { retries: number; waited_on?: string }>();

  constructor(readonly header: RunHeader) {
    const t = Date.parse(header.started);
    this.t0 = Number.isNaN(t) ? Date.now() : t;
  }

  /** ms since the run started. */
  private now(): number {
    return Math.max(0, Date.now() - this.t0);
  }

  /** Feed every (already masked) event. */
  onEvent(e: RunEvent): void {
    switch (e.type) {
      case 'task_result': {
        if (e.loop_summary) return;
        const key = `${e.cluster}\u0000${e.task}`;
        const p = this.pending.get(key);
        this.pending.delete(key);
        const at = this.where.get(e.cluster);
        const changedDiff = e.diff?.filter((d) => d.before !== d.after);
        const text = changedDiff?.map((d) => unifiedDiff(d.before, d.after, d.label)).filter(Boolean).join('\n');
        this.tasks.push({
          cluster: e.cluster,
          task: e.task,
          status: e.status,
          changed: e.status === 'changed' || e.changed === true,
          item: e.item,
          msg: cap(e.msg, 500),
          diff: changedDiff?.map((d) => d.label),
          duration_ms: e.duration_ms,
          start_ms: Math.max(0, this.now() - e.duration_ms),
          ...(at ? { play: at.play, batch: at.batch } : {}),
          ...(e.module ? { module: e.module } : {}),
          ...(e.ignored ? { ignored: true } : {}),
          ...(p?.retries ? { retries: p.retries } : {}),
          ...(p?.waited_on ? { waited_on: p.waited_on } : {}),
          ...(text ? { diff_text: cap(text, 64 * 1024) } : {}),
          ...gateField(e.data),
        });
        return;
      }
      case 'play_start':
        this.batches.push({ play: e.play, batch: e.batch, batches: e.batches, clusters: e.clusters, start_ms: this.now() });
        for (const c of e.clusters) this.where.set(c, { play: e.play, batch: e.batch });
        return;
      case 'retry':
      case 'progress': {
        const key = `${e.cluster}\u0000${e.task}`;
        const p = this.pending.get(key) ?? { retries: 0 };
        if (e.type === 'retry') p.retries++;
        else p.waited_on = cap(e.msg, 300);
        this.pending.set(key, p);
        return;
      }
      case 'warning':
        if (e.cluster !== undefined && this.warnings.length < 200) this.warnings.push({ cluster: e.cluster, msg: cap(e.msg, 500) ?? '', at_ms: this.now() });
        return;
      case 'recap':
        this.recap = e.clusters;
        this.exitCode = e.exit_code;
        this.interrupted = e.interrupted;
        this.elapsedMs = e.elapsed_ms;
        this.header.finished = new Date().toISOString();
        return;
      default:
        return;
    }
  }

  /** The record of some inventory entries (or of all). */
  record(clusters?: readonly string[]): RunRecord {
    const only = clusters ? new Set(clusters) : undefined;
    return {
      run: this.header,
      // diffs stay in the local record (mode 0600); a cluster's record keeps their labels, and a gate's newest measurements
      tasks: (only ? this.tasks.filter((t) => only.has(t.cluster)) : this.tasks).map(({ diff_text: _omitted, gate, ...t }) => (gate ? { ...t, gate: trimGate(gate, GATE_CLUSTER_MEASUREMENTS_CAP) } : t)),
      recap: only ? Object.fromEntries(Object.entries(this.recap).filter(([c]) => only.has(c))) : this.recap,
      exit_code: this.exitCode,
      interrupted: this.interrupted,
      ...(this.elapsedMs !== undefined ? { elapsed_ms: this.elapsedMs } : {}),
      batches: only ? this.batches.filter((b) => b.clusters.some((c) => only.has(c))) : this.batches,
      warnings: only ? this.warnings.filter((w) => w.cluster !== undefined && only.has(w.cluster)) : this.warnings,
    };
  }

  /** Write `<dir>/<run id>.jsonl`, linked to the previous local record of each of its clusters; returns the path. */
  async writeLocal(dir: string): Promise<string> {
    await mkdir(dir, { recursive: true });
    // Runs writing to one directory at the same moment would both link to the same record (a
    // fork `history verify` reports): linking and writing hold `records.lock` there, for
    // milliseconds. A holder that never lets go (alive, 30 s) only costs the lock, not the record.
    const holder = { runId: this.header.run_id, user: this.header.user, host: this.header.host, playbook: this.header.playbook, pid: process.pid };
    const lock = await FileLock.acquire('records', { holder, dir, timeoutMs: 30_000 }).catch((e: unknown) => {
      if (e instanceof LockHeldError) return undefined;
      throw e;
    });
    try {
      return await this.writeLocalLocked(dir);
    } finally {
      await lock?.release();
    }
  }

  private async writeLocalLocked(dir: string): Promise<string> {
    const file = path.join(dir, `${this.header.run_id}.jsonl`);
    const clusters = [...new Set([...Object.keys(this.recap), ...this.tasks.map((t) => t.cluster)])].sort();
    const chain = await previousLinks(dir, this.header.run_id, clusters);
    const lines = [
      JSON.stringify({ type: 'run', ...this.header, chain }),
      ...this.tasks.map((t) => JSON.stringify({ type: 'task', ...t })),
      JSON.stringify({ type: 'recap', clusters: this.recap, exit_code: this.exitCode, interrupted: this.interrupted, ...(this.elapsedMs !== undefined ? { elapsed_ms: this.elapsedMs } : {}), batches: this.batches, warnings: this.warnings }),
    ];
    const body = `${lines.join('\n')}\n`;
    const text = `${body}${JSON.stringify({ type: 'digest', sha256: sha256(body) })}\n`;
    // The heads first, then the record whole (written aside, renamed): a run killed in between
    // leaves heads naming a record that does not exist, which the next run ignores (it reads the
    // records) — never a record the heads do not name, which the next run would link past.
    await writeHeads(dir, Object.keys(chain), { run_id: this.header.run_id, sha256: sha256(text) });
    const aside = `${file}.${process.pid}.tmp`;
    await writeFile(aside, text, { mode: 0o600 });
    await rename(aside, file);
    return file;
  }

  /**
   * Write the record of the inventory entries `clusters` — all those that reach this cluster —
   * as one ConfigMap, and keep only the newest `keep`.
   */
  async writeCluster(client: KubeClient, clusters: readonly string[], keep: number, listed?: KubeObject[]): Promise<void> {
    // Empty when kplay-system does not exist yet: it is made only then (when the head cannot be
    // written), so the end of a run costs a LIST, the head's swap and the record's write per
    // cluster — without the LIST with the records `listed` when the run first changed the cluster
    // (see `listRecords`).
    const listing = listed ?? (await listRecords(client));
    const head = listing.find(isHead);
    const items = listing.filter((i) => !isHead(i));
    const own = recordName(this.header.run_id);
    // The records already in the cluster in the order they were written (the links'). Run ids
    // sort by start, and a run that started earlier may have waited for the lock, so the newest
    // run id is not necessarily the last record written. This record links to the head (see
    // cluster-head.ts); to the last of these only in a cluster that has no head yet.
    const stored = items.flatMap((cm) => {
      const name = String(cm.metadata.name);
      const text = isRecord(cm.data) && typeof cm.data['record.json'] === 'string' ? cm.data['record.json'] : undefined;
      const h = text === undefined || name === own ? undefined : recordHead(text);
      return h && text !== undefined ? [{ name, text, run_id: h.run_id, prev: h.prev }] : [];
    });
    const written = chainOrder(stored);
    const chainEnd = (): ChainLink | null => {
      const before = written.at(-1);
      return before ? { run_id: before.run_id, sha256: sha256(before.text) } : null;
    };
    let text = '';
    const claimed = await claimHead(client, this.header.run_id, head, chainEnd, (prev) => {
      const rec: RunRecord = { ...this.record(clusters), prev };
      text = JSON.stringify(rec);
      if (Buffer.byteLength(text) > MAX_CM_BYTES) {
        text = JSON.stringify({ ...rec, tasks: rec.tasks.filter((t) => t.changed || t.status === 'failed').slice(0, 2000), truncated: true });
      }
      return text;
    });
    const write = (): Promise<unknown> => client.apply(recordObject(this.header, text), { fieldManager: 'kplay', force: true });
    // The record this one links to, from the head's copy, when it is not among those listed: its
    // run is still writing it, or failed to (see cluster-head.ts). The same object either way.
    const copy = claimed.prevCopy;
    const prevHeader = copy && !items.some((i) => i.metadata.name === recordName(copy.run_id)) ? headerOf(copy.text) : undefined;
    const complete = async (): Promise<void> => {
      if (copy && prevHeader) await client.apply(recordObject(prevHeader, copy.text), { fieldManager: 'kplay', force: true }).catch(() => undefined);
    };
    // oldest first: records that are not readable, then the chain, then this one
    const chained = new Set(written.map((w) => w.name));
    const names = [...items.map((i) => String(i.metadata.name)).filter((n) => n !== own && !chained.has(n)).sort(byName), ...chained, own];
    // Records beyond `keep` go while this one is written (one round trip less at the end of every
    // run), except with `keep` 1, where that would delete the only other record before this one
    // is known to be written.
    if (keep > 1) await Promise.all([write(), complete(), pruneRecords(client, names, keep)]);
    else {
      await write();
      await pruneRecords(client, names, keep);
    }
  }
}

/** `s` cut to `max` characters (with `...`). */
function cap(s: string | undefined, max: number): string | undefined {
  return s !== undefined && s.length > max ? `${s.slice(0, max - 3)}...` : s;
}

/** Names (ASCII) in code-unit order: `localeCompare` would load ICU collation (~10 ms) at the end of every run. */
export function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A valid label value (63 chars of [A-Za-z0-9_.-], alphanumeric at both ends). */
export function labelValue(s: string): string {
  return s.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 63).replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '') || 'x';
}

/** The ConfigMap that stores the in-cluster record of run `runId`. */
function recordName(runId: string): string {
  return `kplay-run-${runId}`.toLowerCase();
}

/** What naming a record's ConfigMap needs, from its text (`undefined`: not a record). */
function headerOf(text: string): Pick<RunHeader, 'run_id' | 'playbook' | 'started' | 'user'> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    const run = isRecord(v) && isRecord(v.run) ? v.run : undefined;
    return run && typeof run.run_id === 'string' && typeof run.playbook === 'string' && typeof run.started === 'string' && typeof run.user === 'string' ? { run_id: run.run_id, playbook: run.playbook, started: run.started, user: run.user } : undefined;
  } catch {
    return undefined;
  }
}

/** The in-cluster record of the run `header` describes, its text `text`. */
function recordObject(header: Pick<RunHeader, 'run_id' | 'playbook' | 'started' | 'user'>, text: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: recordName(header.run_id),
      namespace: SYSTEM_NAMESPACE,
      labels: {
        'app.kubernetes.io/managed-by': 'kplay',
        [RECORD_LABEL]: 'run',
        [RUN_ID_LABEL]: labelValue(header.run_id),
        [PLAYBOOK_LABEL]: labelValue(path.basename(header.playbook)),
      },
      annotations: { 'kplay.dev/started': header.started, 'kplay.dev/user': header.user },
    },
    data: { 'record.json': text, 'record.sha256': sha256(text) },
  };
}

/**
 * Keep the last `keep` of the records `names` (oldest first, in the order they were written) in a
 * cluster. Records another unlocked run wrote meanwhile are left for the next run to prune.
 */
async function pruneRecords(client: KubeClient, names: string[], keep: number): Promise<void> {
  const ordered = [...new Set(names)];
  for (const name of ordered.slice(0, Math.max(0, ordered.length - keep))) {
    await client.delete({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace: SYSTEM_NAMESPACE });
  }
}

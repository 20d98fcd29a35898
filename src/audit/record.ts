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
 * `record.sha256`. `kplay history verify` checks both.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, open, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { KubeApiError } from '../k8s/errors.js';
import type { KubeClient, KubeObject } from '../k8s/types.js';
import type { ClusterStats, RunEvent } from '../report/events.js';
import { unifiedDiff } from '../report/diff.js';
import { GATE_CLUSTER_MEASUREMENTS_CAP, gateField, trimGate } from '../report/gate.js';
import type { BatchRecord, LocalRecord, RunHeader, RunRecord, TaskRecord, WarningRecord } from '../report/records.js';

export type { BatchRecord, LocalRecord, RunHeader, RunRecord, TaskRecord, WarningRecord } from '../report/records.js';
import { chainOrder, sha256, type ChainEntry, type ChainLink } from './chain.js';
import { createSystemNamespace, SYSTEM_NAMESPACE } from './system.js';
import { isRecord } from '../core/shape.js';

const pexec = promisify(execFile);

export const RECORD_LABEL = 'kplay.dev/record';
export const RUN_ID_LABEL = 'kplay.dev/run-id';
export const PLAYBOOK_LABEL = 'kplay.dev/playbook';
/** Max bytes of one in-cluster record (ConfigMaps are limited to 1 MiB). */
const MAX_CM_BYTES = 512 * 1024;

/** A link as stored, or undefined when it is not one. */
function asLink(v: unknown): ChainLink | null | undefined {
  if (v === null) return null;
  return isRecord(v) && typeof v.run_id === 'string' && typeof v.sha256 === 'string' ? { run_id: v.run_id, sha256: v.sha256 } : undefined;
}

/** Parse one local record file (undefined when it is not a record at all). */
export function parseLocalRecord(file: string, text: string): LocalRecord | undefined {
  const lines: Record<string, unknown>[] = [];
  for (const l of text.split('\n')) {
    if (!l.trim()) continue;
    try {
      const v: unknown = JSON.parse(l);
      if (isRecord(v)) lines.push(v);
    } catch {
      // an edited, broken line: the digest check reports it
    }
  }
  const run = lines.find((l) => l.type === 'run');
  if (!run || typeof run.run_id !== 'string') return undefined;
  const recap = lines.find((l) => l.type === 'recap');
  const digest = lines.find((l) => l.type === 'digest');
  const body = text.slice(0, text.lastIndexOf('{"type":"digest"'));
  let chain: Record<string, ChainLink | null> | undefined;
  if (isRecord(run.chain)) {
    chain = {};
    for (const [c, v] of Object.entries(run.chain)) {
      const link = asLink(v);
      if (link !== undefined) chain[c] = link;
    }
  }
  const clusters = chain ? Object.keys(chain) : isRecord(recap?.clusters) ? Object.keys(recap.clusters) : [];
  return { run_id: run.run_id, file, text, run, clusters, chain, digestOk: digest !== undefined && typeof digest.sha256 === 'string' && digest.sha256 === sha256(body), lines };
}

/** The first line of a file (read in chunks, so a large record is not read whole). */
async function firstLine(file: string): Promise<string> {
  const fh = await open(file, 'r');
  try {
    let text = '';
    const buf = Buffer.alloc(64 * 1024);
    for (let pos = 0; ; ) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) return text;
      text += buf.subarray(0, bytesRead).toString('utf8');
      const nl = text.indexOf('\n');
      if (nl >= 0) return text.slice(0, nl);
      pos += bytesRead;
    }
  } finally {
    await fh.close();
  }
}

/**
 * Links to the last local record written for each cluster (`null`: none): the end of each
 * cluster's chain as the links give it ({@link chainOrder}), not the newest run id — a run that
 * started earlier can write its record later (it waited for the cluster's lock). Reads the first
 * line of the records newest first, back to the first record written before chaining existed
 * (everything older is unchained too); hashes only the records it links to.
 */
async function previousLinks(dir: string, runId: string, clusters: string[]): Promise<Record<string, ChainLink | null>> {
  const out: Record<string, ChainLink | null> = Object.fromEntries(clusters.map((c) => [c, null]));
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.jsonl') && n !== `${runId}.jsonl`).sort().reverse();
  } catch {
    return out;
  }
  const heads: { run_id: string; file: string; chain: Record<string, unknown> | undefined }[] = [];
  for (const n of names) {
    const file = path.join(dir, n);
    let run: unknown;
    try {
      run = JSON.parse(await firstLine(file));
    } catch {
      continue; // not a record (or a damaged one): verification reports it
    }
    if (!isRecord(run) || typeof run.run_id !== 'string') continue;
    heads.push({ run_id: run.run_id, file, chain: isRecord(run.chain) ? run.chain : undefined });
    if (!isRecord(run.chain)) break; // written before chaining: so is everything older
  }
  for (const c of clusters) {
    const mine = heads.filter((h) => h.chain && c in h.chain).map((h) => ({ ...h, prev: h.chain ? (asLink(h.chain[c]) ?? null) : undefined }));
    const last = chainOrder(mine).at(-1);
    if (last) out[c] = { run_id: last.run_id, sha256: sha256(await readFile(last.file, 'utf8')) };
  }
  return out;
}

/** Every local record of a directory, oldest first (unreadable files are skipped). */
export async function readLocalRecords(dir: string): Promise<LocalRecord[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.jsonl'));
  } catch {
    return [];
  }
  const out: LocalRecord[] = [];
  for (const n of names.sort()) {
    const file = path.join(dir, n);
    const rec = parseLocalRecord(file, await readFile(file, 'utf8').catch(() => ''));
    if (rec) out.push(rec);
  }
  return out.sort((a, b) => a.run_id.localeCompare(b.run_id));
}

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
          changed: e.status === 'changed',
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
    const file = path.join(dir, `${this.header.run_id}.jsonl`);
    const clusters = [...new Set([...Object.keys(this.recap), ...this.tasks.map((t) => t.cluster)])].sort();
    const chain = await previousLinks(dir, this.header.run_id, clusters);
    const lines = [
      JSON.stringify({ type: 'run', ...this.header, chain }),
      ...this.tasks.map((t) => JSON.stringify({ type: 'task', ...t })),
      JSON.stringify({ type: 'recap', clusters: this.recap, exit_code: this.exitCode, interrupted: this.interrupted, ...(this.elapsedMs !== undefined ? { elapsed_ms: this.elapsedMs } : {}), batches: this.batches, warnings: this.warnings }),
    ];
    const body = `${lines.join('\n')}\n`;
    await writeFile(file, `${body}${JSON.stringify({ type: 'digest', sha256: sha256(body) })}\n`, { mode: 0o600 });
    return file;
  }

  /**
   * Write the record of the inventory entries `clusters` — all those that reach this cluster —
   * as one ConfigMap, and keep only the newest `keep`.
   */
  async writeCluster(client: KubeClient, clusters: readonly string[], keep: number, listed?: KubeObject[]): Promise<void> {
    // Empty when kplay-system does not exist yet: it is made only then (below), so the end of a
    // run costs a LIST and a write per cluster — the write only, with the records `listed` when
    // the run first changed the cluster (see `listRecords`).
    const items = listed ?? (await listRecords(client));
    const own = `kplay-run-${this.header.run_id}`.toLowerCase();
    // The records already in the cluster in the order they were written (the links'): this one
    // links to the last. Run ids sort by start, and a run that started earlier may have waited
    // for the lock, so the newest run id is not necessarily the last record written.
    const stored = items.flatMap((cm) => {
      const name = String(cm.metadata.name);
      const text = isRecord(cm.data) && typeof cm.data['record.json'] === 'string' ? cm.data['record.json'] : undefined;
      const head = text === undefined || name === own ? undefined : recordHead(text);
      return head && text !== undefined ? [{ name, text, run_id: head.run_id, prev: head.prev }] : [];
    });
    const written = chainOrder(stored);
    const before = written.at(-1);
    const rec: RunRecord = { ...this.record(clusters), prev: before ? { run_id: before.run_id, sha256: sha256(before.text) } : null };
    let text = JSON.stringify(rec);
    if (Buffer.byteLength(text) > MAX_CM_BYTES) {
      text = JSON.stringify({ ...rec, tasks: rec.tasks.filter((t) => t.changed || t.status === 'failed').slice(0, 2000), truncated: true });
    }
    const cm: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: `kplay-run-${this.header.run_id}`.toLowerCase(),
        namespace: SYSTEM_NAMESPACE,
        labels: {
          'app.kubernetes.io/managed-by': 'kplay',
          [RECORD_LABEL]: 'run',
          [RUN_ID_LABEL]: labelValue(this.header.run_id),
          [PLAYBOOK_LABEL]: labelValue(path.basename(this.header.playbook)),
        },
        annotations: { 'kplay.dev/started': this.header.started, 'kplay.dev/user': this.header.user },
      },
      data: { 'record.json': text, 'record.sha256': sha256(text) },
    };
    const write = async (): Promise<void> => {
      try {
        await client.apply(cm, { fieldManager: 'kplay', force: true });
      } catch (e) {
        if (!(e instanceof KubeApiError && e.status === 404 && e.body?.details?.kind === 'namespaces')) throw e;
        await createSystemNamespace(client);
        await client.apply(cm, { fieldManager: 'kplay', force: true });
      }
    };
    // oldest first: records that are not readable, then the chain, then this one
    const chained = new Set(written.map((w) => w.name));
    const names = [...items.map((i) => String(i.metadata.name)).filter((n) => n !== own && !chained.has(n)).sort(byName), ...chained, own];
    // Records beyond `keep` go while this one is written (one round trip less at the end of every
    // run), except with `keep` 1, where that would delete the only other record before this one
    // is known to be written.
    if (keep > 1) await Promise.all([write(), pruneRecords(client, names, keep)]);
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

/** The run id and link inside an in-cluster record's text (undefined when unreadable). */
function recordHead(text: string): { run_id: string; prev: ChainLink | null | undefined } | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return isRecord(v) && isRecord(v.run) && typeof v.run.run_id === 'string' ? { run_id: v.run.run_id, prev: 'prev' in v ? asLink(v.prev) : undefined } : undefined;
  } catch {
    return undefined;
  }
}

/** A valid label value (63 chars of [A-Za-z0-9_.-], alphanumeric at both ends). */
export function labelValue(s: string): string {
  return s.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 63).replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '') || 'x';
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

/**
 * The run record ConfigMaps of a cluster (none when `kplay-system` does not exist). A run holding
 * the cluster's lock reads them when it first changes the cluster — no other locking run can add
 * one before this run's record links to the newest — and writes its record at the end with one
 * request.
 */
export async function listRecords(client: KubeClient, signal?: AbortSignal): Promise<KubeObject[]> {
  return (await client.list('v1', 'ConfigMap', { namespace: SYSTEM_NAMESPACE, labelSelector: `${RECORD_LABEL}=run`, signal })).items;
}

/** Records stored in a cluster, newest first. */
export async function listClusterRecords(client: KubeClient): Promise<RunRecord[]> {
  return (await listClusterRecordEntries(client)).flatMap((e) => (e.record ? [e.record] : []));
}

/** An in-cluster record with what the chain check needs. */
export interface ClusterRecordEntry {
  /** ConfigMap name. */
  name: string;
  run_id: string;
  text: string;
  /** The parsed record (undefined when the text is no longer valid JSON). */
  record: RunRecord | undefined;
  /** The `record.sha256` key, if any. */
  digest: string | undefined;
}

/** Every record ConfigMap of a cluster, newest first (damaged ones included, for verification). */
export async function listClusterRecordEntries(client: KubeClient): Promise<ClusterRecordEntry[]> {
  const { items } = await client.list('v1', 'ConfigMap', { namespace: SYSTEM_NAMESPACE, labelSelector: `${RECORD_LABEL}=run` });
  const out: ClusterRecordEntry[] = [];
  for (const cm of items) {
    const data = isRecord(cm.data) ? cm.data : {};
    const text = typeof data['record.json'] === 'string' ? data['record.json'] : undefined;
    if (text === undefined) continue;
    let record: RunRecord | undefined;
    try {
      const v: unknown = JSON.parse(text);
      if (isRecord(v) && isRecord(v.run) && typeof v.run.run_id === 'string') record = v as unknown as RunRecord;
    } catch {
      // a damaged record: reported by verification, skipped by listings
    }
    const run_id = record?.run.run_id ?? cm.metadata.labels?.[RUN_ID_LABEL] ?? String(cm.metadata.name);
    out.push({ name: String(cm.metadata.name), run_id, text, record, digest: typeof data['record.sha256'] === 'string' ? data['record.sha256'] : undefined });
  }
  return out.sort((a, b) => b.run_id.localeCompare(a.run_id));
}

/** One cluster's local records as the chain check takes them (`kplay history verify`, `kplay report`). */
export function localChainEntries(local: readonly LocalRecord[], cluster: string): ChainEntry[] {
  return local
    .filter((r) => r.clusters.includes(cluster))
    .map((r) => ({ run_id: r.run_id, where: path.relative(process.cwd(), r.file) || r.file, sha256: sha256(r.text), digestOk: r.digestOk, prev: r.chain ? (r.chain[cluster] ?? null) : undefined }));
}

/** A cluster's record ConfigMaps as the chain check takes them. */
export function clusterChainEntries(entries: readonly ClusterRecordEntry[], cluster: string): ChainEntry[] {
  return entries.map((e) => ({
    run_id: e.run_id,
    where: `ConfigMap kplay-system/${e.name} in ${cluster}`,
    sha256: sha256(e.text),
    digestOk: e.digest !== undefined && e.digest === sha256(e.text) && e.record !== undefined,
    prev: e.record ? e.record.prev : null,
  }));
}

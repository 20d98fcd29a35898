/**
 * Run records (the audit trail). Every non-check run writes one record:
 *  - locally, as JSON lines in `<record dir>/<run id>.jsonl` (default `.kplay/runs/` in the
 *    working directory; `--record-dir` or `KPLAY_RECORD_DIR`): a `run` line, one `task` line per
 *    cluster per task (per loop item), and a `recap` line;
 *  - in each cluster where something changed, as a ConfigMap `kplay-run-<run id>` in
 *    `kplay-system` (labels: run id, playbook), keeping the last N (default 20) per cluster.
 * Records hold extra-var names, never values; every string is masked.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { KubeClient, KubeObject } from '../k8s/types.js';
import type { ClusterStats, RunEvent } from '../report/events.js';
import { ensureSystemNamespace, SYSTEM_NAMESPACE } from './system.js';

const pexec = promisify(execFile);

export const RECORD_LABEL = 'kplay.dev/record';
export const RUN_ID_LABEL = 'kplay.dev/run-id';
export const PLAYBOOK_LABEL = 'kplay.dev/playbook';
/** Max bytes of one in-cluster record (ConfigMaps are limited to 1 MiB). */
const MAX_CM_BYTES = 512 * 1024;

/** Who ran what, when. */
export interface RunHeader {
  run_id: string;
  user: string;
  host: string;
  git?: { commit: string; author: string; dirty: boolean };
  started: string;
  finished?: string;
  playbook: string;
  inventory: string;
  limit?: string;
  tags: string[];
  skip_tags: string[];
  extra_var_names: string[];
  check: boolean;
  lock: boolean;
}

/** One task on one cluster. */
export interface TaskRecord {
  cluster: string;
  task: string;
  status: string;
  changed: boolean;
  item?: string;
  msg?: string;
  /** Labels of the objects that changed (diff summary; never contents). */
  diff?: string[];
  duration_ms: number;
}

/** A full run record (as stored in a cluster: only that cluster's tasks). */
export interface RunRecord {
  run: RunHeader;
  tasks: TaskRecord[];
  recap: Record<string, ClusterStats>;
  exit_code: number;
  interrupted: boolean;
}

/** Git commit/author of the playbook directory, if it is in a git work tree. */
export async function gitInfo(dir: string): Promise<RunHeader['git']> {
  try {
    const { stdout } = await pexec('git', ['-C', dir, 'log', '-1', '--format=%H%n%an <%ae>'], { timeout: 5000 });
    const [commit, author] = stdout.trim().split('\n');
    const { stdout: st } = await pexec('git', ['-C', dir, 'status', '--porcelain', '--', '.'], { timeout: 5000 });
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
  recap: Record<string, ClusterStats> = {};
  exitCode = 0;
  interrupted = false;

  constructor(readonly header: RunHeader) {}

  /** Feed every (already masked) event. */
  onEvent(e: RunEvent): void {
    if (e.type === 'task_result') {
      if (e.loop_summary) return;
      this.tasks.push({
        cluster: e.cluster,
        task: e.task,
        status: e.status,
        changed: e.status === 'changed',
        item: e.item,
        msg: e.msg && e.msg.length > 500 ? `${e.msg.slice(0, 497)}...` : e.msg,
        diff: e.diff?.filter((d) => d.before !== d.after).map((d) => d.label),
        duration_ms: e.duration_ms,
      });
    } else if (e.type === 'recap') {
      this.recap = e.clusters;
      this.exitCode = e.exit_code;
      this.interrupted = e.interrupted;
      this.header.finished = new Date().toISOString();
    }
  }

  /** The record for one cluster (or all clusters). */
  record(cluster?: string): RunRecord {
    return {
      run: this.header,
      tasks: cluster ? this.tasks.filter((t) => t.cluster === cluster) : this.tasks,
      recap: cluster ? { [cluster]: this.recap[cluster] } : this.recap,
      exit_code: this.exitCode,
      interrupted: this.interrupted,
    };
  }

  /** Write `<dir>/<run id>.jsonl`; returns the path. */
  async writeLocal(dir: string): Promise<string> {
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, `${this.header.run_id}.jsonl`);
    const lines = [
      JSON.stringify({ type: 'run', ...this.header }),
      ...this.tasks.map((t) => JSON.stringify({ type: 'task', ...t })),
      JSON.stringify({ type: 'recap', clusters: this.recap, exit_code: this.exitCode, interrupted: this.interrupted }),
    ];
    await writeFile(file, `${lines.join('\n')}\n`, { mode: 0o600 });
    return file;
  }

  /** Write this cluster's record as a ConfigMap and keep only the newest `keep`. */
  async writeCluster(client: KubeClient, cluster: string, keep: number): Promise<void> {
    await ensureSystemNamespace(client);
    const rec = this.record(cluster);
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
      data: { 'record.json': text },
    };
    await client.apply(cm, { fieldManager: 'kplay', force: true });
    await pruneRecords(client, keep);
  }
}

/** A valid label value (63 chars of [A-Za-z0-9_.-], alphanumeric at both ends). */
export function labelValue(s: string): string {
  return s.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 63).replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '') || 'x';
}

/** Keep the newest `keep` records in a cluster (run ids sort by time). */
async function pruneRecords(client: KubeClient, keep: number): Promise<void> {
  const { items } = await client.list('v1', 'ConfigMap', { namespace: SYSTEM_NAMESPACE, labelSelector: `${RECORD_LABEL}=run` });
  const sorted = items.sort((a, b) => String(b.metadata.name).localeCompare(String(a.metadata.name)));
  for (const old of sorted.slice(keep)) {
    await client.delete({ apiVersion: 'v1', kind: 'ConfigMap', name: String(old.metadata.name), namespace: SYSTEM_NAMESPACE });
  }
}

/** Records stored in a cluster, newest first. */
export async function listClusterRecords(client: KubeClient): Promise<RunRecord[]> {
  const { items } = await client.list('v1', 'ConfigMap', { namespace: SYSTEM_NAMESPACE, labelSelector: `${RECORD_LABEL}=run` });
  const out: RunRecord[] = [];
  for (const cm of items) {
    const text = (cm.data as Record<string, string> | undefined)?.['record.json'];
    if (!text) continue;
    try {
      out.push(JSON.parse(text) as RunRecord);
    } catch {
      // a damaged record is skipped, not fatal
    }
  }
  return out.sort((a, b) => b.run.run_id.localeCompare(a.run.run_id));
}

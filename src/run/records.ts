/**
 * The run records of a run as an observer (see observer.ts): every event goes into the record;
 * at the end the record is written locally (JSON lines in the record directory) and in each
 * cluster that changed — one record per apiserver, holding every inventory entry that reaches it
 * (entries sharing a cluster share the record, so each cluster's chain of records stays one line).
 *
 * A cluster's records are listed as the run's first write to it goes out (a hook on the client's
 * writes), so that writing this run's record at the end needs no read (see listRecords); a run
 * that changes nothing reads none. The listing may be old by then — another run, without the
 * lock, may have written a record since — which is safe: the record links to the chain's head,
 * moved with a compare-and-swap (`audit/cluster-head.ts`) that fails on a head that moved, so runs
 * ending at the same moment never link to the same record. Best effort: the end reads them itself
 * when the early listing failed.
 */
import { SYSTEM_NAMESPACE } from '../audit/system.js';
import { byName, listRecords, type RunHeader, type RunRecorder } from '../audit/record.js';
import type { ClusterState } from '../executor/state.js';
import type { KubeClient, KubeObject } from '../k8s/types.js';
import { errorMessage } from '../load/errors.js';
import type { RunEvent } from '../report/events.js';
import { clusterClient } from './locks.js';
import type { RunObserver } from './observer.js';

/** What writing the records produced. */
export interface RecordsWritten {
  /** The local run record written. */
  recordFile?: string;
  /** Records that could not be written (not masked yet). */
  recordErrors: string[];
}

/** The run records of a run (see the file header). */
export class RecordObserver implements RunObserver {
  private readonly recordLists = new Map<string, Promise<KubeObject[] | undefined>>();
  private readonly unhook: (() => void)[] = [];

  constructor(
    readonly recorder: RunRecorder,
    private readonly signal: AbortSignal,
  ) {}

  onEvent(e: RunEvent): void {
    this.recorder.onEvent(e);
  }

  /** Cluster `cs` is about to change (locked, unless --no-lock): list its records as the first write to it goes out (the lock's own Lease is not a change). */
  watchWrites(cs: ClusterState): void {
    cs.whenAdapter<KubeClient>('k8s', (client) =>
      this.unhook.push(client.onWrite((p) => {
        // the lock's own Lease (renewed, released) is not a change
        if (p.startsWith(`/apis/coordination.k8s.io/v1/namespaces/${SYSTEM_NAMESPACE}/leases/`)) return false;
        if (!this.recordLists.has(cs.name)) this.recordLists.set(cs.name, listRecords(client, this.signal).catch(() => undefined));
        return true;
      })),
    );
  }

  /** Stop watching writes: the run's own record writes are not changes. */
  private unwatch(): void {
    for (const f of this.unhook) f();
  }

  /**
   * Write the record: locally in `recordDir`, and in every cluster of `clusters` that changed and
   * is reachable (keeping `keep` records per cluster), with `git` (read while the run ran) in its header.
   */
  async write(recordDir: string, clusters: readonly ClusterState[], keep: number, git: Promise<RunHeader['git']>): Promise<RecordsWritten> {
    this.unwatch();
    const recorder = this.recorder;
    const recordErrors: string[] = [];
    let recordFile: string | undefined;
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
    // In-cluster records only where something changed: one per apiserver, written with the first
    // entry's client that can.
    const byServer = new Map<string, { names: string[]; clients: KubeClient[]; listed: Promise<KubeObject[] | undefined>[] }>();
    for (const cs of clusters.filter((c) => c.clusterChanged && !c.unreachable).sort((a, b) => byName(a.name, b.name))) {
      try {
        const client = await clusterClient(cs);
        const key = client.server.replace(/\/+$/, '');
        const g = byServer.get(key) ?? { names: [], clients: [], listed: [] };
        g.names.push(cs.name);
        g.clients.push(client);
        const listed = this.recordLists.get(cs.name);
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
            await recorder.writeCluster(client, names, keep, known);
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
    return { recordFile, recordErrors };
  }

  stop(): Promise<void> {
    this.unwatch();
    return Promise.resolve();
  }
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

/**
 * Asynchronous jobs (Ansible's `async` + `poll: 0`, read back with `async_status`): a task started
 * in the background of this process. The registry lives on `globalThis` under a registered symbol,
 * so the engine and the `async_status` module see the same jobs whichever bundle loaded them.
 */
import { randomBytes } from 'node:crypto';

/** What a finished job registered (the module's registered value) and whether it failed. */
export interface AsyncOutcome {
  /** The registered value of the job's task (its module result). */
  registered: Record<string, unknown>;
  failed: boolean;
  changed: boolean;
  msg?: string;
}

/** One job: running (no `outcome` yet) or finished. */
export interface AsyncJob {
  jid: string;
  cluster: string;
  started: number;
  done: Promise<void>;
  outcome?: AsyncOutcome;
}

const KEY = Symbol.for('kplay.asyncJobs');

function registry(): Map<string, AsyncJob> {
  const g = globalThis as { [KEY]?: Map<string, AsyncJob> };
  return (g[KEY] ??= new Map());
}

/** Start `run` as a job of `cluster`; its job id (Ansible's shape: `j` + digits + `.` + pid). */
export function startAsyncJob(cluster: string, run: () => Promise<AsyncOutcome>): string {
  const jid = jobId();
  const job: AsyncJob = { jid, cluster, started: Date.now(), done: Promise.resolve() };
  job.done = run().then(
    (o) => void (job.outcome = o),
    (e: unknown) => void (job.outcome = { registered: { failed: true, msg: e instanceof Error ? e.message : String(e) }, failed: true, changed: false, msg: e instanceof Error ? e.message : String(e) }),
  );
  registry().set(jid, job);
  return jid;
}

/** A new job id in Ansible's shape (`j` + digits + `.` + pid). */
export function jobId(): string {
  return `j${BigInt(`0x${randomBytes(5).toString('hex')}`).toString().slice(0, 12)}.${process.pid}`;
}

/** The job `jid` started for `cluster`; undefined when there is none (never started, or cleaned up). */
export function asyncJob(jid: string, cluster: string): AsyncJob | undefined {
  const j = registry().get(jid);
  return j && j.cluster === cluster ? j : undefined;
}

/** Forget job `jid` (`async_status: {mode: cleanup}`); true when there was one. */
export function cleanupAsyncJob(jid: string, cluster: string): boolean {
  return asyncJob(jid, cluster) !== undefined && registry().delete(jid);
}

/** Wait for every job still running (the end of a run: a background helm upgrade is not cut off). */
export async function settleAsyncJobs(): Promise<void> {
  await Promise.all([...registry().values()].map((j) => j.done));
}

/**
 * The cluster locks of a run as an observer (see observer.ts): a cluster is locked just before
 * the run's first change to it — a Lease in the cluster, or a local lock file for an inventory
 * entry without a kubeconfig context — waiting up to the lock timeout for another run's lock, and
 * every lock is released when the run ends. A lock lost mid-run (taken over) stops the cluster's
 * tasks and is said as a warning.
 */
import { FileLock } from '../audit/filelock.js';
import { ClusterLock, type HolderInfo } from '../audit/lock.js';
import type { ClusterState } from '../executor/state.js';
import { connect, connectOptionsFrom } from '../k8s/client.js';
import { hasKubeContext } from '../k8s/kubeconfig.js';
import type { KubeClient } from '../k8s/types.js';
import type { RunEvent } from '../report/events.js';
import type { RunObserver } from './observer.js';

/** The cluster's client (created with the task's variables — `k8s_qps`, `k8s_burst` — when the lock needs it first). */
export function clusterClient(cs: ClusterState, vars: Record<string, unknown> = cs.inv.vars): Promise<KubeClient> {
  return cs.adapter<KubeClient>('k8s', () => connect({ name: cs.name, context: cs.inv.context, kubeconfig: cs.inv.kubeconfig }, connectOptionsFrom(vars)));
}

/** The locks a run holds (see the file header). */
export class LockObserver implements RunObserver {
  private readonly locks = new Map<string, { release(): Promise<void> }>();

  constructor(
    private readonly holder: HolderInfo,
    private readonly timeoutMs: number,
    private readonly signal: AbortSignal,
    private readonly emit: (e: RunEvent) => void,
  ) {}

  /** Lock cluster `cs` (its first change is about to go out; `vars` are the task's). */
  async lock(cs: ClusterState, vars: Record<string, unknown>): Promise<void> {
    const waitOpts = {
      holder: this.holder,
      timeoutMs: this.timeoutMs,
      signal: this.signal,
      onWait: (msg: string) => this.emit({ type: 'warning', cluster: cs.name, msg }),
      onTakeOver: (msg: string) => this.emit({ type: 'warning', cluster: cs.name, msg }),
      onSkew: (msg: string) => this.emit({ type: 'warning', cluster: cs.name, msg }),
    };
    if (!hasKubeContext(cs.inv.kubeconfig, cs.inv.context)) {
      // No cluster to hold a Lease in (a load-balancer-only entry): a local lock file.
      const which = cs.inv.context === '' ? `no kubeconfig context for ${cs.name} (${cs.inv.kubeconfig ?? 'the kubeconfig'} has no current-context or does not exist)` : `no kubeconfig context "${cs.inv.context}" for ${cs.name}`;
      this.emit({ type: 'warning', cluster: cs.name, msg: `${which}: locking with a local lock file (protects against other runs on this machine; use --no-lock to skip)` });
      this.locks.set(cs.name, await FileLock.acquire(cs.name, waitOpts));
      return;
    }
    const lock = await ClusterLock.acquire(await clusterClient(cs, vars), waitOpts);
    lock.onLost((msg) => {
      this.emit({ type: 'warning', cluster: cs.name, msg });
      cs.lockLost.abort(new Error(msg));
    });
    this.locks.set(cs.name, lock);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.locks.values()].map((l) => l.release().catch(() => undefined)));
  }
}

/**
 * Cluster locks: before its first change on a cluster, a run takes the Lease
 * `kplay-system/kplay-lock` (holder = run id), renews it while running and releases it at the
 * end (and on Ctrl-C). A second run waits up to `--lock-timeout`, then fails naming the holder and
 * since when. A lease whose holder stopped renewing (crashed run) is taken over once the waiting
 * run has seen it unrenewed for its lease duration on its own monotonic clock (lease-observer.ts:
 * never by comparing the holder's renewTime with this machine's clock, which may be skewed), and
 * at once when the holder ran on this host and its process is gone (a `kill -9`ed run).
 */
import type { KubeClient, KubeObject } from '../k8s/types.js';
import { LeaseObservation, leaseDurationMs, specOf, systemClock, type LockClock } from './lease-observer.js';
import { KubeApiError } from '../k8s/errors.js';
import { ensureSystemNamespace, SYSTEM_NAMESPACE } from './system.js';

export const LOCK_NAME = 'kplay-lock';
const INFO_ANNOTATION = 'kplay.dev/holder-info';

/** Who holds a lock (stored as an annotation on the Lease). */
export interface HolderInfo {
  runId: string;
  user: string;
  host: string;
  playbook: string;
  pid: number;
}

export interface LockOptions {
  holder: HolderInfo;
  /** Lease duration: a holder that does not renew for this long loses the lock. @default 60 */
  leaseSeconds?: number;
  /** How long to wait for another run's lock. @default 60000 */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Called once when the run starts waiting for another holder. */
  onWait?: (msg: string) => void;
  /** Called when the lock of a dead run is taken over. */
  onTakeOver?: (msg: string) => void;
  /** Called (once) when the holder's clock looks skewed against this machine's. */
  onSkew?: (msg: string) => void;
  /** The clocks to judge by (tests only: a fake clock). @default this machine's */
  clock?: LockClock;
}

function infoOf(lease: KubeObject): Partial<HolderInfo> {
  try {
    const v: unknown = JSON.parse(lease.metadata.annotations?.[INFO_ANNOTATION] ?? '{}');
    return typeof v === 'object' && v !== null ? (v as Partial<HolderInfo>) : {};
  } catch {
    return {}; // an annotation written by someone else
  }
}

/** True when process `pid` exists on this host (EPERM: it exists, owned by someone else). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Why the lease's holder is certainly dead: it ran on this host (same host name as `me`) and its
 * pid no longer exists. `undefined` when that cannot be told (another host, no pid recorded).
 */
export function deadLocalHolder(lease: KubeObject, me: HolderInfo): string | undefined {
  const info = infoOf(lease);
  if (info.host !== me.host || typeof info.pid !== 'number' || info.pid <= 0 || info.pid === process.pid) return undefined;
  if (processExists(info.pid)) return undefined;
  return `pid ${info.pid} on this host (${me.host}) is gone`;
}

/** The lock is held by another run. */
export class LockHeldError extends Error {
  override name = 'LockHeldError';
}

/** Kubernetes MicroTime (RFC 3339 with 6 fraction digits). */
export function microTime(d: Date = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function describeHolder(lease: KubeObject): string {
  const spec = specOf(lease);
  const info = infoOf(lease);
  const who = info.user ? `${info.user}@${info.host ?? '?'}` : 'unknown user';
  return `run ${spec.holderIdentity} (${who}, playbook ${info.playbook ?? '?'}, pid ${info.pid ?? '?'}) since ${spec.acquireTime ?? '?'}`;
}

/** The path of the lock's Lease (its own writes are never held back). */
const LEASE_PATH = `/apis/coordination.k8s.io/v1/namespaces/${SYSTEM_NAMESPACE}/leases/${LOCK_NAME}`;

/** A write refused because this run no longer holds the cluster's lock. */
export class LockLostError extends Error {
  override name = 'LockLostError';
}

/**
 * A held lock; `release()` is idempotent. While held, the Lease is renewed and watched: once it is
 * deleted or another run holds it, the lock is *lost* — every later write of this run's client to
 * the cluster is refused ({@link LockLostError}) and `onLost` listeners are told at once (the
 * executor stops the cluster's running task and fails the cluster), so this run writes nothing
 * more while another run may hold the cluster.
 */
export class ClusterLock {
  private timer: NodeJS.Timeout | undefined;
  private released = false;
  private readonly watching = new AbortController();
  private readonly listeners: ((reason: string) => void)[] = [];
  private unguard: (() => void) | undefined;
  /** Why the lock was lost (the Lease deleted, or taken over by another run); undefined while held. */
  lost: string | undefined;

  private constructor(
    private readonly client: KubeClient,
    private readonly holder: HolderInfo,
    private readonly leaseSeconds: number,
    private readonly clock: LockClock,
  ) {}

  /**
   * Take the lock, waiting for another holder up to `timeoutMs` — and, for a Lease that has not
   * changed since it was first seen and looks dead by this machine's clock, until its lease
   * duration has been observed (it is then taken over, or seen renewed).
   */
  static async acquire(client: KubeClient, opts: LockOptions): Promise<ClusterLock> {
    const leaseSeconds = opts.leaseSeconds ?? 60;
    const clock = opts.clock ?? systemClock;
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const deadline = clock.monotonicMs() + timeoutMs;
    await ensureSystemNamespace(client, opts.signal);
    const ref = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: LOCK_NAME, namespace: SYSTEM_NAMESPACE };
    const seen = new LeaseObservation(clock);
    let waited = false;
    for (;;) {
      opts.signal?.throwIfAborted();
      const now = new Date(clock.wallMs());
      const desired = (prev?: KubeObject): KubeObject => ({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          name: LOCK_NAME,
          namespace: SYSTEM_NAMESPACE,
          labels: { 'app.kubernetes.io/managed-by': 'kplay' },
          annotations: { [INFO_ANNOTATION]: JSON.stringify(opts.holder) },
          ...(prev ? { resourceVersion: prev.metadata.resourceVersion } : {}),
        },
        spec: {
          holderIdentity: opts.holder.runId,
          leaseDurationSeconds: leaseSeconds,
          acquireTime: microTime(now),
          renewTime: microTime(now),
          leaseTransitions: (prev ? (specOf(prev).leaseTransitions ?? 0) : 0) + (prev ? 1 : 0),
        },
      });
      const live = await client.get(ref, opts.signal);
      try {
        if (!live) {
          const held = await client.create(desired(), { signal: opts.signal });
          return new ClusterLock(client, opts.holder, leaseSeconds, clock).startRenewing(held);
        }
        const spec = specOf(live);
        const skew = seen.observe(live);
        if (skew) opts.onSkew?.(skew);
        const mine = spec.holderIdentity === opts.holder.runId;
        const gone = !mine && seen.expired(live);
        const dead = !mine && !gone ? deadLocalHolder(live, opts.holder) : undefined;
        if (mine || gone || dead) {
          const held = await client.replace(desired(live), { signal: opts.signal });
          if (dead) opts.onTakeOver?.(`took over the cluster lock of ${describeHolder(live)}: ${dead}`);
          else if (gone && spec.holderIdentity) opts.onTakeOver?.(`took over the cluster lock of ${describeHolder(live)}: its Lease was not renewed for ${Math.round(leaseDurationMs(live) / 1000)} s (its lease duration), as observed by this machine`);
          return new ClusterLock(client, opts.holder, leaseSeconds, clock).startRenewing(held);
        }
      } catch (e) {
        // Someone else created/updated it between our read and write: read again.
        if (e instanceof KubeApiError && e.status === 409) continue;
        throw e;
      }
      const holderText = describeHolder(live);
      // a Lease unchanged since first seen that looks dead is waited on until it can be judged
      const until = seen.looksStale(live) ? Math.max(deadline, seen.judgeableAt(live)) : deadline;
      if (clock.monotonicMs() >= until) {
        const d = Math.round(leaseDurationMs(live) / 1000);
        throw new LockHeldError(`cluster is locked by ${holderText}; gave up after waiting ${Math.round(timeoutMs / 1000)}s (--lock-timeout). A dead run's lock is taken over once a waiting run has seen its Lease unrenewed for its lease duration (${d}s): if that run is dead, wait longer than that.`);
      }
      if (!waited) {
        waited = true;
        opts.onWait?.(seen.waitMessage(live, holderText));
      }
      await clock.sleep(Math.min(1000, Math.max(50, until - clock.monotonicMs())), opts.signal);
    }
  }

  /** @param held the Lease as written when the lock was taken (the watch starts from it: no LIST). */
  private startRenewing(held: KubeObject): this {
    const every = Math.max(1000, (this.leaseSeconds * 1000) / 3);
    this.timer = setInterval(() => void this.renew(), every);
    this.timer.unref();
    // Refuse this client's writes once the lock is lost (the Lease's own writes excepted).
    this.unguard = this.client.onWrite((p) => {
      if (this.lost !== undefined && !this.released && !p.startsWith(LEASE_PATH)) throw new LockLostError(this.lostMessage());
      return false;
    });
    void this.watchLease(held);
    return this;
  }

  /** Tell `fn` when the lock is lost (at once if it already is). */
  onLost(fn: (reason: string) => void): void {
    if (this.lost !== undefined) fn(this.lostMessage());
    else this.listeners.push(fn);
  }

  private lostMessage(): string {
    return `the cluster lock was lost (${this.lost ?? '?'}): this run writes nothing more to the cluster; another run may hold it now (see \`kubectl -n ${SYSTEM_NAMESPACE} get lease ${LOCK_NAME} -o yaml\`)`;
  }

  private markLost(reason: string): void {
    if (this.released || this.lost !== undefined) return;
    this.lost = reason;
    const msg = this.lostMessage();
    for (const fn of this.listeners.splice(0)) fn(msg);
  }

  /** Watch the Lease: a deletion or another holder is seen within the watch's latency, not at the next renewal. */
  private async watchLease(held: KubeObject): Promise<void> {
    const from = typeof held.metadata.resourceVersion === 'string' ? { items: [held], resourceVersion: held.metadata.resourceVersion } : undefined;
    try {
      await this.client.watch('coordination.k8s.io/v1', 'Lease', { namespace: SYSTEM_NAMESPACE, fieldSelector: `metadata.name=${LOCK_NAME}`, signal: this.watching.signal, from }, (_e, state) => {
        if (this.released) return true;
        const live = state.get(`${SYSTEM_NAMESPACE}/${LOCK_NAME}`);
        if (!live) this.markLost('lease deleted');
        else if (specOf(live).holderIdentity !== this.holder.runId) this.markLost(`taken over by ${describeHolder(live)}`);
        return this.lost !== undefined;
      });
    } catch {
      // stopped (released), or the watch failed for good: the renewal still notices a loss
    }
  }

  private async renew(): Promise<void> {
    if (this.released) return;
    try {
      const ref = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: LOCK_NAME, namespace: SYSTEM_NAMESPACE };
      const live = await this.client.get(ref);
      if (!live || specOf(live).holderIdentity !== this.holder.runId) {
        this.markLost(live ? `taken over by ${describeHolder(live)}` : 'lease deleted');
        return;
      }
      await this.client.replace({ ...live, spec: { ...specOf(live), renewTime: microTime(new Date(this.clock.wallMs())) } });
    } catch {
      // The next tick tries again; the lease stays valid for leaseSeconds.
    }
  }

  /** Release the lock (only if still ours). */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    if (this.timer) clearInterval(this.timer);
    this.watching.abort();
    this.unguard?.();
    if (this.lost !== undefined) return; // not ours any more: leave it to its holder
    const ref = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: LOCK_NAME, namespace: SYSTEM_NAMESPACE };
    for (let attempt = 0; attempt < 3; attempt++) {
      const live = await this.client.get(ref);
      if (!live || specOf(live).holderIdentity !== this.holder.runId) return;
      try {
        const { holderIdentity: _h, ...rest } = specOf(live);
        await this.client.replace({ ...live, spec: { ...rest, holderIdentity: '', renewTime: microTime(new Date(this.clock.wallMs())) } });
        return;
      } catch (e) {
        if (e instanceof KubeApiError && e.status === 409) continue;
        throw e;
      }
    }
  }
}

/**
 * Judging another run's cluster lock without trusting its clock, as client-go's leader election
 * does: a waiting run records when IT saw the Lease's record (holder, renewTime, acquireTime,
 * lease duration, resourceVersion) last change, on its own monotonic clock, and holds the holder
 * dead only once the record has not changed for the Lease's `leaseDurationSeconds` of that
 * observation. The holder's `renewTime` is never compared with this machine's clock to decide —
 * only to warn that the two clocks look skewed (a renewTime in the future, or a renewal just seen
 * whose renewTime is far in the past). A Lease seen for the first time cannot be judged yet: it
 * is waited on for its lease duration, never taken at once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '../k8s/types.js';

/**
 * The clocks a lock uses: the wall clock only for the times it writes (and to warn about skew),
 * a monotonic clock for every judgement and wait. Tests give a fake one (`LockOptions.clock`).
 */
export interface LockClock {
  /** Wall-clock time, ms since the epoch (written as `acquireTime`/`renewTime`). */
  wallMs(): number;
  /** Monotonic time, ms (never jumps when the wall clock is set). */
  monotonicMs(): number;
  /** Wait `ms` of monotonic time; rejects when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** This machine's clocks: `Date.now()`, `performance.now()`, a timer. */
export const systemClock: LockClock = {
  wallMs: () => Date.now(),
  monotonicMs: () => performance.now(),
  sleep: (ms, signal) => sleep(ms, undefined, { signal }),
};

/** How far a holder's renewTime may sit from this machine's clock before kplay says the clocks look skewed, ms. */
export const SKEW_TOLERANCE_MS = 5000;

/** The lease duration when a Lease names none, s. */
export const DEFAULT_LEASE_SECONDS = 60;

/** The fields of a Lease's `spec` the lock reads and writes. */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** A Lease's spec. */
export function specOf(lease: KubeObject): LeaseSpec {
  return (lease.spec ?? {}) as LeaseSpec;
}

/** A Lease's duration, ms (its `leaseDurationSeconds`, else {@link DEFAULT_LEASE_SECONDS}). */
export function leaseDurationMs(lease: KubeObject): number {
  const d = specOf(lease).leaseDurationSeconds;
  return (typeof d === 'number' && Number.isFinite(d) && d > 0 ? d : DEFAULT_LEASE_SECONDS) * 1000;
}

const seconds = (ms: number): number => Math.round(Math.abs(ms) / 1000);

/** What a waiting run has seen of another run's Lease, and when (see the file header). */
export class LeaseObservation {
  private record: string | undefined;
  /** Monotonic ms when the record was first seen, and when it last changed. */
  private firstSeenAt = 0;
  private changedAt = 0;
  /** Wall ms of the previous read (a renewal seen now was written after it). */
  private previousWall = 0;
  private skewSaid = false;
  /** How many times the record changed after it was first seen. */
  changes = 0;

  constructor(private readonly clock: LockClock) {}

  /**
   * Note a read of the Lease. Returns, once per observation, a warning when the holder's clock
   * looks skewed against this machine's (it changes nothing of the judgement).
   */
  observe(lease: KubeObject): string | undefined {
    const spec = specOf(lease);
    const now = this.clock.monotonicMs();
    const wall = this.clock.wallMs();
    const record = JSON.stringify([spec.holderIdentity ?? '', spec.renewTime ?? '', spec.acquireTime ?? '', spec.leaseDurationSeconds ?? null, lease.metadata.resourceVersion ?? '']);
    const renew = Date.parse(spec.renewTime ?? '');
    let skew: string | undefined;
    if (record !== this.record) {
      if (this.record === undefined) this.firstSeenAt = now;
      else {
        this.changes++;
        // a renewal seen now was written since the previous read: its renewTime should be no older
        if (!Number.isNaN(renew) && renew < this.previousWall - SKEW_TOLERANCE_MS) {
          skew = `renewed the cluster lock just now, but its renewTime is ${seconds(this.previousWall - renew)} s behind this machine's clock`;
        }
      }
      this.record = record;
      this.changedAt = now;
    }
    this.previousWall = wall;
    if (!Number.isNaN(renew) && renew > wall + SKEW_TOLERANCE_MS) skew = `wrote a renewTime ${seconds(renew - wall)} s ahead of this machine's clock`;
    if (skew === undefined || this.skewSaid) return undefined;
    this.skewSaid = true;
    return `the cluster lock's holder (run ${spec.holderIdentity ?? '?'}) ${skew}: one of the two clocks looks skewed; kplay judges the lock by what it observes (the Lease unrenewed for its lease duration), never by comparing clocks`;
  }

  /** True when the holder is gone: no holder (released), or the record unchanged for the lease duration of this observation. */
  expired(lease: KubeObject): boolean {
    if (!specOf(lease).holderIdentity) return true;
    return this.record !== undefined && this.clock.monotonicMs() - this.changedAt >= leaseDurationMs(lease);
  }

  /**
   * True while the Lease has not changed since it was first seen and its renewTime is older than
   * its lease duration by this machine's clock: it looks dead — or the clocks are skewed — and
   * only waiting out its lease duration tells which.
   */
  looksStale(lease: KubeObject): boolean {
    const renew = Date.parse(specOf(lease).renewTime ?? specOf(lease).acquireTime ?? '');
    return this.changes === 0 && (Number.isNaN(renew) || renew + leaseDurationMs(lease) < this.clock.wallMs());
  }

  /** Monotonic ms when the holder can be judged dead at the earliest (first sight + lease duration). */
  judgeableAt(lease: KubeObject): number {
    return this.firstSeenAt + leaseDurationMs(lease);
  }

  /** The waiting message: who holds it, and how it will be judged. */
  waitMessage(lease: KubeObject, holder: string): string {
    const d = seconds(leaseDurationMs(lease));
    const base = `waiting for the cluster lock held by ${holder}; a holder is taken over only once this machine has seen its Lease unrenewed for its lease duration (${d} s), never by comparing clocks`;
    if (!this.looksStale(lease)) return base;
    const renew = Date.parse(specOf(lease).renewTime ?? specOf(lease).acquireTime ?? '');
    const age = Number.isNaN(renew) ? 'unknown' : `${seconds(this.clock.wallMs() - renew)} s old`;
    return `${base}. Its renewTime is ${age} by this machine's clock — a dead run, or a skewed clock: waiting ${d} s to tell`;
  }
}

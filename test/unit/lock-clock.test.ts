// A lock that a skewed clock cannot steal (issue 51 item 2). A waiting run judges another run's
// Lease as client-go's leader election does: by observing, on its own monotonic clock, that the
// Lease's record stopped changing for its lease duration — never by comparing the holder's
// renewTime with its own wall clock. A fake clock (monotonic time advanced by each wait) and a
// fake Lease store with the apiserver's optimistic concurrency (resourceVersion, 409) make it
// exact: a live holder whose clock is 10 minutes off is never taken over, a holder that stopped
// renewing is taken over after — and not before — the lease duration.
import { describe, expect, it } from 'vitest';
import { ClusterLock, LockHeldError, microTime, type HolderInfo } from '../../src/audit/lock.js';
import type { LockClock } from '../../src/audit/lease-observer.js';
import { KubeApiError } from '../../src/k8s/errors.js';
import type { KubeClient, KubeObject, ObjectRef } from '../../src/k8s/types.js';

const MINUTE = 60_000;

/** Monotonic time that moves only when someone waits; the wall clock is the real one at the start plus it (and an offset). */
class FakeClock implements LockClock {
  mono = 0;
  private readonly ticks: ((mono: number) => void)[] = [];
  constructor(private readonly wallAtStart = Date.now()) {}
  wallMs(): number {
    return this.wallAtStart + this.mono;
  }
  monotonicMs(): number {
    return this.mono;
  }
  sleep(ms: number): Promise<void> {
    this.mono += ms;
    for (const fn of this.ticks) fn(this.mono);
    return Promise.resolve();
  }
  /** Run `fn` whenever time moves (another holder renewing on its own schedule). */
  onTick(fn: (mono: number) => void): void {
    this.ticks.push(fn);
  }
}

/** The Leases and Namespaces of one cluster, with the apiserver's rules: create of an existing name → 409, replace with a stale resourceVersion → 409. */
class LeaseStore {
  private readonly objects = new Map<string, KubeObject>();
  private rv = 100;
  writes = 0;
  private key(kind: string, ns: string | undefined, name: string | undefined): string {
    return `${kind}/${ns ?? ''}/${name ?? ''}`;
  }
  /** Write an object as another party would (a new resourceVersion). */
  put(obj: KubeObject): void {
    this.objects.set(this.key(obj.kind, obj.metadata.namespace, obj.metadata.name), { ...structuredClone(obj), metadata: { ...structuredClone(obj.metadata), resourceVersion: String(++this.rv) } });
  }
  lease(): KubeObject | undefined {
    return this.objects.get(this.key('Lease', 'kplay-system', 'kplay-lock'));
  }
  client(): KubeClient {
    const conflict = (what: string): KubeApiError => new KubeApiError(409, 'Conflict', what, 'PUT', '/apis/coordination.k8s.io/v1', 'c1');
    const fake = {
      name: 'c1',
      get: (ref: ObjectRef): Promise<KubeObject | undefined> => {
        const o = this.objects.get(this.key(ref.kind, ref.namespace, ref.name));
        return Promise.resolve(o ? structuredClone(o) : undefined);
      },
      create: (obj: KubeObject): Promise<KubeObject> => {
        if (this.objects.has(this.key(obj.kind, obj.metadata.namespace, obj.metadata.name))) return Promise.reject(conflict('already exists'));
        this.writes++;
        this.put(obj);
        return Promise.resolve(structuredClone(this.objects.get(this.key(obj.kind, obj.metadata.namespace, obj.metadata.name)) as KubeObject));
      },
      replace: (obj: KubeObject): Promise<KubeObject> => {
        const cur = this.objects.get(this.key(obj.kind, obj.metadata.namespace, obj.metadata.name));
        if (!cur || cur.metadata.resourceVersion !== obj.metadata.resourceVersion) return Promise.reject(conflict('the object has been modified'));
        this.writes++;
        this.put(obj);
        return Promise.resolve(structuredClone(this.objects.get(this.key(obj.kind, obj.metadata.namespace, obj.metadata.name)) as KubeObject));
      },
      watch: (_a: string, _k: string, opts: { signal?: AbortSignal }): Promise<void> => new Promise((resolve) => opts.signal?.addEventListener('abort', () => resolve())),
      onWrite: () => () => undefined,
    };
    return fake as unknown as KubeClient;
  }
}

const me: HolderInfo = { runId: 'run-me', user: 'me', host: 'here', playbook: 'pb.yml', pid: 1 };

/** A Lease held by `run-other` on another host, renewed at `renewWall` (a wall time of the holder's clock). */
function otherLease(renewWall: number, seconds = 60): KubeObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'kplay-lock', namespace: 'kplay-system', annotations: { 'kplay.dev/holder-info': JSON.stringify({ runId: 'run-other', user: 'op', host: 'elsewhere', playbook: 'x.yml', pid: 4242 }) } },
    spec: { holderIdentity: 'run-other', leaseDurationSeconds: seconds, acquireTime: microTime(new Date(renewWall)), renewTime: microTime(new Date(renewWall)), leaseTransitions: 0 },
  };
}

/** Another run renewing its Lease every `every` ms of real time with a clock `skewMs` off ours. */
function renewing(store: LeaseStore, clock: FakeClock, skewMs: number, every = 20_000): void {
  store.put(otherLease(clock.wallMs() + skewMs));
  let last = clock.mono;
  clock.onTick((mono) => {
    if (mono - last < every) return;
    last = mono;
    const cur = store.lease();
    if (cur?.spec && (cur.spec as { holderIdentity?: string }).holderIdentity === 'run-other') store.put({ ...cur, spec: { ...cur.spec, renewTime: microTime(new Date(clock.wallMs() + skewMs)) } });
  });
}

function acquire(store: LeaseStore, clock: FakeClock, timeoutMs: number, said: string[], holder = me): Promise<ClusterLock> {
  return ClusterLock.acquire(store.client(), { holder, timeoutMs, clock, onWait: (m) => said.push(`wait: ${m}`), onSkew: (m) => said.push(`skew: ${m}`), onTakeOver: (m) => said.push(`takeover: ${m}`) });
}

const holderOf = (store: LeaseStore): unknown => (store.lease()?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;

describe('cluster lock expiry judged by observation, not by clocks', () => {
  it('a live holder whose clock is 10 minutes behind ours (we run fast) is not taken over; the skew is said', async () => {
    const store = new LeaseStore();
    const clock = new FakeClock();
    renewing(store, clock, -10 * MINUTE);
    const said: string[] = [];
    await expect(acquire(store, clock, 30_000, said)).rejects.toThrow(LockHeldError);
    expect(holderOf(store)).toBe('run-other');
    expect(said.find((m) => m.startsWith('wait:'))).toMatch(/waiting for the cluster lock held by run run-other .*taken over only once this machine has seen its Lease unrenewed for its lease duration \(60 s\), never by comparing clocks\. Its renewTime is 600 s old by this machine's clock — a dead run, or a skewed clock: waiting 60 s to tell/);
    expect(said.find((m) => m.startsWith('skew:'))).toMatch(/holder \(run run-other\) renewed the cluster lock just now, but its renewTime is (599|600) s behind this machine's clock: one of the two clocks looks skewed/);
    expect(said.some((m) => m.startsWith('takeover:'))).toBe(false);
  });

  it('a live holder whose clock is 10 minutes ahead is not taken over either, and the skew is said', async () => {
    const store = new LeaseStore();
    const clock = new FakeClock();
    renewing(store, clock, 10 * MINUTE);
    const said: string[] = [];
    await expect(acquire(store, clock, 5_000, said)).rejects.toThrow(/locked by run run-other .*gave up after waiting 5s \(--lock-timeout\)\. A dead run's lock is taken over once a waiting run has seen its Lease unrenewed for its lease duration \(60s\)/);
    expect(holderOf(store)).toBe('run-other');
    expect(said.find((m) => m.startsWith('skew:'))).toMatch(/wrote a renewTime 600 s ahead of this machine's clock/);
  });

  it('a holder that stopped renewing long ago is waited on for its lease duration (even past --lock-timeout), then taken over', async () => {
    const store = new LeaseStore();
    const clock = new FakeClock();
    store.put(otherLease(clock.wallMs() - 5 * MINUTE)); // crashed 5 minutes ago, never renews again
    const said: string[] = [];
    const lock = await acquire(store, clock, 30_000, said);
    expect(clock.mono).toBeGreaterThanOrEqual(60_000); // not at once: only after 60 s of our own observation
    expect(clock.mono).toBeLessThan(62_000);
    expect(holderOf(store)).toBe('run-me');
    expect(said.find((m) => m.startsWith('wait:'))).toMatch(/renewTime is 300 s old by this machine's clock — a dead run, or a skewed clock: waiting 60 s to tell/);
    expect(said.find((m) => m.startsWith('takeover:'))).toMatch(/took over the cluster lock of run run-other \(op@elsewhere, playbook x\.yml, pid 4242\) since .*: its Lease was not renewed for 60 s \(its lease duration\), as observed by this machine/);
    await lock.release();
  });

  it('a holder that looked alive and then stopped renewing is taken over after the lease duration, not before; a shorter --lock-timeout gives up', async () => {
    const clock = new FakeClock();
    const short = new LeaseStore();
    short.put(otherLease(clock.wallMs()));
    await expect(acquire(short, clock, 10_000, [])).rejects.toThrow(LockHeldError);
    expect(clock.mono).toBeLessThan(11_000);
    expect(holderOf(short)).toBe('run-other');

    const store = new LeaseStore();
    const clock2 = new FakeClock();
    store.put(otherLease(clock2.wallMs(), 20));
    const lock = await acquire(store, clock2, 90_000, []);
    expect(clock2.mono).toBeGreaterThanOrEqual(20_000);
    expect(clock2.mono).toBeLessThan(22_000);
    expect(holderOf(store)).toBe('run-me');
    await lock.release();
  });

  it('two runs waiting on the same dead holder: exactly one takes it (optimistic concurrency), the other sees the new holder renew… and gives up', async () => {
    const store = new LeaseStore();
    const clock = new FakeClock();
    store.put(otherLease(clock.wallMs() - MINUTE));
    const other: HolderInfo = { ...me, runId: 'run-two', host: 'there' };
    const results = await Promise.allSettled([acquire(store, clock, 30_000, []), acquire(store, clock, 30_000, [], other)]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]?.reason).toBeInstanceOf(LockHeldError);
    expect(['run-me', 'run-two']).toContain(holderOf(store));
    for (const r of won) await r.value.release();
  });

  it('a released Lease (no holder) is taken at once', async () => {
    const store = new LeaseStore();
    const clock = new FakeClock();
    const released = otherLease(clock.wallMs() - 10 * MINUTE);
    store.put({ ...released, spec: { ...(released.spec as Record<string, unknown>), holderIdentity: '' } });
    const lock = await acquire(store, clock, 30_000, []);
    expect(clock.mono).toBe(0);
    expect(holderOf(store)).toBe('run-me');
    await lock.release();
  });
});

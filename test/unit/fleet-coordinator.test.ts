import { describe, expect, it } from 'vitest';
import { FleetCoordinator } from '../../src/fleet/coordinator.js';
import { failedIn, doneIn, reportsOf, stopOf } from '../../src/fleet/budget.js';
import { KubeApiError } from '../../src/k8s/errors.js';
import type { KubeClient, KubeObject } from '../../src/k8s/types.js';
import { InputError } from '../../src/load/errors.js';

/**
 * An apiserver's ConfigMap storage in memory, with its resourceVersion precondition: a replace
 * carrying an old resourceVersion is a 409. Every read yields to the event loop first, so
 * concurrent shards interleave between their read and their write.
 */
function fakeApiserver(opts: { namespaceExists?: boolean } = {}): { client: KubeClient; stored: () => KubeObject | undefined; conflicts: () => number } {
  let obj: KubeObject | undefined;
  let rv = 0;
  let conflicts = 0;
  const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
  const err = (status: number): KubeApiError => new KubeApiError(status, status === 409 ? 'Conflict' : 'NotFound', 'test', 'PUT', '/api/v1/configmaps', 'fleet');
  const client = {
    get: async (): Promise<KubeObject | undefined> => {
      await tick();
      return obj ? structuredClone(obj) : undefined;
    },
    create: async (o: KubeObject): Promise<KubeObject> => {
      await tick();
      if (opts.namespaceExists === false) throw err(404);
      if (obj) {
        conflicts++;
        throw err(409);
      }
      obj = { ...structuredClone(o), metadata: { ...o.metadata, resourceVersion: String(++rv) } };
      return structuredClone(obj);
    },
    replace: async (o: KubeObject): Promise<KubeObject> => {
      await tick();
      if (!obj || o.metadata.resourceVersion !== obj.metadata.resourceVersion) {
        conflicts++;
        throw err(409);
      }
      obj = { ...structuredClone(o), metadata: { ...o.metadata, resourceVersion: String(++rv) } };
      return structuredClone(obj);
    },
  } as unknown as KubeClient;
  return { client, stored: () => obj, conflicts: () => conflicts };
}

const data = (o: KubeObject | undefined): Record<string, string> => ((o as { data?: Record<string, string> } | undefined)?.data ?? {});
const batch = { play: 0, batch: 1, size: 9, anyErrorsFatal: false, maxFailPercentage: 50 };
const ctrl = new AbortController();

describe('fleet coordinator (resourceVersion preconditions)', () => {
  it('loses no shard\'s update when shards write at the same time (409s are read again and retried)', async () => {
    const api = fakeApiserver();
    const shards = await Promise.all([0, 1, 2].map((index) => FleetCoordinator.open(api.client, { fleetRun: 'w', namespace: 'ops', index, shards: 3 })));
    await Promise.all(shards.map((c, i) => c.afterBatch(batch, [`c${i}a`, `c${i}b`], { [`c${i}a`]: { ok: 0, changed: 0, failed: 1, skipped: 0, unreachable: 0, rescued: 0, ignored: 0 } }, ctrl.signal)));
    const d = data(api.stored());
    expect(api.conflicts()).toBeGreaterThan(0);
    expect(failedIn(d, 0, 1)).toEqual(['c0a', 'c0b', 'c1a', 'c1b', 'c2a', 'c2b']);
    expect(doneIn(d, 0, 1)).toEqual([0, 1, 2]);
    // 6 of 9 failed > 50%: stopped once, by whichever shard's write crossed it
    expect(stopOf(d)?.reason).toMatch(/max_fail_percentage 50% exceeded: [56] of 9/);
    expect(d.shards).toBe('3');
  });

  it('a shard waits at the barrier until every shard finished the previous batch', async () => {
    const api = fakeApiserver();
    const [a, b] = await Promise.all([0, 1].map((index) => FleetCoordinator.open(api.client, { fleetRun: 'w', namespace: 'ops', index, shards: 2, pollMs: 5 })));
    if (!a || !b) throw new Error('not opened');
    await a.afterBatch(batch, [], {}, ctrl.signal);
    let started = false;
    const waiting = a.beforeBatch({ ...batch, batch: 2 }, ctrl.signal).then((why) => {
      started = true;
      return why;
    });
    await new Promise((r) => setTimeout(r, 30));
    expect(started).toBe(false);
    await b.afterBatch(batch, [], {}, ctrl.signal);
    expect(await waiting).toBeUndefined();
  });

  it('refuses a shard started with another number of shards, and a missing namespace', async () => {
    const api = fakeApiserver();
    await FleetCoordinator.open(api.client, { fleetRun: 'w', namespace: 'ops', index: 0, shards: 3 });
    await expect(FleetCoordinator.open(api.client, { fleetRun: 'w', namespace: 'ops', index: 0, shards: 4 })).rejects.toThrow(/has 3 shards/);
    await expect(FleetCoordinator.open(fakeApiserver({ namespaceExists: false }).client, { fleetRun: 'w', namespace: 'nope', index: 0, shards: 3 })).rejects.toThrow(InputError);
  });

  it('keeps a resumed shard\'s earlier recap under its new report', async () => {
    const api = fakeApiserver();
    const c = await FleetCoordinator.open(api.client, { fleetRun: 'w', namespace: 'ops', index: 0, shards: 1 });
    const recap = { ok: 1, changed: 0, failed: 0, skipped: 0, unreachable: 0, rescued: 0, ignored: 0 };
    await c.report({ shard: 0, shards: 1, run_id: 'r1', state: 'running', started: 't', clusters: ['a', 'b'], recap: {} });
    await c.afterBatch(batch, [], { a: recap }, ctrl.signal);
    await c.report({ shard: 0, shards: 1, run_id: 'r2', resumed_from: 'r1', state: 'finished', started: 't', clusters: ['a', 'b'], recap: { b: recap } });
    const r = reportsOf(data(api.stored())).get(0);
    expect(r?.run_id).toBe('r2');
    expect(Object.keys(r?.recap ?? {}).sort()).toEqual(['a', 'b']);
  });
});

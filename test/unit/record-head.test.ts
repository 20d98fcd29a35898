// Runs ending at the same moment without the cluster's lock: each in-cluster record must link to
// the record written before it, never two to the same one (a fork `history verify` reports as
// tampering). The cluster is a FAKE ConfigMap store with the apiserver's optimistic concurrency
// (resourceVersion on update, AlreadyExists on create): it lets a test interleave writers step by
// step, which the real apiserver cannot be made to do on demand. The sandbox test
// (audit-order.test.ts) runs real kplay processes against the real apiserver.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyChain } from '../../src/audit/chain.js';
import { HEAD_NAME } from '../../src/audit/cluster-head.js';
import { clusterChainEntries, localChainEntries, readLocalRecords, RunRecorder, type ClusterRecordEntry } from '../../src/audit/record.js';
import { KubeApiError } from '../../src/k8s/errors.js';
import type { KubeClient, KubeObject, ObjectRef } from '../../src/k8s/types.js';
import { emptyStats } from '../../src/report/events.js';

/** An in-memory kplay-system: ConfigMaps by name, each write bumping a resourceVersion. */
function store(opts: { namespace?: boolean; failApply?: boolean } = {}): { client: KubeClient; objects: Map<string, KubeObject>; log: string[] } {
  const objects = new Map<string, KubeObject>();
  const log: string[] = [];
  let rv = 100;
  let namespace = opts.namespace ?? true;
  // every request yields to the other writers first, as a round trip would
  const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
  const copy = (o: KubeObject): KubeObject => structuredClone(o);
  const noNamespace = (verb: string): KubeApiError => new KubeApiError(404, 'NotFound', 'namespaces "kplay-system" not found', verb, '/api/v1/namespaces/kplay-system/configmaps', 'c1', { details: { name: 'kplay-system', kind: 'namespaces' } });
  const put = (o: KubeObject): KubeObject => {
    const stored = copy({ ...o, metadata: { ...o.metadata, resourceVersion: String(++rv) } });
    objects.set(String(o.metadata.name), stored);
    return copy(stored);
  };
  const client = {
    list: async () => {
      await turn();
      log.push('list');
      return { items: [...objects.values()].map(copy), resourceVersion: String(rv) };
    },
    get: async (ref: ObjectRef) => {
      await turn();
      log.push(`get ${ref.name}`);
      const o = objects.get(ref.name);
      return o ? copy(o) : undefined;
    },
    create: async (o: KubeObject) => {
      await turn();
      log.push(`create ${String(o.metadata.name)}`);
      if (o.kind === 'Namespace') {
        namespace = true;
        return o;
      }
      if (!namespace) throw noNamespace('POST');
      if (objects.has(String(o.metadata.name))) throw new KubeApiError(409, 'AlreadyExists', `configmaps "${String(o.metadata.name)}" already exists`, 'POST', '/api/v1/namespaces/kplay-system/configmaps', 'c1');
      return put(o);
    },
    mergePatch: async (ref: ObjectRef, patch: { metadata?: { resourceVersion?: string }; data?: Record<string, string> }) => {
      await turn();
      log.push(`patch ${ref.name}`);
      const cur = objects.get(ref.name);
      if (!cur) throw new KubeApiError(404, 'NotFound', 'not found', 'PATCH', '/api/v1/namespaces/kplay-system/configmaps', 'c1');
      // a resourceVersion in the patch is a precondition, as the apiserver treats it
      if (patch.metadata?.resourceVersion !== undefined && cur.metadata.resourceVersion !== patch.metadata.resourceVersion) throw new KubeApiError(409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again', 'PATCH', '/api/v1/namespaces/kplay-system/configmaps', 'c1');
      return put({ ...cur, data: { ...(cur.data as Record<string, string>), ...patch.data } });
    },
    apply: async (o: KubeObject) => {
      await turn();
      log.push(`apply ${String(o.metadata.name)}`);
      if (!namespace) throw noNamespace('PATCH');
      if (opts.failApply) throw new KubeApiError(403, 'Forbidden', 'configmaps is forbidden', 'PATCH', '/api/v1/namespaces/kplay-system/configmaps', 'c1');
      return put(o);
    },
    delete: async (ref: ObjectRef) => {
      await turn();
      log.push(`delete ${ref.name}`);
      return objects.delete(ref.name);
    },
  } as unknown as KubeClient;
  return { client, objects, log };
}

function recorder(runId: string): RunRecorder {
  const rec = new RunRecorder({ run_id: runId, user: 'ops', host: 'h', started: '2026-11-27T10:00:00.000Z', playbook: 'upgrade.yml', inventory: 'inv', tags: [], skip_tags: [], extra_var_names: [], check: false, lock: false });
  rec.onEvent({ type: 'task_result', task: 'deploy', cluster: 'c1', status: 'changed', msg: 'configured', duration_ms: 5 });
  rec.onEvent({ type: 'recap', clusters: { c1: { ...emptyStats(), ok: 1, changed: 1 } }, elapsed_ms: 10, exit_code: 0, interrupted: false });
  return rec;
}

/** The stored records as `history verify` reads them. */
function entries(objects: Map<string, KubeObject>): ClusterRecordEntry[] {
  return [...objects.values()]
    .filter((o) => o.metadata.name !== HEAD_NAME)
    .map((o) => {
      const data = o.data as Record<string, string>;
      const text = data['record.json'] ?? '';
      const record = JSON.parse(text) as ClusterRecordEntry['record'];
      return { name: String(o.metadata.name), run_id: record?.run.run_id ?? '', text, record, digest: data['record.sha256'] };
    });
}

const prevOf = (o: KubeObject | undefined): string | null | undefined => (JSON.parse((o?.data as Record<string, string> | undefined)?.['record.json'] ?? '{}') as { prev?: { run_id: string } | null }).prev?.run_id ?? null;
const ids = (n: number): string[] => Array.from({ length: n }, (_, i) => `20261127T1000${String(i).padStart(2, '0')}000-r${i}`);

describe('in-cluster run records written at the same moment', () => {
  it('two runs that read the records before either wrote still form one chain', async () => {
    const { client, objects } = store();
    const [a, b] = ids(2) as [string, string];
    // both read the (empty) records before either writes: without the head both would link to nothing
    const listed: KubeObject[] = [];
    await Promise.all([recorder(a).writeCluster(client, ['c1'], 20, listed), recorder(b).writeCluster(client, ['c1'], 20, listed)]);
    const prevs = [prevOf(objects.get(`kplay-run-${a}`.toLowerCase())), prevOf(objects.get(`kplay-run-${b}`.toLowerCase()))];
    // one is the first record, the other links to it
    expect([[null, a], [b, null]]).toContainEqual(prevs);
    expect(verifyChain('c1', clusterChainEntries(entries(objects), 'c1'))).toEqual([]);
  });

  it('eight runs ending together: every record links to another, none twice, and the head names the last', async () => {
    const { client, objects } = store();
    const runs = ids(8);
    await recorder(runs[0] ?? '').writeCluster(client, ['c1'], 20);
    await Promise.all(runs.slice(1).map((id) => recorder(id).writeCluster(client, ['c1'], 20)));
    const records = entries(objects);
    expect(records).toHaveLength(8);
    expect(verifyChain('c1', clusterChainEntries(records, 'c1'))).toEqual([]);
    const linked = records.map((r) => r.record?.prev?.run_id).filter((p): p is string => p !== undefined);
    expect(new Set(linked).size).toBe(7);
    // the one no record links to is where the head points, with its text's hash
    const last = records.find((r) => !linked.includes(r.run_id));
    const head = objects.get(HEAD_NAME)?.data as Record<string, string>;
    expect(head.run_id).toBe(last?.run_id);
    expect(head.sha256).toBe(last?.digest);
  });

  it('a cluster with records but no head (an older kplay wrote them) links to the end of their chain', async () => {
    const { client, objects } = store();
    const [a, b] = ids(2) as [string, string];
    await recorder(a).writeCluster(client, ['c1'], 20);
    objects.delete(HEAD_NAME);
    await recorder(b).writeCluster(client, ['c1'], 20);
    expect(prevOf(objects.get(`kplay-run-${b}`.toLowerCase()))).toBe(a);
    expect((objects.get(HEAD_NAME)?.data as Record<string, string>).run_id).toBe(b);
  });

  it('a head read early in the run and moved since is re-read, not trusted', async () => {
    const { client, objects, log } = store();
    const [a, b, c] = ids(3) as [string, string, string];
    await recorder(a).writeCluster(client, ['c1'], 20);
    const early = [...objects.values()];
    await recorder(b).writeCluster(client, ['c1'], 20);
    log.length = 0;
    await recorder(c).writeCluster(client, ['c1'], 20, early);
    expect(prevOf(objects.get(`kplay-run-${c}`.toLowerCase()))).toBe(b);
    expect(log.slice(0, 3)).toEqual([`patch ${HEAD_NAME}`, `get ${HEAD_NAME}`, `patch ${HEAD_NAME}`]);
  });

  it('makes kplay-system when the cluster has none, then writes the head and the record', async () => {
    const { client, objects, log } = store({ namespace: false });
    const [a] = ids(1) as [string];
    await recorder(a).writeCluster(client, ['c1'], 20);
    expect(log).toEqual(['list', `create ${HEAD_NAME}`, 'create kplay-system', `create ${HEAD_NAME}`, `apply kplay-run-${a}`.toLowerCase()]);
    expect(prevOf(objects.get(`kplay-run-${a}`.toLowerCase()))).toBeNull();
  });

  it('a record whose write failed after the head moved is written by the next run, from the head\'s copy', async () => {
    const good = store();
    const [a, b, c] = ids(3) as [string, string, string];
    await recorder(a).writeCluster(good.client, ['c1'], 20);
    const failing = store({ failApply: true });
    for (const [k, v] of good.objects) failing.objects.set(k, v);
    await expect(recorder(b).writeCluster(failing.client, ['c1'], 20)).rejects.toThrow(/forbidden/);
    // the head names b, whose record is not there
    expect((failing.objects.get(HEAD_NAME)?.data as Record<string, string>).run_id).toBe(b);
    expect(failing.objects.has(`kplay-run-${b}`.toLowerCase())).toBe(false);
    for (const [k, v] of failing.objects) good.objects.set(k, v);
    await recorder(c).writeCluster(good.client, ['c1'], 20);
    const records = entries(good.objects);
    expect(records.map((r) => r.run_id).sort()).toEqual([a, b, c]);
    expect(prevOf(good.objects.get(`kplay-run-${c}`.toLowerCase()))).toBe(b);
    expect(prevOf(good.objects.get(`kplay-run-${b}`.toLowerCase()))).toBe(a);
    expect(good.objects.get(`kplay-run-${b}`.toLowerCase())?.metadata.labels?.['kplay.dev/playbook']).toBe('upgrade.yml');
    expect(verifyChain('c1', clusterChainEntries(records, 'c1'))).toEqual([]);
  });
});

describe('local run records written at the same moment into one directory', () => {
  it('link one after another (records.lock), and the lock is gone afterwards', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-rec-lock-'));
    try {
      const runs = ids(6);
      await Promise.all(runs.map((id) => recorder(id).writeLocal(dir)));
      const local = await readLocalRecords(dir);
      expect(local).toHaveLength(6);
      expect(verifyChain('c1', localChainEntries(local, 'c1'))).toEqual([]);
      const links = local.map((r) => r.chain?.c1?.run_id ?? null);
      expect(new Set(links).size).toBe(6);
      expect(readdirSync(dir).filter((f) => f.endsWith('.lock'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

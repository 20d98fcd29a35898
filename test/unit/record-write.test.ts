// Writing a run's in-cluster record: with the records read earlier in the run (one request at the
// end), old records pruned while it is written, and the plumbing that reads the records as the
// run's first write goes out. The cluster is a FAKE recording the order of requests: the sandbox
// tests (k8s_apply, in-cluster run records) check the same against the real apiserver.
import { describe, expect, it } from 'vitest';
import { RunRecorder } from '../../src/audit/record.js';
import { ClusterState } from '../../src/executor/state.js';
import { emptyStats } from '../../src/report/events.js';
import type { KubeClient, KubeObject } from '../../src/k8s/types.js';

const record = (id: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `kplay-run-${id}`, namespace: 'kplay-system', labels: { 'kplay.dev/run-id': id } }, data: { 'record.json': JSON.stringify({ run: { run_id: id } }) } });

/** Records of earlier runs in the cluster; the write of the new one is held until `release()`. */
function fakeCluster(existing: KubeObject[]): { client: KubeClient; log: string[]; release: () => void } {
  const log: string[] = [];
  let release = (): void => undefined;
  const held = new Promise<void>((r) => (release = r));
  const client = {
    list: () => {
      log.push('list');
      return Promise.resolve({ items: existing, resourceVersion: '1' });
    },
    apply: async (obj: KubeObject) => {
      log.push(`apply ${obj.metadata.name ?? ''}`);
      await held;
      log.push('applied');
      return obj;
    },
    // the chain's head (see record-head.test.ts): none yet, so it is created
    create: (obj: KubeObject) => {
      log.push(`create ${obj.metadata.name ?? ''}`);
      return Promise.resolve({ ...obj, metadata: { ...obj.metadata, resourceVersion: '2' } });
    },
    delete: (ref: { name: string }) => {
      log.push(`delete ${ref.name}`);
      return Promise.resolve(true);
    },
  } as unknown as KubeClient;
  return { client, log, release };
}

function recorder(runId: string): RunRecorder {
  const rec = new RunRecorder({ run_id: runId, user: 'ops', host: 'h', started: '2026-11-24T10:00:00.000Z', playbook: 'upgrade.yml', inventory: 'inv', tags: [], skip_tags: [], extra_var_names: [], check: false, lock: true });
  rec.onEvent({ type: 'task_result', task: 'deploy', cluster: 'c1', status: 'changed', msg: 'configured', duration_ms: 5 });
  rec.onEvent({ type: 'recap', clusters: { c1: { ...emptyStats(), ok: 1, changed: 1 } }, elapsed_ms: 10, exit_code: 0, interrupted: false });
  return rec;
}

describe('RunRecorder.writeCluster', () => {
  const older = ['20261124t090000000-aaaaaa', '20261124t090100000-bbbbbb', '20261124t090200000-cccccc'].map(record);

  it('writes with the records read earlier (no LIST at the end), links to the newest, prunes while writing', async () => {
    const { client, log, release } = fakeCluster(older);
    const done = recorder('20261124T100000000-dddddd').writeCluster(client, ['c1'], 2, older);
    await new Promise((r) => setTimeout(r, 10));
    // the oldest two go while the new record's write is still under way
    expect(log).toEqual(['create kplay-run-head', 'apply kplay-run-20261124t100000000-dddddd', 'delete kplay-run-20261124t090000000-aaaaaa', 'delete kplay-run-20261124t090100000-bbbbbb']);
    release();
    await done;
    expect(log.at(-1)).toBe('applied');
  });

  it('reads the records itself when the run did not', async () => {
    const { client, log, release } = fakeCluster(older);
    release();
    await recorder('20261124T100000000-dddddd').writeCluster(client, ['c1'], 20);
    expect(log).toEqual(['list', 'create kplay-run-head', 'apply kplay-run-20261124t100000000-dddddd', 'applied']);
  });

  it('keeping one record, deletes the others only once the new one is written', async () => {
    const { client, log, release } = fakeCluster(older);
    const done = recorder('20261124T100000000-dddddd').writeCluster(client, ['c1'], 1, older);
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toEqual(['create kplay-run-head', 'apply kplay-run-20261124t100000000-dddddd']);
    release();
    await done;
    expect(log.slice(2)).toEqual(['applied', 'delete kplay-run-20261124t090000000-aaaaaa', 'delete kplay-run-20261124t090100000-bbbbbb', 'delete kplay-run-20261124t090200000-cccccc']);
  });
});

describe('ClusterState.whenAdapter', () => {
  it('hands over the adapter once a task creates it, without creating it', async () => {
    const cs = new ClusterState({ name: 'c1', context: 'c1', vars: {} } as ConstructorParameters<typeof ClusterState>[0]);
    const seen: string[] = [];
    cs.whenAdapter<string>('k8s', (a) => seen.push(a));
    await new Promise((r) => setTimeout(r, 5));
    expect(seen).toEqual([]);
    expect(cs.adapters.has('k8s')).toBe(false);
    await cs.adapter('k8s', () => Promise.resolve('client'));
    await new Promise((r) => setTimeout(r, 0));
    expect(seen).toEqual(['client']);
    // and at once when it exists
    cs.whenAdapter<string>('k8s', (a) => seen.push(`again ${a}`));
    await new Promise((r) => setTimeout(r, 0));
    expect(seen).toEqual(['client', 'again client']);
  });
});

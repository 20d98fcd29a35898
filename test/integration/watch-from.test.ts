// A watch that starts from a LIST the caller already made (WatchOptions.from), on the sandbox's
// real apiserver: no second LIST, and what was written after that LIST arrives on the stream —
// how k8s_apply waits for its new CRDs to be Established without listing every CRD again.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type KubeClientImpl } from '../../src/k8s/client.js';
import type { KubeObject } from '../../src/k8s/types.js';
import { kubectl, sandboxEnv } from '../sandbox/env.js';

const ns = `watch-from-${randomBytes(3).toString('hex')}`;
let client: KubeClientImpl;

beforeAll(async () => {
  const env = sandboxEnv();
  await kubectl(['create', 'namespace', ns]);
  client = await connect({ name: 'sandbox-1', context: 'sandbox-1', kubeconfig: env.kubeconfig });
});

afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--wait=false'], { check: false });
});

const cm = (name: string, data: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data });

describe('KubeClient.watch from a LIST already made', () => {
  it('streams from its resourceVersion: the objects it listed, then what was written after it, and no LIST of its own', async () => {
    await client.apply(cm('before', { a: '1' }), { fieldManager: 'kplay-test' });
    const listed = await client.list('v1', 'ConfigMap', { namespace: ns });
    expect(listed.items.map((o) => o.metadata.name)).toContain('before');
    // written after the LIST: a new object, and a change to a listed one
    await client.apply(cm('after', { b: '2' }), { fieldManager: 'kplay-test' });
    await client.apply(cm('before', { a: '2' }), { fieldManager: 'kplay-test' });

    const lists = client.stats.byVerb.list ?? 0;
    const events: string[] = [];
    await client.watch('v1', 'ConfigMap', { namespace: ns, from: listed, signal: AbortSignal.timeout(30_000) }, (e, state) => {
      events.push(`${e.type} ${e.object?.metadata.name ?? ''}`);
      const before = state.get(`${ns}/before`) as { data?: Record<string, string> } | undefined;
      return state.has(`${ns}/after`) && before?.data?.a === '2';
    });
    expect(client.stats.byVerb.list ?? 0).toBe(lists);
    // the listed state first (SYNC), then the two writes in the order they were made (the
    // namespace's kube-root-ca.crt, which a controller publishes whenever it gets to it, may come
    // before or after the LIST: it is not one of this test's writes)
    expect(events[0]).toBe('SYNC ');
    expect(events.slice(1).filter((e) => !e.endsWith(' kube-root-ca.crt'))).toEqual(['ADDED after', 'MODIFIED before']);
  });
});

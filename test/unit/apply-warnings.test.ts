// How applyObjects reports the apiserver's warnings: one line per object and warning, once per
// apply (the dry-run of a changed object and its write are answered with the same warning),
// masked. A FAKE client stands in for the apiserver's answer; the sandbox test (k8s_apply "what
// the apiserver says about a manifest") checks a real warning.
import { describe, expect, it } from 'vitest';
import { applyObjects } from '../../src/k8s/apply/index.js';
import type { ApplyOptions, KubeClient, KubeObject, ResourceInfo } from '../../src/k8s/types.js';

const live: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'app', resourceVersion: '7', managedFields: [] }, data: { a: '1' } };
const wanted: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'app' }, data: { a: '2', token: 's3cret' } };

function fakeClient(): { client: KubeClient; calls: ApplyOptions[] } {
  const calls: ApplyOptions[] = [];
  const info: ResourceInfo = { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true, verbs: ['get', 'list', 'patch'] };
  const client = {
    name: 'fake',
    server: 'https://fake',
    serverVersion: 'v1.34.4',
    stats: { requests: 0, writes: 0, retries: 0, byVerb: {} },
    resource: () => Promise.resolve(info),
    invalidateDiscovery: () => undefined,
    learnKinds: () => undefined,
    get: () => Promise.resolve(live),
    list: () => Promise.resolve({ items: [live], resourceVersion: '7' }),
    apply: (obj: KubeObject, opts: ApplyOptions) => {
      calls.push(opts);
      opts.onWarning?.('metadata.finalizers: "x": prefer a domain-qualified finalizer name');
      opts.onWarning?.('token s3cret is deprecated');
      return Promise.resolve({ ...obj, metadata: { ...live.metadata, ...obj.metadata, resourceVersion: opts.dryRun ? '7' : '8' } });
    },
  };
  return { client: client as unknown as KubeClient, calls };
}

describe('applyObjects: the apiserver\'s warnings', () => {
  it('reports each warning of an object once (its dry-run and its write are both answered with it), masked', async () => {
    const { client, calls } = fakeClient();
    const lines: string[] = [];
    const results = await applyObjects(client, [wanted], {
      fieldManager: 'kplay',
      force: false,
      defaultNamespace: 'default',
      checkMode: false,
      mask: (s) => s.replaceAll('s3cret', '********'),
      warn: (m) => lines.push(m),
    });
    expect(results.map((r) => r.action)).toEqual(['configured']);
    expect(calls.map((c) => c.dryRun ?? false)).toEqual([true, false]);
    expect(lines).toEqual(['ConfigMap app/cfg: metadata.finalizers: "x": prefer a domain-qualified finalizer name', 'ConfigMap app/cfg: token ******** is deprecated']);
  });

  it('asks for no warnings when the caller has no sink for them', async () => {
    const { client, calls } = fakeClient();
    const results = await applyObjects(client, [wanted], { fieldManager: 'kplay', force: false, defaultNamespace: 'default', checkMode: true });
    expect(results.map((r) => r.action)).toEqual(['configured']);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.onWarning).toBeUndefined();
  });
});

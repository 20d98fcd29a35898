// A CRD's kinds appear in discovery a moment after the CRD is Established (the apiserver's
// discovery controller runs on its own). The real sandbox shows the gap only now and then (it
// failed the bench's big set once in CI), so the lag is injected here by a FAKE discovery.
import { describe, expect, it } from 'vitest';
import { crdKinds, waitServed } from '../../src/k8s/apply/index.js';
import { KubeApiError } from '../../src/k8s/errors.js';
import type { KubeObject, ResourceInfo } from '../../src/k8s/types.js';

/** Discovery that serves `kind` only from the `servedAfter`-th read on. */
function laggingDiscovery(servedAfter: number): { invalidateDiscovery(): void; resource(a: string, k: string): Promise<ResourceInfo>; reads: () => number } {
  let reads = 0;
  let loaded = false;
  return {
    invalidateDiscovery: () => (loaded = false),
    resource: (apiVersion, kind) => {
      if (!loaded) {
        reads++;
        loaded = true;
      }
      const [group = '', version = ''] = apiVersion.split('/');
      if (reads < servedAfter) return Promise.reject(new KubeApiError(404, 'NotFound', `no kind ${kind}`, 'DISCOVER', apiVersion, 'fake'));
      return Promise.resolve({ group, version, kind, resource: `${kind.toLowerCase()}s`, namespaced: true, verbs: [] });
    },
    reads: () => reads,
  };
}

const thing = { apiVersion: 'corpus.kplay.test/v1', kind: 'Thing', crd: 'things.corpus.kplay.test' };

describe('waitServed', () => {
  it('passes other errors through (an unreachable apiserver is not a lagging discovery)', async () => {
    const d = { invalidateDiscovery: () => undefined, resource: () => Promise.reject(new Error('cluster fake unreachable')) };
    await expect(waitServed(d, [thing], 5000)).rejects.toThrow(/unreachable/);
  });

  it('re-reads discovery until the new kinds are served', async () => {
    const d = laggingDiscovery(3);
    await waitServed(d, [thing], 5000);
    expect(d.reads()).toBe(3);
  });

  it('costs one discovery read when the kinds are served at once', async () => {
    const d = laggingDiscovery(1);
    await waitServed(d, [thing, { ...thing, kind: 'Other' }], 5000);
    expect(d.reads()).toBe(1);
  });

  it('costs no discovery read when the discovery already read serves them (a changed CRD keeping its versions)', async () => {
    const d = laggingDiscovery(1);
    await d.resource(thing.apiVersion, thing.kind);
    expect(d.reads()).toBe(1);
    await waitServed(d, [thing, { ...thing, kind: 'Other' }], 5000);
    expect(d.reads()).toBe(1);
  });

  it('gives up after the timeout naming the CRD and the kind', async () => {
    const d = laggingDiscovery(Number.POSITIVE_INFINITY);
    await expect(waitServed(d, [thing], 200)).rejects.toThrow(/CRD things\.corpus\.kplay\.test is Established but the apiserver does not serve Thing \(corpus\.kplay\.test\/v1\) after 0 s/);
    expect(d.reads()).toBeGreaterThan(1);
  });

  it('stops when aborted', async () => {
    const d = laggingDiscovery(Number.POSITIVE_INFINITY);
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('interrupted')), 100);
    await expect(waitServed(d, [thing], 60_000, ac.signal)).rejects.toThrow(/interrupted/);
  });
});

describe('crdKinds', () => {
  it('leaves out versions the CRD does not serve (they never appear in discovery)', () => {
    const crd: KubeObject = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'things.corpus.kplay.test' },
      spec: { group: 'corpus.kplay.test', scope: 'Namespaced', names: { kind: 'Thing' }, versions: [{ name: 'v1', served: true }, { name: 'v1alpha1', served: false }, { name: 'v2' }] },
    };
    expect([...crdKinds([crd]).keys()]).toEqual(['corpus.kplay.test/v1|Thing', 'corpus.kplay.test/v2|Thing']);
  });
});

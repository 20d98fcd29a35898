// A CRD created by an apply: its custom resources are written as soon as it is Established,
// with its kinds taken from the CRD itself (discovery lists them a moment later), and writes
// retried while the apiserver does not serve the new endpoint yet. The gap shows on the real
// sandbox only now and then, so here a small HTTP server plays discovery and the lagging
// endpoint (a FAKE apiserver: it injects the lag).
import { afterEach, describe, expect, it } from 'vitest';
import { crdKinds, writeServed } from '../../src/k8s/apply/index.js';
import { crdServedKinds as servedKinds } from '../../src/k8s/discovery.js';
import { KubeClientImpl } from '../../src/k8s/client.js';
import { KubeApiError } from '../../src/k8s/errors.js';
import { Transport } from '../../src/k8s/http.js';
import type { KubeObject } from '../../src/k8s/types.js';
import { readBody, startHttp, type TestServer } from '../helpers/http.js';

const crd: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.shop.kplay.test' },
  spec: {
    group: 'shop.kplay.test',
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets', singular: 'widget' },
    versions: [
      { name: 'v1', served: true, storage: true },
      { name: 'v1alpha1', served: false, storage: false },
      { name: 'v2', served: true, storage: false },
    ],
  },
  status: { acceptedNames: { kind: 'Widget', plural: 'widgets' }, conditions: [{ type: 'Established', status: 'True' }] },
};

const emptyDiscovery = { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', items: [] };
const notServed = { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', details: {}, code: 404 };

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('servedKinds', () => {
  it('lists every served version under the accepted names and scope', () => {
    expect(servedKinds(crd)).toEqual([
      { group: 'shop.kplay.test', version: 'v1', kind: 'Widget', resource: 'widgets', namespaced: true, verbs: expect.arrayContaining(['get', 'list', 'patch', 'watch']) },
      { group: 'shop.kplay.test', version: 'v2', kind: 'Widget', resource: 'widgets', namespaced: true, verbs: expect.arrayContaining(['get', 'list', 'patch', 'watch']) },
    ]);
    const cluster = { ...crd, spec: { ...(crd.spec as object), scope: 'Cluster' } };
    expect(servedKinds(cluster).every((k) => !k.namespaced)).toBe(true);
  });

  it('is empty for shapes it cannot read (no group, no names, null versions)', () => {
    expect(servedKinds({ ...crd, spec: { group: 'g', versions: null } })).toEqual([]);
    expect(servedKinds({ ...crd, spec: null, status: null })).toEqual([]);
  });

  it('takes the requested names when a manifest carries the empty status stub older controller-gen wrote', () => {
    const stub = { ...crd, status: { acceptedNames: { kind: '', plural: '' }, conditions: [], storedVersions: [] } };
    expect(servedKinds(stub).map((k) => `${k.version} ${k.kind} ${k.resource}`)).toEqual(['v1 Widget widgets', 'v2 Widget widgets']);
    // ... so an apply knows its custom resources wait for this CRD
    expect([...crdKinds([stub]).keys()]).toEqual(['shop.kplay.test/v1|Widget', 'shop.kplay.test/v2|Widget']);
  });
});

describe('learned kinds', () => {
  it('are used for kinds discovery does not list yet, and forgotten when the CRD is deleted', async () => {
    server = await startHttp((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(emptyDiscovery));
    });
    const client = new KubeClientImpl('c1', server.url, new Transport({ cluster: 'c1', server: server.url }));
    try {
      await expect(client.resource('shop.kplay.test/v1', 'Widget')).rejects.toThrow(/no kind Widget in apiVersion shop.kplay.test\/v1 on cluster c1 \(is the CRD installed\?\)/);
      client.learnKinds('widgets.shop.kplay.test', servedKinds(crd));
      const before = client.stats.requests;
      expect(await client.resource('shop.kplay.test/v2', 'Widget')).toMatchObject({ resource: 'widgets', version: 'v2', namespaced: true });
      expect(client.stats.requests).toBe(before); // no discovery refresh for a learned kind
      client.learnKinds('widgets.shop.kplay.test', []);
      client.invalidateDiscovery();
      await expect(client.resource('shop.kplay.test/v1', 'Widget')).rejects.toThrow(/no kind Widget/);
    } finally {
      client.close();
    }
  });
});

describe('kinds every cluster serves', () => {
  it('need no discovery until it is read; then discovery answers', async () => {
    const paths: string[] = [];
    server = await startHttp((req, res) => {
      paths.push(String(req.url));
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(emptyDiscovery));
    });
    const client = new KubeClientImpl('c1', server.url, new Transport({ cluster: 'c1', server: server.url }));
    try {
      expect(await client.resource('v1', 'Secret')).toMatchObject({ group: '', version: 'v1', resource: 'secrets', namespaced: true });
      expect(await client.resource('apps/v1', 'Deployment')).toMatchObject({ group: 'apps', resource: 'deployments', namespaced: true });
      expect(await client.resource('rbac.authorization.k8s.io/v1', 'ClusterRole')).toMatchObject({ resource: 'clusterroles', namespaced: false });
      expect(paths).toEqual([]);
      // anything else reads discovery (here: empty, so the kind is unknown)
      await expect(client.resource('policy/v1', 'PodDisruptionBudget')).rejects.toThrow(/no kind PodDisruptionBudget/);
      expect(paths.filter((p) => p === '/api' || p === '/apis').length).toBeGreaterThan(0);
      // once discovery is read it is the authority (this fake serves nothing)
      await expect(client.resource('v1', 'Secret')).rejects.toThrow(/no kind Secret/);
    } finally {
      client.close();
    }
  });
});

describe('prefetchDiscovery', () => {
  it('reads discovery once, in the background: built-in kinds do not wait for it, other kinds use it without a second read', async () => {
    const widgets = { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', items: [{ metadata: { name: 'shop.kplay.test' }, versions: [{ version: 'v1', resources: [{ resource: 'widgets', responseKind: { group: 'shop.kplay.test', version: 'v1', kind: 'Widget' }, scope: 'Namespaced', verbs: ['get', 'list', 'patch'] }] }] }] };
    const paths: string[] = [];
    const held: (() => void)[] = [];
    let bothAsked: () => void = () => undefined;
    const asked = new Promise<void>((r) => (bothAsked = r));
    server = await startHttp((req, res) => {
      paths.push(String(req.url));
      const body = req.url === '/apis' ? widgets : emptyDiscovery;
      // discovery answers only when the test lets it
      held.push(() => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body)));
      if (held.length === 2) bothAsked();
    });
    const client = new KubeClientImpl('c1', server.url, new Transport({ cluster: 'c1', server: server.url }));
    try {
      void client.prefetchDiscovery();
      await asked;
      expect(paths.sort()).toEqual(['/api', '/apis']);
      // a built-in kind answers from the table while discovery is still being read
      expect(await client.resource('apps/v1', 'Deployment')).toMatchObject({ resource: 'deployments' });
      const widget = client.resource('shop.kplay.test/v1', 'Widget');
      for (const answer of held) answer();
      expect(await widget).toMatchObject({ resource: 'widgets', namespaced: true });
      expect(paths).toHaveLength(2); // the prefetched read, not a second one
      await client.prefetchDiscovery(); // already read: nothing more
      await client.resource('shop.kplay.test/v1', 'Widget');
      expect(paths).toHaveLength(2);
    } finally {
      client.close();
    }
  });

  it('a failed prefetch is not an error; the next lookup reads discovery again', async () => {
    // the first request to each discovery path fails, whatever order they arrive in
    const seen = new Map<string, number>();
    server = await startHttp((req, res) => {
      const n = (seen.get(String(req.url)) ?? 0) + 1;
      seen.set(String(req.url), n);
      if (n === 1) return void res.writeHead(403, { 'Content-Type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'no' }));
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(emptyDiscovery));
    });
    const client = new KubeClientImpl('c1', server.url, new Transport({ cluster: 'c1', server: server.url }));
    try {
      await client.prefetchDiscovery(); // settles, does not reject
      // read again: empty this time, so the kind is unknown (not the prefetch's 403)
      await expect(client.resource('shop.kplay.test/v1', 'Widget')).rejects.toThrow(/no kind Widget/);
      expect(seen.get('/api')).toBeGreaterThan(1);
    } finally {
      client.close();
    }
  });
});

describe('writeServed', () => {
  it('retries an apply while the new endpoint answers 404, then returns what the server stored', async () => {
    let patches = 0;
    server = await startHttp((req, res) => {
      if (req.method !== 'PATCH') return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(emptyDiscovery));
      patches++;
      void readBody(req).then((body) => {
        if (patches < 3) return void res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify(notServed));
        res.writeHead(201, { 'Content-Type': 'application/json' }).end(body);
      });
    });
    const client = new KubeClientImpl('c1', server.url, new Transport({ cluster: 'c1', server: server.url }));
    try {
      client.learnKinds('widgets.shop.kplay.test', servedKinds(crd));
      const w: KubeObject = { apiVersion: 'shop.kplay.test/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'shop' }, spec: { size: 1 } };
      const stored = await writeServed(() => client.apply(w, { fieldManager: 'kplay', force: false }), Date.now() + 10_000);
      expect(stored).toMatchObject({ kind: 'Widget', metadata: { name: 'w1' } });
      expect(patches).toBe(3);
    } finally {
      client.close();
    }
  });

  it('does not retry a 404 that names an object (a missing namespace), nor other errors', async () => {
    let calls = 0;
    const nsGone = new KubeApiError(404, 'NotFound', 'namespaces "shop" not found', 'PATCH', '/apis/shop.kplay.test/v1/namespaces/shop/widgets/w1', 'c1', { reason: 'NotFound', code: 404, details: { name: 'shop', kind: 'namespaces' } });
    await expect(writeServed(() => (calls++, Promise.reject(nsGone)), Date.now() + 10_000)).rejects.toBe(nsGone);
    expect(calls).toBe(1);
    const forbidden = new KubeApiError(403, 'Forbidden', 'no', 'PATCH', '/x', 'c1');
    await expect(writeServed(() => Promise.reject(forbidden), Date.now() + 10_000)).rejects.toBe(forbidden);
  });

  it('gives up at the deadline with the last error', async () => {
    const missing = new KubeApiError(404, 'NotFound', 'the server could not find the requested resource', 'PATCH', '/x', 'c1', notServed);
    let calls = 0;
    const started = Date.now();
    await expect(writeServed(() => (calls++, Promise.reject(missing)), Date.now() + 300)).rejects.toBe(missing);
    expect(calls).toBeGreaterThan(1);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

// How an apply reads its CRDs (issue 31 item 5): a GET of each of the set's CRDs, never the
// cluster's CRD list; an apply that writes CRDs lists them metadata-only before writing, for the
// resourceVersion the wait for their establishment starts from — seeded with the CRDs as read,
// when each was read at the version the LIST saw. The client's side is tested against a local
// HTTP server (a FAKE apiserver that answers as real ones of both kinds do); the real apiserver's
// answer is tested in test/integration/crdmeta.test.ts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { crdWatchStart, listCrdVersions, readCrds } from '../../src/k8s/apply/crd-reads.js';
import { KubeClientImpl } from '../../src/k8s/client.js';
import { KubeApiError } from '../../src/k8s/errors.js';
import { Transport } from '../../src/k8s/http.js';
import { liveKey } from '../../src/k8s/object-plan.js';
import type { KubeClient, KubeObject, ListOptions, ListResult, ObjectRef } from '../../src/k8s/types.js';

const CRD = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' };
const crd = (name: string, spec: Record<string, unknown> = { group: 'x.test' }, resourceVersion = '7'): KubeObject => ({ ...CRD, metadata: { name, resourceVersion }, spec });
const key = (name: string): string => liveKey({ ...CRD, name });
const partial = (name: string, resourceVersion = '7'): KubeObject => ({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { name, resourceVersion } });

/**
 * A fake client over a cluster of CRDs: `mode` says how it answers a metadata-only LIST (as a real
 * apiserver does, with the full list as an old one that ignores the Accept, or 406). Logs each read.
 */
function fakeClient(cluster: KubeObject[], mode: 'metadata' | 'full' | '406'): { client: KubeClient; reads: string[] } {
  const reads: string[] = [];
  const byName = new Map(cluster.map((c) => [c.metadata.name ?? '', c]));
  const client = {
    list: (_apiVersion: string, _kind: string, opts: ListOptions = {}): Promise<ListResult> => {
      reads.push(opts.metadataOnly ? 'list metadata' : 'list');
      if (opts.metadataOnly && mode === '406') return Promise.reject(new KubeApiError(406, 'NotAcceptable', 'only application/json', 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', 'fake'));
      if (opts.metadataOnly && mode === 'metadata') return Promise.resolve({ items: cluster.map((c) => partial(c.metadata.name ?? '', c.metadata.resourceVersion)), resourceVersion: 'meta-rv', metadataOnly: true });
      return Promise.resolve({ items: cluster, resourceVersion: 'full-rv' });
    },
    get: (ref: ObjectRef): Promise<KubeObject | undefined> => {
      reads.push(`get ${ref.name}`);
      return Promise.resolve(byName.get(ref.name));
    },
  } as unknown as KubeClient;
  return { client, reads };
}

const unrelated = Array.from({ length: 10 }, (_, i) => crd(`big${i}.other.test`, { group: 'other.test', schema: 'x'.repeat(1000) }));

describe('reading the CRDs of a set', () => {
  it('a GET of each of the set’s CRDs, and no LIST', async () => {
    const mine = [crd('a.x.test'), crd('b.x.test')];
    const { client, reads } = fakeClient([...unrelated, ...mine], 'metadata');
    const lives = await readCrds(client, [...mine, crd('c.x.test'), crd('d.x.test')]);
    expect(reads.sort()).toEqual(['get a.x.test', 'get b.x.test', 'get c.x.test', 'get d.x.test']);
    expect(lives.get(key('a.x.test'))).toEqual(mine[0]);
    expect(lives.get(key('b.x.test'))).toEqual(mine[1]);
    expect(lives.has(key('c.x.test'))).toBe(true);
    expect(lives.get(key('c.x.test'))).toBeUndefined();
  });

  it('says when a GET first finds a CRD missing (once), not when all exist', async () => {
    const mine = [crd('a.x.test'), crd('b.x.test')];
    const { client } = fakeClient(mine, 'metadata');
    let absent = 0;
    await readCrds(client, mine, undefined, () => absent++);
    expect(absent).toBe(0);
    await readCrds(client, [...mine, crd('c.x.test'), crd('d.x.test')], undefined, () => absent++);
    expect(absent).toBeGreaterThan(0);
  });

  it('a GET error is the apply’s error', async () => {
    const forbidden = new KubeApiError(403, 'Forbidden', 'no', 'GET', '/apis', 'fake');
    const client = { get: () => Promise.reject(forbidden) } as unknown as KubeClient;
    await expect(readCrds(client, [crd('a.x.test')])).rejects.toThrow(/no/);
  });
});

describe('where the wait for CRDs about to be written starts', () => {
  it('the metadata-only LIST’s resourceVersion, seeded with the CRDs as read when the LIST saw the same versions', async () => {
    const mine = [crd('a.x.test'), crd('b.x.test')];
    const { client, reads } = fakeClient([...unrelated, ...mine], 'metadata');
    const set = [...mine, crd('c.x.test')];
    const lives = await readCrds(client, set);
    expect(crdWatchStart(await listCrdVersions(client), lives, set)).toEqual({ items: mine, resourceVersion: 'meta-rv' });
    expect(reads.filter((r) => r.startsWith('list'))).toEqual(['list metadata']);
    // a cold apply: none exists
    const cold = fakeClient(unrelated, 'metadata');
    const none = [crd('a.x.test'), crd('b.x.test'), crd('c.x.test')];
    expect(crdWatchStart(await listCrdVersions(cold.client), await readCrds(cold.client, none), none)).toEqual({ items: [], resourceVersion: 'meta-rv' });
  });

  it('none when a CRD changed, appeared or went since it was read (the watch then lists for itself)', async () => {
    const a = crd('a.x.test', { group: 'x.test' }, '7');
    const b = crd('b.x.test');
    const lives = new Map([[key('a.x.test'), a], [key('b.x.test'), b], [key('c.x.test'), undefined]]);
    const set = [a, b, crd('c.x.test')];
    for (const cluster of [[crd('a.x.test', { group: 'x.test' }, '8'), b], [b], [a, b, crd('c.x.test')]]) {
      const { client } = fakeClient(cluster, 'metadata');
      expect(crdWatchStart(await listCrdVersions(client), lives, set)).toBeUndefined();
    }
  });

  it('a server that answers the full list to the metadata Accept: that list; one that answers 406: none, and never the full LIST', async () => {
    const mine = [crd('a.x.test')];
    const full = fakeClient([...unrelated, ...mine], 'full');
    expect(crdWatchStart(await listCrdVersions(full.client), new Map(), mine)).toEqual({ items: [...unrelated, ...mine], resourceVersion: 'full-rv' });
    const refused = fakeClient([...unrelated, ...mine], '406');
    expect(await listCrdVersions(refused.client)).toBeUndefined();
    expect(crdWatchStart(undefined, new Map(), mine)).toBeUndefined();
    expect(refused.reads).toEqual(['list metadata']);
  });

  it('another error of the LIST is the apply’s error', async () => {
    const client = { list: () => Promise.reject(new KubeApiError(403, 'Forbidden', 'no', 'GET', '/apis', 'fake')) } as unknown as KubeClient;
    await expect(listCrdVersions(client)).rejects.toThrow(/no/);
  });
});

let server: http.Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

/** A local HTTP server answering `answer(n, accept)` to the n-th request (1-based). */
function serve(answer: (n: number, accept: string) => Record<string, unknown>): Promise<KubeClientImpl> {
  let n = 0;
  server = http.createServer((req, res) => {
    const body = JSON.stringify(answer(++n, String(req.headers.accept ?? '')));
    res.writeHead(200, { 'Content-Type': 'application/json', Connection: 'close' });
    res.end(body);
  });
  return new Promise((resolve) =>
    server?.listen(0, '127.0.0.1', () => {
      const url = `http://127.0.0.1:${(server?.address() as AddressInfo).port}`;
      resolve(new KubeClientImpl('c1', url, new Transport({ cluster: 'c1', server: url })));
    }),
  );
}

const ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const metaList = (names: string[], cont?: string): Record<string, unknown> => ({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: '9', ...(cont ? { continue: cont } : {}) }, items: names.map((n) => partial(n)) });
const fullList = (names: string[], cont?: string): Record<string, unknown> => ({ kind: 'CustomResourceDefinitionList', apiVersion: 'apiextensions.k8s.io/v1', metadata: { resourceVersion: '9', ...(cont ? { continue: cont } : {}) }, items: names.map((n) => crd(n)) });

describe('the client’s metadata-only LIST', () => {
  it('sends the metadata Accept and says when the answer is metadata only; counts it and the bytes read', async () => {
    const accepts: string[] = [];
    const c = await serve((_n, accept) => (accepts.push(accept), accept.includes('PartialObjectMetadataList') ? metaList(['a', 'b']) : fullList(['a', 'b'])));
    const meta = await c.list(CRD.apiVersion, CRD.kind, { metadataOnly: true });
    expect(meta.metadataOnly).toBe(true);
    expect(meta.items.map((i) => [i.kind, i.metadata.name])).toEqual([['PartialObjectMetadata', 'a'], ['PartialObjectMetadata', 'b']]);
    const whole = await c.list(CRD.apiVersion, CRD.kind);
    expect(whole.metadataOnly).toBeUndefined();
    expect(whole.items.map((i) => i.kind)).toEqual([CRD.kind, CRD.kind]);
    expect(accepts).toEqual([ACCEPT, 'application/json']);
    expect(c.stats.metadataLists).toBe(1);
    expect(c.stats.byVerb.list).toBe(2);
    expect(c.stats.responseBytes).toBe(JSON.stringify(metaList(['a', 'b'])).length + JSON.stringify(fullList(['a', 'b'])).length);
  });

  it('a server that ignores the Accept answers whole objects: not metadata only', async () => {
    const c = await serve(() => fullList(['a']));
    const r = await c.list(CRD.apiVersion, CRD.kind, { metadataOnly: true });
    expect(r.metadataOnly).toBeUndefined();
    expect(r.items[0]?.kind).toBe(CRD.kind);
    expect(c.stats.metadataLists ?? 0).toBe(0);
  });

  it('pages answered some metadata only, some whole: the list is read again, whole', async () => {
    const c = await serve((n) => (n === 1 ? metaList(['a'], 'next') : n === 2 ? fullList(['b']) : n === 3 ? fullList(['a'], 'next') : fullList(['b'])));
    const r = await c.list(CRD.apiVersion, CRD.kind, { metadataOnly: true });
    expect(r.metadataOnly).toBeUndefined();
    expect(r.items.map((i) => [i.kind, i.metadata.name])).toEqual([[CRD.kind, 'a'], [CRD.kind, 'b']]);
    expect(c.stats.byVerb.list).toBe(4);
  });
});

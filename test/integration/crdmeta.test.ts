// How an apply reads a set's CRDs on a cluster with many other large CRDs (issue 31 item 5), on the
// sandbox's real apiserver: a GET of each of the set's CRDs, and a metadata-only LIST of CRDs only
// before writing them — so what is read grows with the set, not with the cluster — with the same results
// as the full LIST of every CRD (the path of a server that ignores the metadata Accept, taken here
// by a client that does not ask for it), and the custom resources written after their CRDs are
// Established (the wait starts from the metadata list's resourceVersion).
// The counts are the client's request stats, which KPLAY_STATS_FILE writes out (src/k8s/stats.ts).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyObjects, type ObjectResult } from '../../src/k8s/apply/index.js';
import { connect, type KubeClientImpl } from '../../src/k8s/client.js';
import type { ClientStats, KubeClient, KubeObject, ListOptions } from '../../src/k8s/types.js';
import { kubectl, sandboxEnv } from '../sandbox/env.js';

const CONTEXT = 'sandbox-2';
const id = randomBytes(3).toString('hex');
const ns = `crdmeta-${id}`;
const label = { 'kplay.test/crdmeta': id };
const CRD_API = 'apiextensions.k8s.io/v1';
const CRD_KIND = 'CustomResourceDefinition';
/** The set's CRDs: enough of them (4) that the CRDs are LISTed rather than read with a GET each. */
const SET_CRDS = 4;
/** The unrelated CRDs: 10 of ~200 KB each (a vendor's schemas: long descriptions, many fields). */
const UNRELATED = 10;

const clients: KubeClientImpl[] = [];
async function newClient(): Promise<KubeClientImpl> {
  const c = await connect({ name: CONTEXT, context: CONTEXT, kubeconfig: sandboxEnv().kubeconfig });
  clients.push(c);
  return c;
}

/** A CRD of `group` for kind `Kind`, with `fields` documented string properties under spec. */
function crdOf(group: string, plural: string, kind: string, fields: number): KubeObject {
  const properties: Record<string, unknown> = { size: { type: 'integer', description: 'How big.' } };
  for (let i = 0; i < fields; i++) properties[`field${i}`] = { type: 'string', description: `Field ${i}: ${'a long vendor description of what this field does. '.repeat(10)}` };
  return {
    apiVersion: CRD_API,
    kind: CRD_KIND,
    metadata: { name: `${plural}.${group}`, labels: label },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: plural.slice(0, -1), kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties } } } } }],
    },
  };
}

/** A set: `SET_CRDS` small CRDs of `group` and one custom resource of each, in the test's namespace. */
function setOf(group: string): KubeObject[] {
  return Array.from({ length: SET_CRDS }, (_, i) => [crdOf(group, `widget${i}s`, `Widget${i}`, 3), { apiVersion: `${group}/v1`, kind: `Widget${i}`, metadata: { name: `w${i}`, namespace: ns }, spec: { size: i, field0: 'x' } }]).flat();
}

const groupA = `crdmeta-a-${id}.kplay.test`;
const groupB = `crdmeta-b-${id}.kplay.test`;

/** What a client read: the kind and name of every object a LIST or GET answered. */
interface Reads {
  listed: { kind: string; name: string; metadataOnly: boolean }[];
  got: { kind: string; name: string }[];
  /** For each custom resource written (not a dry-run): whether its CRD's names were accepted (its kinds served) then. */
  writtenOnceServed: Record<string, boolean>;
  /** How many of the set's CRDs were Established when the apply returned. */
  establishedAtEnd?: number;
}

/**
 * `inner` with its reads recorded, and each write of a custom resource checked first (with
 * `checker`, a client of its own) against its CRD's NamesAccepted condition. With `fullList`, LISTs
 * never ask for metadata only: the path of an apiserver that answers the full list.
 */
function observed(inner: KubeClientImpl, checker: KubeClient, fullList: boolean): { client: KubeClient; reads: Reads } {
  const reads: Reads = { listed: [], got: [], writtenOnceServed: {} };
  const client = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'list') {
        return async (apiVersion: string, kind: string, opts: ListOptions = {}) => {
          const r = await target.list(apiVersion, kind, fullList ? { ...opts, metadataOnly: false } : opts);
          for (const o of r.items) reads.listed.push({ kind: o.kind, name: o.metadata.name ?? '', metadataOnly: r.metadataOnly === true });
          return r;
        };
      }
      if (prop === 'get') {
        return async (...args: Parameters<KubeClient['get']>) => {
          const o = await target.get(...args);
          if (o) reads.got.push({ kind: o.kind, name: o.metadata.name ?? '' });
          return o;
        };
      }
      if (prop === 'apply') {
        return async (...args: Parameters<KubeClient['apply']>) => {
          const [obj, opts] = args;
          if (!opts.dryRun && obj.kind.startsWith('Widget')) {
            const group = obj.apiVersion.split('/')[0] ?? '';
            const crd = await checker.get({ apiVersion: CRD_API, kind: CRD_KIND, name: `${obj.kind.toLowerCase()}s.${group}` });
            const conditions = ((crd?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []);
            reads.writtenOnceServed[`${group} ${obj.kind}`] = conditions.some((c) => c.type === 'NamesAccepted' && c.status === 'True');
          }
          return target.apply(...args);
        };
      }
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { client, reads };
}

/** The results of an apply, comparable across the two sets (group B's names read as group A's). */
function comparable(results: ObjectResult[]): unknown {
  const shape = results.map((r) => ({ ref: r.ref, action: r.action, note: r.note, plan: r.plan.action, changedPaths: r.plan.changedPaths, diff: r.plan.diff, object: r.object }));
  return JSON.parse(JSON.stringify(shape).replaceAll(groupB, groupA)) as unknown;
}

const opts = { fieldManager: 'kplay', force: false, defaultNamespace: ns, checkMode: false, crdTimeoutMs: 90_000 };

/** One apply of `set` by a new client: its results, reads and request stats. */
async function applyWith(set: KubeObject[], fullList: boolean): Promise<{ results: ObjectResult[]; reads: Reads; stats: ClientStats }> {
  const inner = await newClient();
  const { client, reads } = observed(inner, checker, fullList);
  const results = await applyObjects(client, set, opts);
  const crds = await Promise.all(set.filter((o) => o.kind === CRD_KIND).map((o) => checker.get({ apiVersion: CRD_API, kind: CRD_KIND, name: o.metadata.name ?? '' })));
  reads.establishedAtEnd = crds.filter((c) => ((c?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((x) => x.type === 'Established' && x.status === 'True')).length;
  return { results, reads, stats: structuredClone(inner.stats) };
}

let checker: KubeClientImpl;
let unrelatedBytes = 0;
const unrelatedNames = new Set<string>();

beforeAll(async () => {
  await kubectl(['create', 'namespace', ns], { context: CONTEXT });
  checker = await newClient();
  const group = `crdmeta-u-${id}.kplay.test`;
  await Promise.all(
    Array.from({ length: UNRELATED }, async (_, i) => {
      const crd = crdOf(group, `bigs${i}s`, `Big${i}`, 400);
      unrelatedNames.add(crd.metadata.name ?? '');
      const stored = await checker.apply(crd, { fieldManager: 'crdmeta-setup' });
      unrelatedBytes += JSON.stringify(stored).length;
    }),
  );
}, 120_000);

afterAll(async () => {
  await kubectl(['delete', 'crd', '-l', `kplay.test/crdmeta=${id}`, '--wait=false'], { context: CONTEXT, check: false });
  await kubectl(['delete', 'namespace', ns, '--wait=false'], { context: CONTEXT, check: false });
  for (const c of clients) c.close();
}, 60_000);

describe('an apply of a set with CRDs on a cluster with many other large CRDs', () => {
  it('GETs the set’s CRDs, lists CRDs metadata-only only before writing them; results as the full LIST gives; custom resources once their kinds are served, the apply ending once the CRDs are Established', async () => {
    expect(unrelatedBytes).toBeGreaterThan(UNRELATED * 150_000);
    const setA = setOf(groupA);
    const setB = setOf(groupB);

    // cold: none of the set's CRDs exists
    const coldA = await applyWith(setA, false);
    const coldB = await applyWith(setB, true);
    expect(coldA.results.map((r) => r.action)).toEqual(Array(SET_CRDS * 2).fill('created'));
    expect(comparable(coldA.results)).toEqual(comparable(coldB.results));
    // a GET of each of the set's CRDs, which finds none (nothing of the set exists yet), and, before
    // writing them, one LIST of CRDs, metadata only: the watch for Established starts from it
    expect(coldA.stats.metadataLists).toBe(1);
    expect(coldA.stats.byVerb.list).toBe(1);
    expect(coldA.reads.got).toEqual([]);
    expect(coldA.reads.listed.every((o) => o.metadataOnly && o.kind === 'PartialObjectMetadata')).toBe(true);
    expect(coldA.reads.listed.map((o) => o.name)).toEqual(expect.arrayContaining([...unrelatedNames]));
    // the full LIST read every unrelated CRD whole; the metadata path read less than half of one's worth of them
    expect(coldB.stats.byVerb.list).toBe(1);
    expect(coldB.reads.listed.filter((o) => unrelatedNames.has(o.name) && o.kind === CRD_KIND)).toHaveLength(UNRELATED);
    expect(coldB.stats.responseBytes ?? 0).toBeGreaterThan(unrelatedBytes);
    expect(coldA.stats.responseBytes ?? 0, `bytes read: metadata path ${coldA.stats.responseBytes ?? 0}, full LIST ${coldB.stats.responseBytes ?? 0}`).toBeLessThan(unrelatedBytes / 4);
    // every custom resource was written once its CRD's names were accepted; the apply ended once
    // every CRD was Established
    for (const [group, reads] of [[groupA, coldA.reads], [groupB, coldB.reads]] as const) {
      expect(Object.keys(reads.writtenOnceServed).sort()).toEqual(Array.from({ length: SET_CRDS }, (_, i) => `${group} Widget${i}`));
      expect(Object.values(reads.writtenOnceServed).every(Boolean)).toBe(true);
      expect(reads.establishedAtEnd).toBe(SET_CRDS);
    }

    // no-op: every CRD of the set exists; 4 of many more on the cluster
    const noopA = await applyWith(setA, false);
    const noopB = await applyWith(setB, true);
    expect(noopA.results.map((r) => r.action)).toEqual(Array(SET_CRDS * 2).fill('unchanged'));
    expect(comparable(noopA.results)).toEqual(comparable(noopB.results));
    // nothing is written: no LIST of CRDs at all
    expect(noopA.stats.metadataLists ?? 0).toBe(0);
    expect(noopA.stats.byVerb.list ?? 0).toBe(0);
    expect(noopA.stats.writes).toBe(0);
    expect(noopA.reads.got.filter((o) => o.kind === CRD_KIND).map((o) => o.name).sort()).toEqual(setA.filter((o) => o.kind === CRD_KIND).map((o) => o.metadata.name).sort());
    expect([...noopA.reads.listed, ...noopA.reads.got].some((o) => o.kind === CRD_KIND && unrelatedNames.has(o.name))).toBe(false);
    expect(noopA.stats.responseBytes ?? 0, `bytes read: ${noopA.stats.responseBytes ?? 0}`).toBeLessThan(unrelatedBytes / 4);
    // ... whatever the server answers to a metadata-only LIST
    expect(noopB.stats.byVerb.list ?? 0).toBe(0);
    expect(noopB.stats.responseBytes ?? 0).toBeLessThan(unrelatedBytes / 4);
  }, 240_000);
});

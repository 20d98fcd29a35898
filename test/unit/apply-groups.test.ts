// The order `applyObjects` writes in: which group waits for which. A FAKE client holds chosen
// writes back until the test lets them go — the real apiserver's slow writes (ten large CRDs take
// it ~0.3 s to validate, then ~1 s to establish) cannot be held at a chosen moment; the sandbox
// tests (k8s_apply, bench B8) apply the same shapes for real.
import { describe, expect, it, vi } from 'vitest';
import { applyObjects, smallCrdsFirst, watchCrds } from '../../src/k8s/apply/index.js';
import { KubeApiError } from '../../src/k8s/errors.js';
import type { KubeClient, KubeObject, ResourceInfo, WatchEvent } from '../../src/k8s/types.js';

const GROUP = 'corpus.kplay.test';
const crd: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `things.${GROUP}` },
  spec: { group: GROUP, scope: 'Namespaced', names: { plural: 'things', singular: 'thing', kind: 'Thing', listKind: 'ThingList' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
};
const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } };
const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'app' }, data: { a: '1' } };
const deploy: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'app' }, spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } } } };
const thing: KubeObject = { apiVersion: `${GROUP}/v1`, kind: 'Thing', metadata: { name: 't1', namespace: 'app' }, spec: { size: 1 } };
const webhook: KubeObject = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'hook' }, webhooks: [] };

const KINDS: Record<string, [string, boolean]> = {
  Namespace: ['namespaces', false],
  CustomResourceDefinition: ['customresourcedefinitions', false],
  ConfigMap: ['configmaps', true],
  Deployment: ['deployments', true],
  Thing: ['things', true],
  Widget0: ['widget0s', true],
  Widget1: ['widget1s', true],
  Widget2: ['widget2s', true],
  ValidatingWebhookConfiguration: ['validatingwebhookconfigurations', false],
};

/** A gate a write waits at until the test opens (or fails) it. */
interface Gate {
  open(): void;
  fail(e: Error): void;
  wait: Promise<void>;
}
function gate(): Gate {
  let open = (): void => undefined;
  let fail = (_e: Error): void => undefined;
  const wait = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { open, fail, wait };
}

/**
 * A cluster where nothing exists yet: writes are logged (`start Kind`, `end Kind`) and wait at
 * the gate of their kind, if any; a CRD is Established as soon as it is watched. With
 * `metadataLists`, a LIST asked for metadata only is answered so (else with the full list, as an
 * apiserver that does not know the metadata Accept does).
 */
function fakeCluster(gates: Partial<Record<string, Gate>>, refusedNames = new Set<string>(), metadataLists = false, establishing?: Gate, endpointLag = 0): { client: KubeClient; log: string[]; watches: string[]; reads: string[]; watchedFrom: (string | undefined)[]; prefetchedAt: number[] } {
  const log: string[] = [];
  const watches: string[] = [];
  const reads: string[] = [];
  const watchedFrom: (string | undefined)[] = [];
  /** How many reads had been made when each discovery prefetch was asked for. */
  const prefetchedAt: number[] = [];
  const appliedCrds = new Map<string, KubeObject>();
  const lagLeft = new Map<string, number>();
  const crdsApplied: string[] = [];
  const info = (apiVersion: string, kind: string): ResourceInfo => {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    const k = KINDS[kind];
    if (!k) throw new Error(`test: unknown kind ${kind}`);
    return { group: group ?? '', version: version ?? '', kind, resource: k[0], namespaced: k[1], verbs: ['get', 'list', 'watch', 'patch'] };
  };
  const client = {
    name: 'fake',
    server: 'https://fake',
    serverVersion: 'v1.34.4',
    stats: { requests: 0, writes: 0, retries: 0, byVerb: {} },
    resource: (apiVersion: string, kind: string) => Promise.resolve(info(apiVersion, kind)),
    invalidateDiscovery: () => undefined,
    prefetchDiscovery: () => (prefetchedAt.push(reads.length), Promise.resolve()),
    learnKinds: () => undefined,
    get: (ref: { kind: string }) => {
      reads.push(`get ${ref.kind}`);
      return Promise.resolve(undefined);
    },
    list: (_apiVersion: string, kind: string, lopts: { metadataOnly?: boolean } = {}) => {
      if (kind === 'CustomResourceDefinition') log.push('list CustomResourceDefinition');
      if (metadataLists && lopts.metadataOnly) {
        reads.push(`metadata list ${kind}`);
        return Promise.resolve({ items: [], resourceVersion: `metadata-list-of-${kind}`, metadataOnly: true });
      }
      reads.push(`list ${kind}`);
      return Promise.resolve({ items: [], resourceVersion: `list-of-${kind}` });
    },
    apply: async (obj: KubeObject) => {
      if (obj.apiVersion.startsWith(`${GROUP}/`)) {
        // the apiserver's copy of a new CRD trails the names it accepted: its endpoint is missing for a moment
        const left = lagLeft.get(obj.kind) ?? endpointLag;
        if (left > 0) {
          lagLeft.set(obj.kind, left - 1);
          log.push(`404 ${obj.kind}`);
          throw new KubeApiError(404, 'NotFound', 'the server could not find the requested resource', 'PATCH', `/apis/${obj.apiVersion}`, 'fake');
        }
      }
      log.push(`start ${obj.kind}`);
      await gates[obj.kind]?.wait;
      log.push(`end ${obj.kind}`);
      if (obj.kind === 'CustomResourceDefinition') {
        appliedCrds.set(obj.metadata.name ?? '', obj);
        crdsApplied.push(obj.metadata.name ?? '');
      }
      return { ...obj, metadata: { ...obj.metadata, uid: `uid-${obj.metadata.name ?? ''}`, resourceVersion: '2' } };
    },
    watch: async (_apiVersion: string, kind: string, wopts: { fieldSelector?: string; from?: { resourceVersion: string } }, onEvent: (e: WatchEvent, state: Map<string, KubeObject>) => boolean | Promise<boolean>) => {
      if (kind !== 'CustomResourceDefinition') throw new Error(`test: watch of ${kind}`);
      watches.push(wopts.fieldSelector ?? 'all');
      watchedFrom.push(wopts.from?.resourceVersion);
      // the apiserver establishes CRDs one after another; each watch sees them in that order
      const wanted = wopts.fieldSelector ? [wopts.fieldSelector.replace('metadata.name=', '')] : [...crdsApplied];
      const state = new Map<string, KubeObject>();
      if (establishing) {
        // several apiservers: the names are accepted, Established follows (5 s later in a real cluster)
        for (const name of wanted) {
          const applied = appliedCrds.get(name);
          if (!applied) throw new Error(`test: CRD ${name} watched before it was applied`);
          state.set(name, { ...applied, metadata: { ...applied.metadata, resourceVersion: '3' }, status: { conditions: [{ type: 'NamesAccepted', status: 'True' }, { type: 'Established', status: 'False', reason: 'Installing' }] } });
          log.push(`names accepted ${name}`);
          if (await onEvent({ type: 'MODIFIED', object: state.get(name) } as WatchEvent, state)) return;
        }
        await establishing.wait;
      }
      for (const name of wanted) {
        const applied = appliedCrds.get(name);
        if (!applied) throw new Error(`test: CRD ${name} watched before it was applied`);
        const accepted = !refusedNames.has(name);
        const live: KubeObject = { ...applied, metadata: { ...applied.metadata, resourceVersion: '3' }, status: { conditions: [{ type: 'NamesAccepted', status: accepted ? 'True' : 'False', message: accepted ? '' : 'the kind is already used by another CRD' }, { type: 'Established', status: accepted ? 'True' : 'False' }] } };
        state.set(name, live);
        log.push(`established ${name}`);
        if (await onEvent({ type: 'MODIFIED', object: live } as WatchEvent, state)) return;
        await new Promise((r) => setTimeout(r, 5));
      }
    },
  } as unknown as KubeClient;
  return { client, log, watches, reads, watchedFrom, prefetchedAt };
}

const opts = { fieldManager: 'kplay', force: false, defaultNamespace: 'default', checkMode: false };
/** Let every pending promise chain run (the fake answers at once). */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 20));

describe('applyObjects groups', () => {
  it('reads RBAC, config, services and workloads while the CRDs are written, and writes them once the CRDs are Established, as their custom resources', async () => {
    const crdGate = gate();
    const { client, log, reads } = fakeCluster({ CustomResourceDefinition: crdGate });
    const done = applyObjects(client, [thing, deploy, cm, crd], opts);
    await settle();
    // the CRD write is under way; the built-in kinds are read (and planned) but not written yet
    expect(log).toEqual(['start CustomResourceDefinition']);
    expect(reads).toEqual(expect.arrayContaining(['get ConfigMap', 'get Deployment']));
    crdGate.open();
    const results = await done;
    expect(log.slice(0, 3)).toEqual(['start CustomResourceDefinition', 'end CustomResourceDefinition', `established things.${GROUP}`]);
    expect(log.slice(3).sort()).toEqual(['end ConfigMap', 'end Deployment', 'end Thing', 'start ConfigMap', 'start Deployment', 'start Thing']);
    expect(log.indexOf('start Deployment')).toBeGreaterThan(log.indexOf('end ConfigMap'));
    // results in apply order, whatever order the writes ended in
    expect(results.map((r) => `${r.action} ${r.ref.kind}`)).toEqual(['created CustomResourceDefinition', 'created ConfigMap', 'created Deployment', 'created Thing']);
  });

  it('starts reading discovery before anything else when the set has kinds outside the built-in table, and not otherwise', async () => {
    const custom = fakeCluster({});
    await applyObjects(custom.client, [thing, deploy, cm, crd], opts);
    expect(custom.prefetchedAt).toEqual([0]);
    expect(custom.reads.length).toBeGreaterThan(0);
    const builtins = fakeCluster({});
    await applyObjects(builtins.client, [deploy, cm, ns, crd], opts);
    expect(builtins.prefetchedAt).toEqual([]);
  });

  it('writes the built-in kinds at once when no CRD is written (the set\'s CRDs are unchanged)', async () => {
    const { client, log } = fakeCluster({});
    await applyObjects(client, [deploy, cm], opts);
    expect(log).toEqual(['start ConfigMap', 'end ConfigMap', 'start Deployment', 'end Deployment']);
  });

  it('applies nothing namespaced before the namespaces, but the CRDs alongside them', async () => {
    const nsGate = gate();
    const { client, log } = fakeCluster({ Namespace: nsGate });
    const done = applyObjects(client, [cm, thing, crd, ns, deploy], opts);
    await settle();
    expect(log).toEqual(['start Namespace', 'start CustomResourceDefinition', 'end CustomResourceDefinition']);
    nsGate.open();
    const results = await done;
    expect(log.indexOf('start ConfigMap')).toBeGreaterThan(log.indexOf('end Namespace'));
    expect(log.indexOf('start Thing')).toBeGreaterThan(log.indexOf('end Namespace'));
    expect(log.indexOf('start Deployment')).toBeGreaterThan(log.indexOf('end ConfigMap'));
    expect(results.map((r) => r.ref.kind)).toEqual(['Namespace', 'CustomResourceDefinition', 'ConfigMap', 'Deployment', 'Thing']);
  });

  it('a failing CRD: the built-in kinds are still written, its custom resources and the webhooks are not written, the CRD error is thrown', async () => {
    const crdGate = gate();
    const { client, log } = fakeCluster({ CustomResourceDefinition: crdGate });
    const done = applyObjects(client, [webhook, thing, deploy, cm, crd], opts);
    await settle();
    crdGate.fail(new Error('CustomResourceDefinition things.corpus.kplay.test is invalid: spec.versions[0].schema: Required value'));
    await expect(done).rejects.toThrow(/things\.corpus\.kplay\.test is invalid/);
    expect(log).toContain('end Deployment');
    expect(log).not.toContain('start Thing');
    expect(log).not.toContain('start ValidatingWebhookConfiguration');
  });

  it('registers webhooks after every other group, custom resources included', async () => {
    const { client, log } = fakeCluster({});
    await applyObjects(client, [webhook, thing, deploy, cm, crd, ns], opts);
    expect(log.at(-2)).toBe('start ValidatingWebhookConfiguration');
    expect(log.indexOf('start ValidatingWebhookConfiguration')).toBeGreaterThan(log.indexOf('end Thing'));
    expect(log.indexOf('start ValidatingWebhookConfiguration')).toBeGreaterThan(log.indexOf('end Deployment'));
  });

  const widgets = [0, 1, 2].map((i): [KubeObject, KubeObject] => [
    { ...crd, metadata: { name: `widget${i}s.${GROUP}` }, spec: { group: GROUP, scope: 'Namespaced', names: { plural: `widget${i}s`, kind: `Widget${i}` }, versions: [{ name: 'v1', served: true, storage: true }] } },
    { apiVersion: `${GROUP}/v1`, kind: `Widget${i}`, metadata: { name: `w${i}`, namespace: 'app' } },
  ]);

  it('several new CRDs: one watch of all CRDs (not a LIST and a stream each), and the custom resources of each CRD go as soon as it is Established', async () => {
    const { client, log, watches, reads, watchedFrom } = fakeCluster({});
    const results = await applyObjects(client, widgets.flat(), opts);
    expect(watches).toEqual(['all']);
    // the watch starts from the LIST of CRDs read (with a GET of each) before they were written: no second LIST
    expect(reads.filter((r) => r.endsWith('CustomResourceDefinition')).sort()).toEqual(['get CustomResourceDefinition', 'get CustomResourceDefinition', 'get CustomResourceDefinition', 'list CustomResourceDefinition']);
    expect(watchedFrom).toEqual(['list-of-CustomResourceDefinition']);
    // the CRDs were established one after another; the custom resources of the first went before the second was
    expect(log.indexOf('start Widget0')).toBeLessThan(log.indexOf(`established widget1s.${GROUP}`));
    expect(log.indexOf('start Widget1')).toBeLessThan(log.indexOf(`established widget2s.${GROUP}`));
    expect(results.filter((r) => r.action === 'created')).toHaveLength(6);
  });

  it('several new CRDs on a server that lists metadata only: the CRDs are read so, and the watch for Established starts from that list', async () => {
    const { client, reads, watches, watchedFrom, log } = fakeCluster({}, new Set(), true);
    const results = await applyObjects(client, widgets.flat(), opts);
    // a cold apply: a GET of each CRD (none exists) and the metadata-only LIST, never the full LIST
    expect(reads.filter((r) => r.includes('CustomResourceDefinition')).sort()).toEqual(['get CustomResourceDefinition', 'get CustomResourceDefinition', 'get CustomResourceDefinition', 'metadata list CustomResourceDefinition']);
    expect(watches).toEqual(['all']);
    expect(watchedFrom).toEqual(['metadata-list-of-CustomResourceDefinition']);
    // listed before any CRD was written
    expect(log.indexOf('list CustomResourceDefinition')).toBe(0);
    expect(results.filter((r) => r.action === 'created')).toHaveLength(6);
  });

  it('reads the live state of the later groups ahead, while the CRDs are still being written; nothing in a namespace the set declares', async () => {
    const crdGate = gate();
    const { client, log, reads } = fakeCluster({ CustomResourceDefinition: crdGate });
    const svc: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other', namespace: 'elsewhere' } };
    const done = applyObjects(client, [webhook, thing, deploy, cm, crd, svc], opts);
    await settle();
    // the webhook goes last, but its read is done; the custom resource (new kind) is not read
    expect(log).not.toContain('start ValidatingWebhookConfiguration');
    expect(reads.sort()).toEqual(['get ConfigMap', 'get ConfigMap', 'get CustomResourceDefinition', 'get Deployment', 'get ValidatingWebhookConfiguration']);
    crdGate.open();
    await done;
    expect(reads.filter((r) => r.endsWith('ValidatingWebhookConfiguration'))).toHaveLength(1);
    expect(reads.filter((r) => r.endsWith('Thing'))).toEqual([]);

    // With the namespace in the set, what goes in it is not read ahead — and, since the apply
    // creates it, not read at all
    const nsGate = gate();
    const second = fakeCluster({ Namespace: nsGate });
    const applied = applyObjects(second.client, [webhook, deploy, cm, ns, svc], opts);
    await settle();
    expect(second.reads.sort()).toEqual(['get ConfigMap', 'get Namespace', 'get ValidatingWebhookConfiguration']);
    nsGate.open();
    await applied;
    expect(second.reads.sort()).toEqual(['get ConfigMap', 'get Namespace', 'get ValidatingWebhookConfiguration']);
  });

  it('reads custom resources of kinds the set does not define while the CRDs are still being written (an existing CRD: nothing to wait for)', async () => {
    const crdGate = gate();
    const { client, log, reads } = fakeCluster({ CustomResourceDefinition: crdGate });
    const foreign: KubeObject = { apiVersion: `${GROUP}/v1`, kind: 'Widget0', metadata: { name: 'w', namespace: 'app' } };
    const done = applyObjects(client, [thing, foreign, crd], opts);
    await settle();
    expect(log).toEqual(['start CustomResourceDefinition']);
    // read ahead: the CRD of Widget0 is not in the set; Thing's CRD does not exist yet, so neither does Thing
    expect(reads.sort()).toEqual(['get CustomResourceDefinition', 'get Widget0']);
    crdGate.open();
    const results = await done;
    expect(reads.filter((r) => r.endsWith('Widget0'))).toHaveLength(1);
    expect(reads.filter((r) => r.endsWith('Thing'))).toEqual([]);
    expect(results.map((r) => `${r.action} ${r.ref.kind}`)).toEqual(['created CustomResourceDefinition', 'created Thing', 'created Widget0']);
  });

  it('one or two new CRDs: a field-selected watch each', async () => {
    const { client, watches } = fakeCluster({});
    await applyObjects(client, widgets.slice(0, 2).flat(), opts);
    expect(watches.sort()).toEqual([`metadata.name=widget0s.${GROUP}`, `metadata.name=widget1s.${GROUP}`]);
  });

  it('writes the custom resources of a new CRD once its names are accepted, before it is Established (5 s later with several apiservers); the apply ends once the CRDs are', async () => {
    // one CRD: a field-selected watch; three: the shared watch of all CRDs
    for (const set of [[thing, cm, crd], widgets.flat()]) {
      const establishing = gate();
      const { client, log } = fakeCluster({}, new Set(), false, establishing);
      let ended = false;
      const done = applyObjects(client, set, opts).then((r) => ((ended = true), r));
      const written = set.filter((o) => o.kind !== 'CustomResourceDefinition').map((o) => `end ${o.kind}`);
      await vi.waitFor(() => expect(log).toEqual(expect.arrayContaining(written)));
      await settle();
      expect(log.filter((l) => l.startsWith('established'))).toEqual([]);
      expect(ended).toBe(false);
      establishing.open();
      const results = await done;
      expect(log.filter((l) => l.startsWith('established'))).toHaveLength(set.length - written.length);
      expect(results.every((r) => r.action === 'created')).toBe(true);
    }
  });

  it('writes the first custom resource of a new CRD alone: an endpoint the apiserver does not serve yet costs one retried write, not one per object', async () => {
    const { client, log } = fakeCluster({}, new Set(), false, undefined, 1);
    const things = [1, 2, 3].map((i): KubeObject => ({ ...thing, metadata: { name: `t${i}`, namespace: 'app' } }));
    const results = await applyObjects(client, [crd, ...things], opts);
    expect(log.filter((l) => l.endsWith(' Thing'))).toEqual(['404 Thing', 'start Thing', 'end Thing', 'start Thing', 'start Thing', 'end Thing', 'end Thing']);
    expect(results.map((r) => `${r.action} ${r.ref.kind}`)).toEqual(['created CustomResourceDefinition', 'created Thing', 'created Thing', 'created Thing']);
  });

  it('a CRD whose names are not accepted fails the apply with the apiserver\'s reason; the custom resources of the others are written', async () => {
    const { client, log } = fakeCluster({}, new Set([`widget1s.${GROUP}`]));
    await expect(applyObjects(client, widgets.flat(), opts)).rejects.toThrow(`CRD not established: CustomResourceDefinition widget1s.${GROUP}: names not accepted: the kind is already used by another CRD`);
    expect(log).toContain('end Widget0');
    expect(log).not.toContain('start Widget1');
  });
});

describe('watchCrds', () => {
  const never = { watch: (_a: string, _k: string, o: { signal?: AbortSignal }) => new Promise<void>((_r, reject) => o.signal?.addEventListener('abort', () => reject(o.signal?.reason))) } as unknown as KubeClient;

  it('gives up at the deadline, naming the CRD and its last state', async () => {
    const m = watchCrds(never, ['a.x', 'b.x'], Date.now() + 100);
    await expect(m.get('a.x')?.served).rejects.toThrow('CRD not established: timed out after 0s waiting for readiness; not ready: CustomResourceDefinition a.x: not created yet');
    await expect(m.get('b.x')?.established).rejects.toThrow(/CustomResourceDefinition b\.x/);
  });

  it('says when a CRD\'s names are accepted (its kinds are served) and, apart, when it is Established', async () => {
    const crdOf = (conditions: { type: string; status: string }[]): KubeObject => ({ ...crd, metadata: { name: 'a.x', resourceVersion: '1' }, status: { conditions } });
    const states = [crdOf([]), crdOf([{ type: 'NamesAccepted', status: 'True' }, { type: 'Established', status: 'False' }]), crdOf([{ type: 'NamesAccepted', status: 'True' }, { type: 'Established', status: 'True' }])];
    let step: (() => void) | undefined;
    const stepped = { watch: async (_a: string, _k: string, o: { fieldSelector?: string }, onEvent: (e: WatchEvent, state: Map<string, KubeObject>) => boolean) => {
      expect(o.fieldSelector).toBe('metadata.name=a.x');
      for (const object of states) {
        await new Promise<void>((r) => (step = r));
        if (onEvent({ type: 'MODIFIED', object } as WatchEvent, new Map([['a.x', object]]))) return;
      }
    } } as unknown as KubeClient;
    const w = watchCrds(stepped, ['a.x'], Date.now() + 60_000).get('a.x');
    let served = false;
    let established = false;
    void w?.served.then(() => (served = true));
    void w?.established.then(() => (established = true));
    const next = async (): Promise<void> => {
      await vi.waitFor(() => expect(step).toBeDefined());
      const s = step;
      step = undefined;
      s?.();
      await settle();
    };
    await next(); // no conditions yet
    expect([served, established]).toEqual([false, false]);
    await next(); // names accepted
    expect([served, established]).toEqual([true, false]);
    await next(); // Established
    expect([served, established]).toEqual([true, true]);
  });

  it('names what it still waits for at the deadline when the names were accepted but the CRD is never Established', async () => {
    const installing: KubeObject = { ...crd, metadata: { name: 'a.x' }, status: { conditions: [{ type: 'NamesAccepted', status: 'True' }, { type: 'Established', status: 'False' }] } };
    const stuck = { watch: (_a: string, _k: string, o: { signal?: AbortSignal }, onEvent: (e: WatchEvent, state: Map<string, KubeObject>) => boolean) => {
      onEvent({ type: 'MODIFIED', object: installing } as WatchEvent, new Map([['a.x', installing]]));
      return new Promise<void>((_r, reject) => o.signal?.addEventListener('abort', () => reject(o.signal?.reason)));
    } } as unknown as KubeClient;
    const w = watchCrds(stuck, ['a.x'], Date.now() + 100).get('a.x');
    await expect(w?.served).resolves.toMatchObject({ metadata: { name: 'a.x' } });
    await expect(w?.established).rejects.toThrow('CRD not established: timed out after 0s waiting for readiness; not ready: CustomResourceDefinition a.x: names accepted, not established yet');
  });

  it('stops with the run when it is interrupted', async () => {
    const ac = new AbortController();
    const m = watchCrds(never, ['a.x'], Date.now() + 60_000, ac.signal);
    ac.abort(new Error('interrupted'));
    await expect(m.get('a.x')?.served).rejects.toThrow('interrupted');
  });
});

describe('smallCrdsFirst', () => {
  it('starts the writes of small CRDs before large ones (stable among equals), other kinds after, in their order', () => {
    const big: KubeObject = { ...crd, metadata: { name: `big.${GROUP}` }, spec: { ...(crd.spec as object), versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, { type: 'string' }])) } } }] } };
    const small1: KubeObject = { ...crd, metadata: { name: `s1.${GROUP}` } };
    const small2: KubeObject = { ...crd, metadata: { name: `s2.${GROUP}` } };
    const order = smallCrdsFirst([big, cm, small1, small2].map((o) => [o.metadata.name, o]));
    expect(order.map(([n]) => n)).toEqual([`s1.${GROUP}`, `s2.${GROUP}`, `big.${GROUP}`, 'cfg']);
    // nothing to reorder with fewer than two CRDs
    const one: [string | undefined, KubeObject][] = [cm, big].map((o) => [o.metadata.name, o]);
    expect(smallCrdsFirst(one)).toBe(one);
  });
});

// What a failed apply wrote (issue 51 item 3): `onWritten` hears of every write the cluster
// answered, and a set that fails throws only once the writes in flight beside the failing one are
// answered — so the failed task knows every change it made. A FAKE client refuses one object and
// holds another's write until the test lets it go (the sandbox test, failed-writes.test.ts,
// refuses objects on a real apiserver).
import { describe, expect, it } from 'vitest';
import { applyObjects, deleteObjects, type ObjectResult } from '../../src/k8s/apply/index.js';
import { KubeApiError } from '../../src/k8s/errors.js';
import type { KubeClient, KubeObject, ObjectRef, ResourceInfo } from '../../src/k8s/types.js';

const KINDS: Record<string, [string, boolean]> = { Namespace: ['namespaces', false], ConfigMap: ['configmaps', true], Deployment: ['deployments', true] };
const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } };
const cm = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'app' }, data: { a: '1' } });
const deploy: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'app' }, spec: { replicas: 1 } };

/** A cluster where nothing exists: writes of `refused` names fail (422), of `held` wait for `release`. */
function fakeCluster(refused: ReadonlySet<string>, held?: Promise<void>, existing: KubeObject[] = []): { client: KubeClient; log: string[] } {
  const log: string[] = [];
  const info = (apiVersion: string, kind: string): ResourceInfo => {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    const k = KINDS[kind];
    if (!k) throw new Error(`test: unknown kind ${kind}`);
    return { group: group ?? '', version: version ?? '', kind, resource: k[0], namespaced: k[1], verbs: ['get', 'list', 'watch', 'patch', 'delete'] };
  };
  const client = {
    name: 'fake',
    server: 'https://fake',
    serverVersion: 'v1.34.4',
    resource: (apiVersion: string, kind: string) => Promise.resolve(info(apiVersion, kind)),
    invalidateDiscovery: () => undefined,
    learnKinds: () => undefined,
    get: (ref: ObjectRef) => Promise.resolve(existing.find((o) => o.kind === ref.kind && o.metadata.name === ref.name)),
    list: (_apiVersion: string, kind: string) => Promise.resolve({ items: existing.filter((o) => o.kind === kind), resourceVersion: '1' }),
    apply: async (obj: KubeObject) => {
      const name = obj.metadata.name ?? '';
      if (refused.has(name)) {
        log.push(`refused ${name}`);
        throw new KubeApiError(422, 'Invalid', `${obj.kind} "${name}" is invalid`, 'PATCH', `/x/${name}`, 'fake');
      }
      if (name === 'slow') await held;
      log.push(`wrote ${name}`);
      return { ...obj, metadata: { ...obj.metadata, uid: `uid-${name}`, resourceVersion: '2' } };
    },
    delete: async (ref: ObjectRef) => {
      if (refused.has(ref.name)) throw new KubeApiError(500, 'InternalError', 'webhook timed out', 'DELETE', `/x/${ref.name}`, 'fake');
      if (ref.name === 'slow') await held;
      log.push(`deleted ${ref.name}`);
      return true;
    },
  } as unknown as KubeClient;
  return { client, log };
}

const opts = { fieldManager: 'kplay', force: false, defaultNamespace: 'default', checkMode: false };
const names = (rs: readonly ObjectResult[]): string[] => rs.map((r) => `${r.action} ${r.ref.kind} ${r.ref.name}`);

describe('a set that fails part-way', () => {
  it('tells onWritten of each object written before a later group failed, then throws the failure', async () => {
    const { client } = fakeCluster(new Set(['web']));
    const written: ObjectResult[] = [];
    await expect(applyObjects(client, [deploy, cm('cfg'), ns], { ...opts, onWritten: (r) => written.push(r) })).rejects.toThrow(/Deployment "web" is invalid/);
    expect(names(written)).toEqual(['created Namespace app', 'created ConfigMap cfg']);
  });

  it('throws only once the writes beside the failing one are answered, and counts them', async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((r) => (release = r));
    const { client, log } = fakeCluster(new Set(['bad']), held);
    const written: ObjectResult[] = [];
    let settled = false;
    const done = applyObjects(client, [cm('slow'), cm('bad')], { ...opts, onWritten: (r) => written.push(r) }).finally(() => (settled = true));
    done.catch(() => undefined);
    // the refusal is in, the other write is still under way: the apply has not ended
    await expect.poll(() => log).toContain('refused bad');
    expect(settled).toBe(false);
    release();
    await expect(done).rejects.toThrow(/ConfigMap "bad" is invalid/);
    expect(names(written)).toEqual(['created ConfigMap slow']);
  });

  it('deleting: the objects deleted before one failed are told, the others answered first', async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((r) => (release = r));
    const live = [cm('slow'), cm('bad')].map((o) => ({ ...o, metadata: { ...o.metadata, uid: 'u', resourceVersion: '1' } }));
    const { client } = fakeCluster(new Set(['bad']), held, live);
    const written: ObjectResult[] = [];
    const done = deleteObjects(client, [cm('slow'), cm('bad')], { defaultNamespace: 'app', checkMode: false, onWritten: (r) => written.push(r) });
    done.catch(() => undefined);
    release();
    await expect(done).rejects.toThrow(/webhook timed out/);
    expect(names(written)).toEqual(['deleted ConfigMap slow']);
  });
});

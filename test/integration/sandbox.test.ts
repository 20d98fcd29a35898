// Checks that the local sandbox behaves like a real cluster: controllers,
// scheduler and kwok roll out workloads, Helm works, CRDs, RBAC and
// server-side apply conflicts are enforced by the real kube-apiserver.
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiException,
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  VersionApi,
  type V1Deployment,
} from '@kubernetes/client-node';
import { auditSnapshot, helm, kubectl, sandboxEnv, SANDBOX_ADMIN_USER, type SandboxEnv } from '../sandbox/env.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const chart = (v: string): string => path.resolve(repoRoot, 'playbooks/charts', `webapp-${v}`);
const suffix = randomBytes(3).toString('hex');

let env: SandboxEnv;
const kubeConfigs = new Map<string, KubeConfig>();

function kc(context: string): KubeConfig {
  let k = kubeConfigs.get(context);
  if (!k) {
    k = new KubeConfig();
    k.loadFromFile(env.kubeconfig);
    k.setCurrentContext(context);
    kubeConfigs.set(context, k);
  }
  return k;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function eventually<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = undefined;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    }
    await sleep(250);
  }
}

function errorCode(err: unknown): number | undefined {
  if (err instanceof ApiException) return err.code;
  return undefined;
}

/** The server's Status message of a failed request (falls back to the raw body). */
function errorBody(err: unknown): string {
  if (err instanceof ApiException) {
    const body: unknown = err.body;
    let parsed: unknown = body;
    if (typeof body === 'string') {
      try {
        parsed = JSON.parse(body);
      } catch {
        return body;
      }
    }
    if (typeof parsed === 'object' && parsed !== null && 'message' in parsed && typeof parsed.message === 'string') return parsed.message;
    return typeof body === 'string' ? body : JSON.stringify(body);
  }
  return err instanceof Error ? err.message : String(err);
}

function isAvailable(d: V1Deployment, replicas: number): boolean {
  const available = (d.status?.conditions ?? []).find((c) => c.type === 'Available');
  return (
    available?.status === 'True' &&
    d.status?.observedGeneration === d.metadata?.generation &&
    d.status?.readyReplicas === replicas &&
    d.status?.availableReplicas === replicas &&
    d.status?.updatedReplicas === replicas &&
    (d.status?.replicas ?? 0) === replicas
  );
}

beforeAll(() => {
  env = sandboxEnv();
});

describe('sandbox', () => {
  it('has three clusters and every one reports /version v1.34.4', async () => {
    expect(env.clusters.length).toBeGreaterThanOrEqual(3);
    for (const c of env.clusters) {
      const v = await kc(c.context).makeApiClient(VersionApi).getCode();
      expect(v.gitVersion, c.name).toBe('v1.34.4');
      expect(v.major).toBe('1');
      expect(v.minor).toBe('34');
    }
    // clusters are separate: an object in one is not visible in another
    const ns = `sbx-iso-${suffix}`;
    await kc('sandbox-2').makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: ns } } });
    try {
      await expect(kc('sandbox-3').makeApiClient(CoreV1Api).readNamespace({ name: ns })).rejects.toSatisfy((e: unknown) => errorCode(e) === 404);
      const out = await kubectl(['get', 'namespace', ns, '-o', 'jsonpath={.metadata.name}'], { context: 'sandbox-2' });
      expect(out.stdout).toBe(ns);
    } finally {
      await kc('sandbox-2').makeApiClient(CoreV1Api).deleteNamespace({ name: ns });
    }
  });

  describe('Deployment rollout on kwok nodes', () => {
    const ns = `sbx-deploy-${suffix}`;
    const core = (): CoreV1Api => kc('sandbox-1').makeApiClient(CoreV1Api);
    const apps = (): AppsV1Api => kc('sandbox-1').makeApiClient(AppsV1Api);

    afterAll(async () => {
      await core().deleteNamespace({ name: ns }).catch(() => undefined);
    });

    async function waitAvailable(replicas: number): Promise<V1Deployment> {
      return eventually(`deployment web available with ${replicas} ready replicas`, async () => {
        const d = await apps().readNamespacedDeployment({ name: 'web', namespace: ns });
        return isAvailable(d, replicas) ? d : undefined;
      }, 60_000);
    }

    async function podsOf(): Promise<{ name: string; phase?: string; ready: boolean; node?: string; terminating: boolean }[]> {
      const pods = await core().listNamespacedPod({ namespace: ns, labelSelector: 'app=web' });
      return pods.items.map((p) => ({
        name: p.metadata?.name ?? '',
        phase: p.status?.phase,
        ready: (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
        node: p.spec?.nodeName,
        terminating: p.metadata?.deletionTimestamp !== undefined,
      }));
    }

    it('creates ReplicaSet and 3 Ready pods and becomes Available within 60 s', async () => {
      const audit = auditSnapshot(env.cluster('sandbox-1').auditLog);
      await core().createNamespace({ body: { metadata: { name: ns } } });
      await apps().createNamespacedDeployment({
        namespace: ns,
        body: {
          metadata: { name: 'web', labels: { app: 'web' } },
          spec: {
            replicas: 3,
            selector: { matchLabels: { app: 'web' } },
            template: {
              metadata: { labels: { app: 'web' } },
              spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] },
            },
          },
        },
      });
      const started = Date.now();
      const d = await waitAvailable(3);
      expect(Date.now() - started).toBeLessThan(60_000);
      expect(d.status?.readyReplicas).toBe(3);

      const rs = await apps().listNamespacedReplicaSet({ namespace: ns });
      expect(rs.items).toHaveLength(1);
      expect(rs.items[0]?.metadata?.ownerReferences?.[0]?.name).toBe('web');
      expect(rs.items[0]?.status?.readyReplicas).toBe(3);

      const pods = await podsOf();
      expect(pods).toHaveLength(3);
      for (const p of pods) {
        expect(p.phase).toBe('Running');
        expect(p.ready).toBe(true);
        expect(p.node).toBe(env.cluster('sandbox-1').nodeName);
      }

      // the audit log recorded our writes (and the controllers' ones)
      await audit.settle();
      expect(audit.count({ user: SANDBOX_ADMIN_USER, resource: 'namespaces', verbs: ['create'] })).toBe(1);
      expect(audit.count({ user: SANDBOX_ADMIN_USER, namespace: ns, resource: 'deployments', verbs: ['create'] })).toBe(1);
      expect(audit.count({ user: /^system:serviceaccount:kube-system:replicaset-controller$/, namespace: ns, resource: 'pods', verbs: ['create'] })).toBe(3);
      expect(audit.count({ namespace: ns, verbs: ['get', 'list'] })).toBe(0);
    });

    it('scales to 5 and back to 3', async () => {
      await apps().replaceNamespacedDeploymentScale({ name: 'web', namespace: ns, body: { metadata: { name: 'web', namespace: ns }, spec: { replicas: 5 } } });
      await waitAvailable(5);
      expect((await podsOf()).filter((p) => p.ready && !p.terminating)).toHaveLength(5);

      await apps().replaceNamespacedDeploymentScale({ name: 'web', namespace: ns, body: { metadata: { name: 'web', namespace: ns }, spec: { replicas: 3 } } });
      await waitAvailable(3);
      // surplus pods are deleted (kwok completes the deletion)
      await eventually('3 pods left', async () => ((await podsOf()).length === 3 ? true : undefined), 60_000);
    });
  });

  describe('helm', () => {
    const ns = `sbx-helm-${suffix}`;
    afterAll(async () => {
      await helm(['uninstall', 'webapp', '-n', ns], { check: false });
      await kc('sandbox-1').makeApiClient(CoreV1Api).deleteNamespace({ name: ns }).catch(() => undefined);
    });

    it('installs the webapp chart 1.0.0 and upgrades to 1.1.0 with a new rollout', async () => {
      const apps = kc('sandbox-1').makeApiClient(AppsV1Api);
      await helm(['install', 'webapp', chart('1.0.0'), '-n', ns, '--create-namespace', '--wait', '--timeout', '120s']);
      const before = await apps.readNamespacedDeployment({ name: 'webapp', namespace: ns });
      expect(before.spec?.template.spec?.containers[0]?.image).toBe('ghcr.io/stefanprodan/podinfo:6.13.0');
      expect(isAvailable(before, 1)).toBe(true);
      const rsBefore = (await apps.listNamespacedReplicaSet({ namespace: ns })).items.map((r) => r.metadata?.name);
      expect(rsBefore).toHaveLength(1);

      await helm(['upgrade', 'webapp', chart('1.1.0'), '-n', ns, '--wait', '--timeout', '120s']);
      const after = await eventually('webapp rolled out', async () => {
        const d = await apps.readNamespacedDeployment({ name: 'webapp', namespace: ns });
        return isAvailable(d, 1) ? d : undefined;
      });
      expect(after.spec?.template.spec?.containers[0]?.image).toBe('ghcr.io/stefanprodan/podinfo:6.14.1');
      expect(after.metadata?.generation).toBeGreaterThan(before.metadata?.generation ?? 0);
      const rsAfter = (await apps.listNamespacedReplicaSet({ namespace: ns })).items;
      expect(rsAfter).toHaveLength(2);
      const current = rsAfter.find((r) => !rsBefore.includes(r.metadata?.name));
      expect(current?.spec?.template?.spec?.containers[0]?.image).toBe('ghcr.io/stefanprodan/podinfo:6.14.1');
      expect(current?.status?.readyReplicas).toBe(1);

      const history = await helm(['history', 'webapp', '-n', ns, '-o', 'json']);
      const revisions: unknown = JSON.parse(history.stdout);
      expect(Array.isArray(revisions) ? revisions.length : 0).toBe(2);
    });
  });

  it('establishes a CRD and serves its custom resources', async () => {
    const group = 'sandbox.kplay.test';
    const plural = `widgets${suffix}`;
    const crdName = `${plural}.${group}`;
    const ext = kc('sandbox-1').makeApiClient(ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: crdName },
        spec: {
          group,
          scope: 'Namespaced',
          names: { plural, singular: `widget${suffix}`, kind: `Widget${suffix}`, listKind: `Widget${suffix}List` },
          versions: [{
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } },
          }],
        },
      },
    });
    try {
      await eventually('CRD Established', async () => {
        const crd = await ext.readCustomResourceDefinition({ name: crdName });
        return (crd.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
      }, 30_000);
      const custom = kc('sandbox-1').makeApiClient(CustomObjectsApi);
      // discovery may lag a moment behind Established
      await eventually('custom resource created', async () => {
        await custom.createNamespacedCustomObject({
          group, version: 'v1', namespace: 'default', plural,
          body: { apiVersion: `${group}/v1`, kind: `Widget${suffix}`, metadata: { name: 'w1' }, spec: { size: 3 } },
        });
        return true;
      }, 30_000);
      const got: unknown = await custom.getNamespacedCustomObject({ group, version: 'v1', namespace: 'default', plural, name: 'w1' });
      expect(got).toMatchObject({ metadata: { name: 'w1' }, spec: { size: 3 } });
      // schema is enforced by the server
      await expect(custom.createNamespacedCustomObject({
        group, version: 'v1', namespace: 'default', plural,
        body: { apiVersion: `${group}/v1`, kind: `Widget${suffix}`, metadata: { name: 'w2' }, spec: { size: 'big' } },
      })).rejects.toSatisfy((e: unknown) => errorCode(e) === 422);
    } finally {
      await ext.deleteCustomResourceDefinition({ name: crdName });
    }
  });

  it('RBAC denies the unprivileged dev user (403) but allows the admin', async () => {
    for (const c of env.clusters) {
      const dev = kc(c.devContext).makeApiClient(CoreV1Api);
      const err: unknown = await dev.listNamespacedPod({ namespace: 'default' }).then(() => undefined, (e: unknown) => e);
      expect(errorCode(err), c.name).toBe(403);
      expect(errorBody(err)).toContain('User "dev-user" cannot list resource "pods"');
      const created: unknown = await dev.createNamespace({ body: { metadata: { name: `sbx-dev-${suffix}` } } }).then(() => undefined, (e: unknown) => e);
      expect(errorCode(created)).toBe(403);
      const admin = await kc(c.context).makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'default' });
      expect(Array.isArray(admin.items)).toBe(true);
    }
    const canI = await kubectl(['auth', 'can-i', 'list', 'pods', '-n', 'default'], { context: 'sandbox-1-dev', check: false });
    expect(canI.stdout.trim()).toBe('no');
  });

  it('reports a server-side apply conflict between two field managers (409)', async () => {
    const ns = 'default';
    const name = `sbx-ssa-${suffix}`;
    const objects = KubernetesObjectApi.makeApiClient(kc('sandbox-1'));
    const cm = (value: string): { apiVersion: string; kind: string; metadata: { name: string; namespace: string }; data: Record<string, string> } => ({
      apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { color: value },
    });
    try {
      await objects.patch(cm('blue'), undefined, undefined, 'manager-a', false, PatchStrategy.ServerSideApply);
      const err: unknown = await objects
        .patch(cm('red'), undefined, undefined, 'manager-b', false, PatchStrategy.ServerSideApply)
        .then(() => undefined, (e: unknown) => e);
      expect(errorCode(err)).toBe(409);
      expect(errorBody(err)).toContain('manager-a');
      expect(errorBody(err)).toContain('.data.color');
      // forcing takes ownership
      await objects.patch(cm('red'), undefined, undefined, 'manager-b', true, PatchStrategy.ServerSideApply);
      const got = await kc('sandbox-1').makeApiClient(CoreV1Api).readNamespacedConfigMap({ name, namespace: ns });
      expect(got.data?.color).toBe('red');
    } finally {
      await kc('sandbox-1').makeApiClient(CoreV1Api).deleteNamespacedConfigMap({ name, namespace: ns }).catch(() => undefined);
    }
  });
});

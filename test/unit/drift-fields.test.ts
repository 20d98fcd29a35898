// Field ownership and drift rules on managedFields shapes copied from a real kube-apiserver 1.34
// (kubectl set env / label / scale / rollout restart on an object kplay applied).
import { describe, expect, it } from 'vitest';
import { fieldAdditions, formatPath, ownersOf, parseFieldPath, pointerOf, sortForRemoval, withoutFields } from '../../src/k8s/fields.js';
import { hidingRule, managerKind, parseDriftRules, pathMatches } from '../../src/k8s/drift.js';
import type { KubeClient, KubeObject } from '../../src/k8s/types.js';
import { removeAdditions, REMOVE_ATTEMPTS } from '../../src/k8s/apply/index.js';
import { KubeApiError } from '../../src/k8s/errors.js';

const live: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'shop',
    labels: { app: 'web', handedit: 'yes' },
    annotations: { note: 'x', 'deployment.kubernetes.io/revision': '3' },
    managedFields: [
      { manager: 'kplay', operation: 'Apply', time: '2026-11-23T13:39:39Z', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:selector': {}, 'f:template': { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } } } } } } } } },
      { manager: 'kubectl', operation: 'Update', subresource: 'scale', fieldsV1: { 'f:spec': { 'f:replicas': {} } } },
      { manager: 'kubectl-annotate', operation: 'Update', time: '2026-11-23T13:39:40Z', fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:note': {} } } } },
      { manager: 'kubectl-label', operation: 'Update', time: '2026-11-23T13:39:41Z', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:handedit': {} } } } },
      { manager: 'kubectl-rollout', operation: 'Update', time: '2026-11-23T13:39:42Z', fieldsV1: { 'f:spec': { 'f:template': { 'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/restartedAt': {} } } } } } },
      { manager: 'kubectl-set', operation: 'Update', time: '2026-11-23T13:39:43Z', fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"web"}': { 'f:env': { '.': {}, 'k:{"name":"FOO"}': { '.': {}, 'f:name': {}, 'f:value': {} } } } } } } } } },
      { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status', time: '2026-11-23T13:39:44Z', fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:deployment.kubernetes.io/revision': {} } }, 'f:status': { 'f:replicas': {} } } },
    ],
  },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' }, annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-23T13:39:42Z' } },
      spec: { containers: [{ name: 'web', image: 'nginx:1', ports: [{ containerPort: 80, protocol: 'TCP' }], env: [{ name: 'FOO', value: 'bar' }] }] },
    },
  },
  status: { replicas: 3 },
};
const desired: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } }, spec: { replicas: 2 } };

describe('fieldAdditions', () => {
  const adds = fieldAdditions(live, ['kplay'], desired);
  it('finds each field another manager added, map keys and list items one by one, with the manager', () => {
    expect(adds.map((a) => [a.path, a.manager, a.time])).toEqual([
      ['.metadata.annotations.note', 'kubectl-annotate', '2026-11-23T13:39:40Z'],
      ['.metadata.labels.handedit', 'kubectl-label', '2026-11-23T13:39:41Z'],
      ['.spec.template.metadata.annotations["kubectl.kubernetes.io/restartedAt"]', 'kubectl-rollout', '2026-11-23T13:39:42Z'],
      ['.spec.template.spec.containers[name=web].env[name=FOO]', 'kubectl-set', '2026-11-23T13:39:43Z'],
    ]);
  });
  it('leaves out status writes and fields the desired object sets (a changed value, not an addition)', () => {
    expect(adds.map((a) => a.path)).not.toContain('.spec.replicas');
    expect(adds.some((a) => a.path.includes('revision'))).toBe(false);
  });
  it('gives nothing when every writer is an own manager, or when the own manager never wrote the object', () => {
    expect(fieldAdditions(live, ['kplay', 'kubectl', 'kubectl-annotate', 'kubectl-label', 'kubectl-rollout', 'kubectl-set'])).toEqual([]);
    const noKplay = structuredClone(live);
    noKplay.metadata.managedFields = (noKplay.metadata.managedFields as { manager: string }[]).filter((e) => e.manager !== 'kplay');
    expect(fieldAdditions(noKplay, ['helm'])).toEqual([]);
  });
  it('never counts what kplay itself wrote under another field manager (kplay-*: other tasks, community modules)', () => {
    const withModule = structuredClone(live);
    (withModule.metadata.managedFields as unknown[]).push({ manager: 'kplay-config-checksum', operation: 'Apply', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:handedit': {} } } } });
    const paths = fieldAdditions(withModule, ['kplay'], desired).map((a) => a.path);
    expect(paths).not.toContain('.metadata.labels.handedit'); // kplay-config-checksum owns it too
    expect(paths).toContain('.metadata.annotations.note');
  });
  it('removes them: pointers resolve list items by key, removal leaves no empty lists/maps', () => {
    const env = adds.find((a) => a.manager === 'kubectl-set');
    expect(pointerOf(live, env?.segments ?? [])).toBe('/spec/template/spec/containers/0/env/0');
    const stripped = withoutFields(live, adds.map((a) => a.segments));
    expect(stripped.metadata.labels).toEqual({ app: 'web' });
    expect(stripped.spec).toMatchObject({ template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1', ports: [{ containerPort: 80, protocol: 'TCP' }] }] } } });
    expect((stripped.spec as { template: { metadata: Record<string, unknown> } }).template.metadata.annotations).toBeUndefined();
    expect(live.metadata.labels?.handedit).toBe('yes'); // the input is not modified
  });
  it('orders removals so list indexes stay valid', () => {
    expect(sortForRemoval(['/a/1', '/a/3', '/b', '/a/3/x'])).toEqual(['/a/3/x', '/a/3', '/a/1', '/b']);
  });
});

describe('ownersOf and paths', () => {
  it('names the manager owning a changed field, by list index or key', () => {
    expect(ownersOf(live, parseFieldPath('spec.replicas')).map((o) => [o.manager, o.subresource])).toEqual([['kubectl', 'scale']]);
    expect(ownersOf(live, parseFieldPath('spec.template.spec.containers[0].image')).map((o) => o.manager)).toEqual(['kplay']);
    expect(ownersOf(live, parseFieldPath('.spec.selector.matchLabels.app')).map((o) => o.manager)).toEqual(['kplay']); // atomic parent
  });
  it('round-trips display paths', () => {
    for (const p of ['.metadata.labels.handedit', '.metadata.annotations["a.b/c"]', '.spec.template.spec.containers[name=web].env[name=FOO]', '.spec.ports[containerPort=80,protocol=TCP]', '.items[2]']) {
      expect(formatPath(parseFieldPath(p))).toBe(p);
    }
  });
});

describe('rules', () => {
  const ref = { kind: 'Deployment', name: 'web', namespace: 'shop' };
  it('classifies managers: kubectl and unknown tools are people, controller names are controllers', () => {
    for (const m of ['kubectl', 'kubectl-edit', 'kubectl-client-side-apply', 'curl', 'my-script']) expect(managerKind(m)).toBe('person');
    for (const m of ['kube-controller-manager', 'hpa-controller', 'manager', 'linkerd-proxy-injector', 'prometheus-operator', 'cluster-autoscaler']) expect(managerKind(m)).toBe('controller');
  });
  it('matches paths by prefix, with [*] for any list item', () => {
    expect(pathMatches('.metadata.labels', '.metadata.labels.team')).toBe(true);
    expect(pathMatches('.metadata.label', '.metadata.labels.team')).toBe(false);
    expect(pathMatches('.spec.template.spec.containers[*].env', '.spec.template.spec.containers[name=web].env[name=FOO]')).toBe(true);
    expect(pathMatches('spec.replicas', '.spec.replicas')).toBe(true);
  });
  it('hides exactly what a rule names, and autoscaler-owned replicas', () => {
    const rules = parseDriftRules([{ kind: 'Deployment', name: 'w*', path: '.metadata.labels.team' }]);
    const team = { path: '.metadata.labels.team', change: 'added' as const, manager: 'kubectl-label', kplay_owns: false };
    expect(hidingRule(ref, team, undefined, rules)).toMatch(/^drift_ignore: kind=Deployment name=w\* path=\.metadata\.labels\.team$/);
    expect(hidingRule(ref, { ...team, path: '.metadata.labels.other' }, undefined, rules)).toBeUndefined();
    expect(hidingRule({ ...ref, name: 'api' }, team, undefined, rules)).toBeUndefined();
    const replicas = { path: '.spec.replicas', change: 'changed' as const, manager: 'kube-controller-manager', kplay_owns: false };
    expect(hidingRule(ref, replicas, { manager: 'kube-controller-manager', operation: 'Update', subresource: 'scale' }, [])).toMatch(/autoscaler/);
    expect(hidingRule(ref, { ...replicas, manager: 'kubectl' }, { manager: 'kubectl', operation: 'Update', subresource: 'scale' }, [])).toBeUndefined();
  });
  it('rejects malformed rules naming the entry', () => {
    expect(() => parseDriftRules({})).toThrow(/drift_ignore must be a list/);
    expect(() => parseDriftRules([{ paht: 'x' }])).toThrow('drift_ignore[0]: unknown key "paht"');
    expect(() => parseDriftRules([{ reason: 'x' }])).toThrow('drift_ignore[0] matches everything');
    expect(() => parseDriftRules([{ kind: 3 }])).toThrow('drift_ignore[0].kind must be a string');
  });
});

describe('removeAdditions', () => {
  // A fault injected on purpose: the object's resourceVersion moves between each read and the
  // patch (a controller writing status), which the sandbox produces only by chance under load.
  const fake = (moves: number): { client: KubeClient; patches: number } => {
    let rv = 10;
    const state = { patches: 0 };
    const obj = (): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n', resourceVersion: String(rv), labels: { hand: 'x' } } });
    const client = {
      get: () => Promise.resolve(obj()),
      jsonPatch: (_ref: unknown, ops: { op: string; path: string; value?: unknown }[]) => {
        state.patches++;
        const test = ops.find((o) => o.op === 'test');
        if (state.patches <= moves) rv++;
        if (test?.value !== String(rv)) return Promise.reject(new KubeApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', 'PATCH', '/api/v1/namespaces/n/configmaps/c', 'c1'));
        return Promise.resolve({ ...obj(), metadata: { ...obj().metadata, labels: {} } });
      },
    } as unknown as KubeClient;
    return { client, get patches() { return state.patches; } };
  };
  const additions = [{ path: '.metadata.labels.hand', segments: [{ field: 'metadata' }, { field: 'labels' }, { field: 'hand' }], manager: 'kubectl-label', operation: 'Update' }];
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'c', namespace: 'n' };

  it('reads the object again while it keeps moving under the patch, as client-go retries conflicts', async () => {
    const f = fake(REMOVE_ATTEMPTS - 1);
    const out = await removeAdditions(f.client, ref, additions);
    expect(out.metadata.labels).toEqual({});
    expect(f.patches).toBe(REMOVE_ATTEMPTS);
  });

  it('gives up with the server error after the last try', async () => {
    const f = fake(REMOVE_ATTEMPTS);
    await expect(removeAdditions(f.client, ref, additions)).rejects.toThrow(/422 Invalid/);
    expect(f.patches).toBe(REMOVE_ATTEMPTS);
  });
});

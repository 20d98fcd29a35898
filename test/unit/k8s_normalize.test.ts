// Pure logic of the k8s layer: normalisation, diff paths, Secret masking, ordering, conflicts, discovery parsing.
import { describe, expect, it } from 'vitest';
import { canonicalJson, changedPaths, diffEntry, maskPair, normalize, sameJson, sameObject, secretValues, SECRET_MARK, SECRET_MARK_CHANGED } from '../../src/k8s/normalize.js';
import { phases, rankOf, sortForApply, sortForDelete } from '../../src/k8s/order.js';
import { ApplyConflictError, parseConflicts } from '../../src/k8s/errors.js';
import { DiscoveryIndex, parseAggregated, parseResourceList } from '../../src/k8s/discovery.js';
import { comparePlan } from '../../src/k8s/object-plan.js';
import { parseManifests } from '../../src/k8s/manifests.js';
import { mergeRecords, pruneRecordOf } from '../../src/k8s/apply/index.js';
import { selectorString } from '../../src/k8s/wait.js';
import type { KubeObject } from '../../src/k8s/types.js';
import { at } from '../helpers/cli.js';

const deploy = (replicas: number, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'ns',
    resourceVersion: String(100 + replicas),
    uid: 'u1',
    generation: replicas,
    creationTimestamp: '2024-01-01T00:00:00Z',
    managedFields: [{ manager: 'kplay' }],
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
  },
  spec: { replicas, template: { spec: { containers: [{ name: 'c', image: 'nginx:1' }] } } },
  status: { readyReplicas: replicas },
  ...extra,
});

describe('normalize', () => {
  it('drops status and server-managed metadata and sorts keys', () => {
    const n = normalize(deploy(3));
    expect(n.status).toBeUndefined();
    expect(n.metadata).toEqual({ name: 'web', namespace: 'ns' });
    expect(Object.keys(n)).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
  });
  it('equal objects modulo noise compare equal; a spec change does not', () => {
    const a = deploy(3);
    const b = { ...deploy(3), metadata: { ...deploy(3).metadata, resourceVersion: '999', managedFields: [] }, status: { readyReplicas: 0 } };
    expect(sameObject(normalize(a), normalize(b))).toBe(true);
    expect(sameObject(normalize(a), normalize(deploy(5)))).toBe(false);
  });
  it('lists changed field paths', () => {
    const b = deploy(5);
    at((b.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers, 0).image = 'nginx:2';
    expect(changedPaths(normalize(deploy(3)), normalize(b))).toEqual(['spec.replicas', 'spec.template.spec.containers[0].image']);
  });
});

describe('Secret masking', () => {
  const secret = (pw: string, other = 'same-value'): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', namespace: 'ns' },
    data: { password: Buffer.from(pw).toString('base64'), other: Buffer.from(other).toString('base64') },
  });
  it('never shows values, marks changed keys', () => {
    const before = secret('old-Secret-1');
    const after = secret('new-Secret-2');
    const m = maskPair(before, after);
    expect(m.before?.data).toEqual({ password: SECRET_MARK, other: SECRET_MARK });
    expect(m.after?.data).toEqual({ password: SECRET_MARK_CHANGED, other: SECRET_MARK });
    const d = diffEntry('Secret ns/s', m.before, m.after);
    for (const leak of ['old-Secret-1', 'new-Secret-2', Buffer.from('old-Secret-1').toString('base64'), Buffer.from('new-Secret-2').toString('base64'), 'same-value']) {
      expect(d.before + d.after).not.toContain(leak);
    }
  });
  it('diff texts are rendered (and masked) once, when first read, and show in spreads and JSON', () => {
    let masked = 0;
    const mask = (s: string): string => {
      masked++;
      return s.replaceAll('hunter2', '***');
    };
    const cm = (v: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns' }, data: { pw: v } });
    const d = diffEntry('ConfigMap ns/c', cm('old'), cm('hunter2'), mask);
    expect(masked).toBe(0);
    expect(d.label).toBe('ConfigMap ns/c');
    expect(masked).toBe(0);
    expect(d.after).toContain('pw: ***');
    expect(d.before).toContain('pw: old');
    expect(masked).toBe(2);
    expect({ ...d, label: 'x' }).toEqual({ label: 'x', before: d.before, after: d.after });
    expect(JSON.parse(JSON.stringify(d))).toEqual({ label: 'ConfigMap ns/c', before: d.before, after: d.after });
    expect(masked).toBe(2);
    expect(diffEntry('gone', cm('x'), undefined).after).toBe('');
  });
  it('comparePlan detects a value change even though both sides are masked', () => {
    const p = comparePlan({ apiVersion: 'v1', kind: 'Secret', name: 's', namespace: 'ns' }, secret('a-value-1'), secret('a-value-2'));
    expect(p.action).toBe('update');
    expect(p.changedPaths).toEqual(['data.password']);
    expect(p.diff.after).toContain('(changed)');
    expect(JSON.stringify(p)).not.toContain(Buffer.from('a-value-2').toString('base64'));
  });
  it('collects secret values (decoded and raw, stringData) for the masker', () => {
    const s: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { a: Buffer.from('plain-a').toString('base64') }, stringData: { b: 'plain-b' } };
    expect(secretValues(s).sort()).toEqual([Buffer.from('plain-a').toString('base64'), 'plain-a', 'plain-b'].sort());
    expect(secretValues({ apiVersion: 'v1', kind: 'ConfigMap', metadata: {}, data: { a: 'x' } })).toEqual([]);
  });
});

describe('ordering', () => {
  const o = (apiVersion: string, kind: string, name = kind): KubeObject => ({ apiVersion, kind, metadata: { name } });
  it('orders like kapp and deletes in reverse', () => {
    const objs = [o('example.com/v1', 'Widget'), o('apps/v1', 'Deployment'), o('v1', 'Service'), o('v1', 'ConfigMap'), o('apiextensions.k8s.io/v1', 'CustomResourceDefinition'), o('rbac.authorization.k8s.io/v1', 'Role'), o('v1', 'ServiceAccount'), o('v1', 'Namespace')];
    expect(sortForApply(objs).map((x) => x.kind)).toEqual(['Namespace', 'CustomResourceDefinition', 'Role', 'ServiceAccount', 'ConfigMap', 'Service', 'Deployment', 'Widget']);
    expect(sortForDelete(objs).map((x) => x.kind)[0]).toBe('Widget');
    expect(sortForDelete(objs).map((x) => x.kind).at(-1)).toBe('Namespace');
  });
  it('a custom kind named like a core kind is still a custom resource', () => {
    expect(rankOf('example.com/v1', 'Deployment')).toBe(rankOf('example.com/v1', 'Widget'));
    expect(rankOf('apps/v1', 'Deployment')).toBeLessThan(rankOf('example.com/v1', 'Deployment'));
  });
  it('applies a RuntimeClass before the workloads that name it (admission refuses pods of a missing one)', () => {
    expect(rankOf('node.k8s.io/v1', 'RuntimeClass')).toBeLessThan(rankOf('apps/v1', 'Deployment'));
    expect(rankOf('node.k8s.io/v1', 'RuntimeClass')).toBe(rankOf('scheduling.k8s.io/v1', 'PriorityClass'));
  });
  it('groups phases by rank, stable inside a phase', () => {
    const p = phases([o('v1', 'ConfigMap', 'b'), o('v1', 'Namespace'), o('v1', 'Secret', 'a')].map((obj) => ({ obj })));
    expect(p.map((x) => x.items.map((i) => i.obj.metadata.name))).toEqual([['Namespace'], ['b', 'a']]);
  });
});

describe('conflicts', () => {
  it('parses the 409 Status causes into manager and fields', () => {
    const st = {
      message: 'Apply failed with 2 conflicts: conflict with "kubectl-edit" using apps/v1: .spec.replicas',
      details: {
        causes: [
          { reason: 'FieldManagerConflict', message: 'conflict with "kubectl-edit" using apps/v1', field: '.spec.replicas' },
          { reason: 'FieldManagerConflict', message: 'conflict with "kubectl-edit" using apps/v1', field: '.spec.template.spec.containers[name="c"].image' },
        ],
      },
    };
    const c = parseConflicts(st);
    expect(c.map((x) => [x.manager, x.field])).toEqual([
      ['kubectl-edit', '.spec.replicas'],
      ['kubectl-edit', '.spec.template.spec.containers[name="c"].image'],
    ]);
    const e = new ApplyConflictError('Deployment ns/web', c, 'PATCH', '/apis/apps/v1/namespaces/ns/deployments/web', 'c1', st);
    expect(e.message).toContain('conflict with "kubectl-edit": .spec.replicas, .spec.template');
    expect(e.message).toContain('Deployment ns/web');
    expect(e.message).toContain('force_conflicts: true');
  });
});

describe('discovery parsing', () => {
  it('reads aggregated discovery (core group without a name)', () => {
    const idx = new DiscoveryIndex();
    parseAggregated(
      {
        kind: 'APIGroupDiscoveryList',
        items: [
          { metadata: {}, versions: [{ version: 'v1', resources: [{ resource: 'pods', responseKind: { kind: 'Pod' }, scope: 'Namespaced', verbs: ['get'] }, { resource: 'namespaces', responseKind: { kind: 'Namespace' }, scope: 'Cluster', verbs: ['get'] }] }] },
          { metadata: { name: 'apps' }, versions: [{ version: 'v1', resources: [{ resource: 'deployments', responseKind: { kind: 'Deployment' }, scope: 'Namespaced', verbs: ['patch'] }] }] },
        ],
      },
      idx,
    );
    expect(idx.get('v1', 'Pod')).toMatchObject({ resource: 'pods', namespaced: true, group: '' });
    expect(idx.get('v1', 'Namespace')?.namespaced).toBe(false);
    expect(idx.get('apps/v1', 'Deployment')).toMatchObject({ resource: 'deployments', group: 'apps', verbs: ['patch'] });
    expect(idx.get('apps/v1', 'Pod')).toBeUndefined();
  });
  it('reads a classic APIResourceList, skipping subresources', () => {
    const idx = new DiscoveryIndex();
    parseResourceList({ groupVersion: 'batch/v1', resources: [{ name: 'jobs', kind: 'Job', namespaced: true, verbs: [] }, { name: 'jobs/status', kind: 'Job', namespaced: true, verbs: [] }] }, idx);
    expect(idx.get('batch/v1', 'Job')?.resource).toBe('jobs');
    expect(idx.size).toBe(1);
  });
});

describe('manifests and prune records', () => {
  it('parses multi-document YAML, flattens Lists, skips empty documents, rejects nameless objects', () => {
    const objs = parseManifests('---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: b}}\n', 'x.yaml');
    expect(objs.map((o) => `${o.kind}/${o.metadata.name ?? ''}`)).toEqual(['ConfigMap/a', 'Secret/b']);
    expect(() => parseManifests('apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: a-}\n', 'y.yaml')).toThrow(/no metadata.name/);
    expect(() => parseManifests('kind: ConfigMap\nmetadata: {name: a}\n', 'z.yaml')).toThrow(/missing apiVersion/);
  });
  it('records kinds with namespaces and merges records', () => {
    const rec = pruneRecordOf([
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'b' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'a' } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: {} },
    ]);
    expect(rec).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', namespaces: ['a', 'b'] },
      { apiVersion: 'v1', kind: 'Namespace', namespaces: [] },
    ]);
    expect(mergeRecords(rec, [{ apiVersion: 'v1', kind: 'ConfigMap', namespaces: ['c'] }])[0]?.namespaces).toEqual(['a', 'b', 'c']);
  });
  it('builds label selector strings', () => {
    expect(selectorString({ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }, { key: 'x', operator: 'DoesNotExist' }] })).toBe('app=web,tier in (a,b),!x');
  });
});

describe('isManualEdit: which conflicts are drift to take back', () => {
  const live = (entries: { manager: string; operation: string }[]) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', managedFields: entries } });
  it('kubectl edit/scale/patch (Update) are manual edits', async () => {
    const { isManualEdit } = await import('../../src/k8s/object-plan.js');
    expect(isManualEdit(live([{ manager: 'kubectl', operation: 'Update' }]), 'kubectl')).toBe(true);
    expect(isManualEdit(live([{ manager: 'kubectl-edit', operation: 'Update' }]), 'kubectl-edit')).toBe(true);
  });
  it('appliers and controllers are real conflicts', async () => {
    const { isManualEdit } = await import('../../src/k8s/object-plan.js');
    expect(isManualEdit(live([{ manager: 'kubectl', operation: 'Apply' }]), 'kubectl')).toBe(false);
    expect(isManualEdit(live([{ manager: 'kubectl', operation: 'Update' }, { manager: 'kubectl', operation: 'Apply' }]), 'kubectl')).toBe(false);
    expect(isManualEdit(live([{ manager: 'kube-controller-manager', operation: 'Update' }]), 'kube-controller-manager')).toBe(false);
    expect(isManualEdit(live([{ manager: 'kubectl-client-side-apply', operation: 'Update' }]), 'kubectl-client-side-apply')).toBe(false);
    expect(isManualEdit(undefined, 'kubectl')).toBe(false);
  });
});

describe('sameJson', () => {
  // A small seeded generator of JSON-like values with the edges JSON has: undefined properties
  // and list items, NaN/Infinity, -0, key order, nested lists and maps.
  function rng(seed: number): () => number {
    let s = seed >>> 0;
    return () => {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      return s / 2 ** 32;
    };
  }
  const LEAVES: unknown[] = [null, undefined, 0, -0, 1, 1.5, NaN, Infinity, '', '0', 'a', true, false, 'null'];
  function value(r: () => number, depth: number): unknown {
    const p = r();
    if (depth > 3 || p < 0.45) return LEAVES[Math.floor(r() * LEAVES.length)];
    if (p < 0.7) return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(r() * 4); i > 0; i--) o[['a', 'b', 'c', 'd'][Math.floor(r() * 4)] ?? 'a'] = value(r, depth + 1);
    return o;
  }
  /** A copy with keys in reverse order and, sometimes, one leaf changed. */
  function variant(v: unknown, r: () => number): unknown {
    if (Array.isArray(v)) return v.map((x) => variant(x, r));
    if (v !== null && typeof v === 'object') {
      const o: Record<string, unknown> = {};
      for (const k of Object.keys(v).reverse()) o[k] = variant((v as Record<string, unknown>)[k], r);
      return o;
    }
    return r() < 0.1 ? LEAVES[Math.floor(r() * LEAVES.length)] : v;
  }

  it('agrees with comparing canonical JSON text on 20,000 generated pairs', () => {
    const r = rng(42);
    let equal = 0;
    for (let i = 0; i < 20_000; i++) {
      const a = value(r, 0);
      const b = r() < 0.5 ? variant(a, r) : value(r, 0);
      const expected = canonicalJson(a) === canonicalJson(b);
      expect(sameJson(a, b), `${String(canonicalJson(a))} vs ${String(canonicalJson(b))}`).toBe(expected);
      if (expected) equal++;
    }
    // both outcomes are well represented
    expect(equal).toBeGreaterThan(2000);
    expect(equal).toBeLessThan(18_000);
  });

  it('treats absent and undefined properties alike, and null as a value', () => {
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJson({ a: 1, b: null }, { a: 1 })).toBe(false);
    expect(sameJson({ a: 1, b: null }, { a: 1, b: undefined })).toBe(false);
    expect(sameJson([undefined], [null])).toBe(true);
    expect(sameJson({ a: [1, { b: 2, c: 3 }] }, { a: [1, { c: 3, b: 2 }] })).toBe(true);
    expect(sameJson({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(sameJson({}, [])).toBe(false);
    expect(sameJson('1', 1)).toBe(false);
  });
});

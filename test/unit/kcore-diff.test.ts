// kubernetes.core's registered `diff`: Ansible's recursive_diff of the two states of an object.
import { describe, expect, it } from 'vitest';
import { kcoreDiff, kcoreVerdict, recursiveDiff } from '../../src/k8s/kcore-action.js';
import type { KubeObject } from '../../src/k8s/types.js';

describe('recursiveDiff (as ansible.module_utils.common.dict_transformations.recursive_diff)', () => {
  it('keeps the keys one side lacks and the values that differ, maps compared key by key', () => {
    expect(recursiveDiff({ a: 1, b: { c: 1, d: 2 }, gone: 'x' }, { a: 1, b: { c: 2, d: 2 }, added: [1] })).toEqual([
      { gone: 'x', b: { c: 1 } },
      { added: [1], b: { c: 2 } },
    ]);
  });
  it('compares lists and scalars as wholes, and a map against a scalar as values', () => {
    expect(recursiveDiff({ l: [1, 2], m: { x: 1 } }, { l: [1, 3], m: 'text' })).toEqual([{ l: [1, 2], m: { x: 1 } }, { l: [1, 3], m: 'text' }]);
  });
  it('a key only one side has inside a shared map gives an empty map on the other', () => {
    expect(recursiveDiff({ data: { a: '1' } }, { data: { a: '1', extra: '1' } })).toEqual([{ data: {} }, { data: { extra: '1' } }]);
  });
  it('equal values give undefined', () => {
    expect(recursiveDiff({ a: { b: [1] } }, { a: { b: [1] } })).toBeUndefined();
  });
});

describe('kcoreDiff', () => {
  const cm = (data: Record<string, string>, rv: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n', resourceVersion: rv, managedFields: [{ manager: 'x', time: rv }] }, data }) as unknown as KubeObject;
  it('is {before, after} of what differs, without resourceVersion or managedFields noise; {} when nothing does', () => {
    const show = (o: KubeObject): Record<string, unknown> => ({ ...o }) as Record<string, unknown>;
    expect(kcoreDiff(show, cm({ a: '1', b: '2' }, '1'), cm({ a: '3', b: '2' }, '2'))).toEqual({ before: { data: { a: '1' } }, after: { data: { a: '3' } } });
    expect(kcoreDiff(show, cm({ a: '1' }, '1'), cm({ a: '1' }, '2'))).toEqual({});
  });
  it('masks the data of a Secret', () => {
    const s = (v: string): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'n' }, data: { password: Buffer.from(v).toString('base64') } }) as unknown as KubeObject;
    const d = JSON.stringify(kcoreDiff((o) => ({ ...o }) as Record<string, unknown>, s('old-secret-value'), s('new-secret-value')));
    expect(d).not.toContain(Buffer.from('old-secret-value').toString('base64'));
    expect(d).not.toContain(Buffer.from('new-secret-value').toString('base64'));
  });
});

describe('kcoreVerdict (as kubernetes.core diff_objects decides changed)', () => {
  const cm = (data: Record<string, string>, rv: string, time: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n', resourceVersion: rv, managedFields: [{ manager: 'x', time }] }, data }) as unknown as KubeObject;
  it('a write that changed only hidden fields is no change, with kubernetes.core\'s warning', () => {
    const v = kcoreVerdict(cm({ a: '1' }, '1', 't1'), cm({ a: '2' }, '2', 't2'), ['data', 'metadata.managedFields']);
    expect(v).toMatchObject({ changed: false, warning: 'No meaningful diff was generated, but the API may not be idempotent (only metadata.generation or metadata.resourceVersion were changed)' });
  });
  it('a change outside the hidden fields is a change (managedFields count when not hidden)', () => {
    expect(kcoreVerdict(cm({ a: '1' }, '1', 't1'), cm({ a: '2' }, '2', 't2'), ['metadata.managedFields']).changed).toBe(true);
    expect(kcoreVerdict(cm({ a: '1' }, '1', 't1'), cm({ a: '2' }, '2', 't2'), ['data']).changed).toBe(true);
    expect(kcoreVerdict(cm({ a: '1' }, '1', 't1'), cm({ a: '2' }, '2', 't2'), undefined).changed).toBe(true);
  });
  it('equal objects are no change and no warning; hidden fields that do not exist change nothing', () => {
    expect(kcoreVerdict(cm({ a: '1' }, '1', 't1'), cm({ a: '1' }, '1', 't1'), ['does.not.exist'])).toEqual({ changed: false, diff: {} });
    expect(kcoreVerdict(cm({ a: '1' }, '1', 't1'), cm({ a: '2' }, '2', 't1'), ['does.not.exist']).changed).toBe(true);
  });
});

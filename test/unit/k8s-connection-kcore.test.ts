// The kubernetes.core helpers shared by the k8s* adapters (src/k8s/kcore.ts), checked against what
// the collection's module_utils compute (hashes.py, selector.py, service.hide_fields, resource.py).
import { describe, expect, it } from 'vitest';
import { asList, buildDefinitions, conditionMet, definitionHash, hideFields, loadAllDocuments, selectorsMatch } from '../../src/k8s/kcore.js';
import type { KubeObject } from '../../src/k8s/types.js';

describe('kubernetes.core definitions', () => {
  it('fills kind/apiVersion/name/namespace from the arguments only where the definition does not say (merge_params)', () => {
    const defs = buildDefinitions([{ metadata: { labels: { a: 'b' } } }, { kind: 'ConfigMap', metadata: { name: 'own', namespace: 'other' } }], { kind: 'Namespace', apiVersion: 'v1', name: 'x', namespace: 'ns' });
    expect(defs).toEqual([
      { kind: 'Namespace', apiVersion: 'v1', metadata: { labels: { a: 'b' }, name: 'x', namespace: 'ns' } },
      { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'own', namespace: 'other' } },
    ]);
  });

  it('builds one definition from the arguments alone and flattens *List kinds', () => {
    expect(buildDefinitions(undefined, { kind: 'Namespace', apiVersion: 'v1', name: 'n' })).toEqual([{ kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'n' } }]);
    const list = buildDefinitions([{ apiVersion: 'v1', kind: 'ConfigMapList', items: [{ metadata: { name: 'a' } }, { kind: 'Secret', metadata: { name: 'b' } }] }], { apiVersion: 'v1', namespace: 'ns' });
    expect(list).toEqual([
      { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'ns' } },
      { kind: 'Secret', apiVersion: 'v1', metadata: { name: 'b', namespace: 'ns' } },
    ]);
  });

  it('reads multi-document YAML, dropping empty documents, and rejects a document that is not a map', () => {
    expect(loadAllDocuments('---\nkind: A\n---\n# only a comment\n---\nkind: B\n', 'src')).toEqual([{ kind: 'A' }, { kind: 'B' }]);
    expect(() => buildDefinitions(['text'], { apiVersion: 'v1' })).toThrow(/not a map/);
  });

  it('splits a string list argument on commas as Ansible does', () => {
    expect(asList('app=web, tier=fe')).toEqual(['app=web', 'tier=fe']);
    expect(asList(['a=b'])).toEqual(['a=b']);
    expect(asList(undefined)).toEqual([]);
  });
});

describe('append_hash', () => {
  // values computed by kubernetes.core's module_utils/hashes.py generate_hash
  it('computes the hash kubernetes.core appends to ConfigMaps and Secrets', () => {
    expect(definitionHash({ kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { b: '2', a: 'é' } })).toBe('hmg655fg27');
    expect(definitionHash({ kind: 'Secret', metadata: { name: 's' }, data: { x: 'eQ==' }, type: 'Opaque' })).toBe('8cf4ckdkdm');
    expect(definitionHash({ kind: 'Deployment', metadata: { name: 'd' } })).toBeUndefined();
  });
});

describe('hidden_fields', () => {
  const obj = { metadata: { name: 'x', managedFields: [{}], annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' } }, spec: { containers: [{ env: [{ name: 'A' }, { name: 'B', value: 's' }] }] } };
  it('removes dotted, indexed and bracketed fields, and parents left empty, without touching the input', () => {
    expect(hideFields(obj, ['metadata.managedFields', 'metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]', 'spec.containers[0].env[1].value'])).toEqual({ metadata: { name: 'x' }, spec: { containers: [{ env: [{ name: 'A' }, { name: 'B' }] }] } });
    expect(obj.metadata.managedFields).toHaveLength(1);
    expect(hideFields(obj, ['spec.containers[0].env[0]', 'nothing.here', 'spec.containers[5]'])).toEqual({ metadata: obj.metadata, spec: { containers: [{ env: [{ name: 'B', value: 's' }] }] } });
  });
});

describe('label selectors (LabelSelectorFilter)', () => {
  const o = { metadata: { labels: { app: 'web', tier: 'fe' } } };
  it('matches equality, set-based and existence requirements', () => {
    expect(selectorsMatch(['app=web'], o)).toBe(true);
    expect(selectorsMatch(['app==web', 'tier!=db'], o)).toBe(true);
    expect(selectorsMatch(['app in (api, web)'], o)).toBe(true);
    expect(selectorsMatch(['app notin (web)'], o)).toBe(false);
    expect(selectorsMatch(['tier', '!missing'], o)).toBe(true);
    expect(selectorsMatch(['!app'], o)).toBe(false);
  });
  it('never matches an object without labels (as kubernetes.core)', () => {
    expect(selectorsMatch(['!app'], { metadata: {} })).toBe(false);
  });
});

describe('wait_condition', () => {
  const obj = (status: string, reason?: string): KubeObject => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: {}, status: { conditions: [{ type: 'Progressing', status, reason }] } }) as KubeObject;
  it('compares type, status and (when given) reason', () => {
    expect(conditionMet({ type: 'Progressing', status: 'Unknown', reason: 'DeploymentPaused' }, obj('Unknown', 'DeploymentPaused'))).toBe(true);
    expect(conditionMet({ type: 'Progressing', status: 'Unknown', reason: 'Other' }, obj('Unknown', 'DeploymentPaused'))).toBe(false);
    expect(conditionMet({ type: 'Progressing', status: 'True' }, obj('True', 'NewReplicaSetAvailable'))).toBe(true);
    expect(conditionMet({ type: 'Available', status: 'True' }, obj('True'))).toBe(false);
    expect(conditionMet({ type: 'Available', status: 'True' }, undefined)).toBe(false);
  });
});

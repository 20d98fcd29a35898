// An aggregated ClusterRole's rules belong to the controller manager's
// clusterrole-aggregation-controller: a manifest's empty `rules` is left out of the apply (else
// the second apply conflicts with that controller); anything else is applied as given.
import { describe, expect, it } from 'vitest';
import { withoutAggregatedRules } from '../../src/k8s/apply/index.js';
import type { KubeObject } from '../../src/k8s/types.js';

const aggregated = (extra: Record<string, unknown>): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name: 'knative-serving-admin' },
  aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'serving.knative.dev/controller': 'true' } }] },
  ...extra,
});

describe('withoutAggregatedRules', () => {
  it('leaves out the empty or null rules of an aggregated ClusterRole', () => {
    expect(withoutAggregatedRules(aggregated({ rules: [] }))).toEqual(aggregated({}));
    expect('rules' in withoutAggregatedRules(aggregated({ rules: null }))).toBe(false);
  });

  it('keeps non-empty rules, roles without aggregationRule, and other kinds as they are', () => {
    const withRules = aggregated({ rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] });
    expect(withoutAggregatedRules(withRules)).toBe(withRules);
    const plain: KubeObject = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'plain' }, rules: [] };
    expect(withoutAggregatedRules(plain)).toBe(plain);
    const nullRule: KubeObject = { ...aggregated({ rules: [] }), aggregationRule: null };
    expect(withoutAggregatedRules(nullRule)).toBe(nullRule);
    const role: KubeObject = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r' }, aggregationRule: {}, rules: [] };
    expect(withoutAggregatedRules(role)).toBe(role);
  });
});

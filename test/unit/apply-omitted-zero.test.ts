// Zeros the apiserver does not store (Go `omitempty` values of built-in kinds): a manifest's
// `minReadySeconds: 0` (ingress-nginx renders it) or a subject's `apiGroup: ""` is the live object
// without the field, so a no-op needs no dry-run; custom resources keep their zeros, and fields
// whose absence means something else still differ.
import { describe, expect, it } from 'vitest';
import { appliedUnchanged } from '../../src/k8s/object-plan.js';
import type { KubeObject } from '../../src/k8s/types.js';

const deployment = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ns' }, spec });
const container = (extra: Record<string, unknown>): Record<string, unknown> => ({ name: 'web', image: 'nginx', ...extra });
const liveDeployment = deployment({
  replicas: 1,
  template: { spec: { automountServiceAccountToken: true, containers: [container({ livenessProbe: { periodSeconds: 10 }, volumeMounts: [{ name: 'c', mountPath: '/c' }] })] } },
});

describe('appliedUnchanged with zeros the apiserver leaves out', () => {
  it('holds minReadySeconds: 0, initialDelaySeconds: 0 and readOnly: false of a Deployment the live object does not store', () => {
    const desired = deployment({ minReadySeconds: 0, template: { spec: { containers: [container({ livenessProbe: { initialDelaySeconds: 0, periodSeconds: 10 }, volumeMounts: [{ name: 'c', mountPath: '/c', readOnly: false }] })] } } });
    expect(appliedUnchanged(liveDeployment, desired, 'kplay')).toBe(true);
  });

  it('still differs for a non-zero value, a stored field of another value, and a field whose absence means true', () => {
    expect(appliedUnchanged(liveDeployment, deployment({ minReadySeconds: 5 }), 'kplay')).toBe(false);
    expect(appliedUnchanged(liveDeployment, deployment({ replicas: 0 }), 'kplay')).toBe(false);
    expect(appliedUnchanged(liveDeployment, deployment({ template: { spec: { automountServiceAccountToken: false } } }), 'kplay')).toBe(false);
    expect(appliedUnchanged(liveDeployment, deployment({ template: { spec: { enableServiceLinks: false } } }), 'kplay')).toBe(false);
  });

  it("holds a ServiceAccount subject's apiGroup: \"\" of a RoleBinding; a custom resource keeps its zeros", () => {
    const rb = (subject: Record<string, unknown>): KubeObject => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'rb', namespace: 'ns' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' }, subjects: [subject] });
    expect(appliedUnchanged(rb({ kind: 'ServiceAccount', name: 'sa', namespace: 'ns' }), rb({ apiGroup: '', kind: 'ServiceAccount', name: 'sa', namespace: 'ns' }), 'kplay')).toBe(true);
    const cr = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns' }, spec });
    expect(appliedUnchanged(cr({}), cr({ minReadySeconds: 0 }), 'kplay')).toBe(false);
  });
});

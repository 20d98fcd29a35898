// Readiness rules per kind, with object fixtures.
import { describe, expect, it } from 'vitest';
import { podFatalReason, readinessOf } from '../../src/k8s/readiness/index.js';
import { kcoreReadiness } from '../../src/k8s/kcore.js';
import type { KubeObject } from '../../src/k8s/types.js';

const obj = (apiVersion: string, kind: string, spec: Record<string, unknown>, status: Record<string, unknown>, generation = 2): KubeObject => ({ apiVersion, kind, metadata: { name: 'x', namespace: 'ns', generation }, spec, status });
const state = (o: KubeObject): string => {
  const r = readinessOf(o);
  return r.done ? (r.successful ? 'ready' : 'failed') : 'progressing';
};

describe('Deployment', () => {
  const d = (st: Record<string, unknown>, gen = 2): KubeObject => obj('apps/v1', 'Deployment', { replicas: 3 }, { observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 3, readyReplicas: 3, ...st }, gen);
  it('is ready when the current generation is fully rolled out', () => expect(state(d({}))).toBe('ready'));
  it('waits for the controller to observe a new generation', () => expect(state(d({}, 3))).toBe('progressing'));
  it('waits while old pods remain', () => expect(state(d({ replicas: 4 }))).toBe('progressing'));
  it('waits for updated/available/ready replicas', () => {
    expect(state(d({ updatedReplicas: 2 }))).toBe('progressing');
    expect(state(d({ availableReplicas: 2 }))).toBe('progressing');
    expect(readinessOf(d({ readyReplicas: 2, updatedReplicas: 2 })).message).toContain('2/3 ready, 1 updating');
  });
  it('fails on ProgressDeadlineExceeded', () => expect(state(d({ updatedReplicas: 1, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] }))).toBe('failed'));
});

describe('StatefulSet', () => {
  const s = (spec: Record<string, unknown>, st: Record<string, unknown>): KubeObject => obj('apps/v1', 'StatefulSet', { replicas: 3, ...spec }, { observedGeneration: 2, readyReplicas: 3, updatedReplicas: 3, currentRevision: 'a', updateRevision: 'a', ...st });
  it('ready when revisions converged', () => expect(state(s({}, {}))).toBe('ready'));
  it('waits for currentRevision == updateRevision without partition', () => expect(state(s({}, { currentRevision: 'a', updateRevision: 'b' }))).toBe('progressing'));
  it('with a partition, only replicas above it must be updated', () => {
    const part = { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } };
    expect(state(s(part, { updatedReplicas: 1, currentRevision: 'a', updateRevision: 'b' }))).toBe('ready');
    expect(state(s(part, { updatedReplicas: 0, currentRevision: 'a', updateRevision: 'b' }))).toBe('progressing');
  });
  it('waits for ready replicas', () => expect(state(s({}, { readyReplicas: 2 }))).toBe('progressing'));
  it('a scale-down waits until the pods above the count are gone (kubernetes.core: status.replicas == spec.replicas)', () => {
    expect(state(s({ replicas: 0 }, { replicas: 2, readyReplicas: 2, updatedReplicas: 2 }))).toBe('progressing');
    expect(state(s({ replicas: 0 }, { replicas: 0, readyReplicas: 0, updatedReplicas: 0 }))).toBe('ready');
    expect(state(s({ replicas: 1, updateStrategy: { type: 'OnDelete' } }, { replicas: 2, readyReplicas: 2 }))).toBe('progressing');
  });
});

describe('other kinds', () => {
  it('DaemonSet', () => {
    expect(state(obj('apps/v1', 'DaemonSet', {}, { observedGeneration: 2, desiredNumberScheduled: 2, updatedNumberScheduled: 2, numberAvailable: 2, numberReady: 2 }))).toBe('ready');
    expect(state(obj('apps/v1', 'DaemonSet', {}, { observedGeneration: 2, desiredNumberScheduled: 2, updatedNumberScheduled: 1, numberAvailable: 2, numberReady: 2 }))).toBe('progressing');
  });
  it('ReplicaSet', () => {
    expect(state(obj('apps/v1', 'ReplicaSet', { replicas: 2 }, { observedGeneration: 2, replicas: 2, readyReplicas: 2, availableReplicas: 2 }))).toBe('ready');
    expect(state(obj('apps/v1', 'ReplicaSet', { replicas: 2 }, { observedGeneration: 2, replicas: 2, readyReplicas: 1, availableReplicas: 1 }))).toBe('progressing');
  });
  it('Job: Complete succeeds, Failed fails', () => {
    expect(state(obj('batch/v1', 'Job', {}, { conditions: [{ type: 'Complete', status: 'True' }] }))).toBe('ready');
    expect(state(obj('batch/v1', 'Job', {}, { active: 1 }))).toBe('progressing');
    const f = readinessOf(obj('batch/v1', 'Job', {}, { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] }));
    expect(f).toMatchObject({ done: true, successful: false });
    expect(f.message).toContain('BackoffLimitExceeded');
  });
  it('Pod: Ready, Succeeded, Failed, fatal container states', () => {
    expect(state(obj('v1', 'Pod', {}, { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }))).toBe('ready');
    expect(state(obj('v1', 'Pod', {}, { phase: 'Succeeded' }))).toBe('ready');
    expect(state(obj('v1', 'Pod', {}, { phase: 'Failed' }))).toBe('failed');
    expect(state(obj('v1', 'Pod', {}, { phase: 'Pending' }))).toBe('progressing');
    const bad = obj('v1', 'Pod', {}, { phase: 'Pending', containerStatuses: [{ name: 'c', state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 5m' } } }] });
    expect(state(bad)).toBe('failed');
    expect(podFatalReason(bad)).toBe('pod x container c: CrashLoopBackOff (back-off 5m)');
    expect(podFatalReason(obj('v1', 'Pod', {}, { containerStatuses: [{ name: 'c', state: { waiting: { reason: 'ContainerCreating' } } }] }))).toBeUndefined();
  });
  it('kubernetes.core\'s waiter: a completed Pod fails, a Job or ConfigMap only needs to exist, workloads by kplay\'s rules', () => {
    const kstate = (o: Parameters<typeof kcoreReadiness>[0]): string => {
      const r = kcoreReadiness(o);
      return r.done ? (r.successful ? 'ready' : 'failed') : 'progressing';
    };
    const done = kcoreReadiness(obj('v1', 'Pod', {}, { phase: 'Succeeded' }));
    expect(done).toMatchObject({ done: true, successful: false });
    expect(done.message).toContain('Succeeded');
    expect(kstate(obj('v1', 'Pod', {}, { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }))).toBe('ready');
    expect(kstate(obj('v1', 'Pod', {}, { phase: 'Pending' }))).toBe('progressing');
    expect(kstate(obj('batch/v1', 'Job', {}, { active: 1 }))).toBe('ready');
    expect(kstate(obj('v1', 'ConfigMap', {}, {}))).toBe('ready');
    expect(kstate(obj('apps/v1', 'Deployment', { replicas: 2 }, { replicas: 2, readyReplicas: 1, updatedReplicas: 2, availableReplicas: 1 }))).toBe(state(obj('apps/v1', 'Deployment', { replicas: 2 }, { replicas: 2, readyReplicas: 1, updatedReplicas: 2, availableReplicas: 1 })));
  });
  it('PVC Bound, Service LoadBalancer ingress, CRD Established, Namespace Active', () => {
    expect(state(obj('v1', 'PersistentVolumeClaim', {}, { phase: 'Bound' }))).toBe('ready');
    expect(state(obj('v1', 'PersistentVolumeClaim', {}, { phase: 'Pending' }))).toBe('progressing');
    expect(state(obj('v1', 'Service', { type: 'ClusterIP' }, {}))).toBe('ready');
    expect(state(obj('v1', 'Service', { type: 'LoadBalancer' }, { loadBalancer: {} }))).toBe('progressing');
    expect(state(obj('v1', 'Service', { type: 'LoadBalancer' }, { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } }))).toBe('ready');
    expect(state(obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', {}, { conditions: [{ type: 'Established', status: 'True' }] }))).toBe('ready');
    expect(state(obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', {}, {}))).toBe('progressing');
    expect(state(obj('v1', 'Namespace', {}, { phase: 'Active' }))).toBe('ready');
    expect(state(obj('v1', 'Namespace', {}, { phase: 'Terminating' }))).toBe('progressing');
  });
  it('generic: Ready condition, else observedGeneration, else ready', () => {
    expect(state(obj('example.com/v1', 'Widget', {}, { conditions: [{ type: 'Ready', status: 'False', reason: 'Reconciling' }] }))).toBe('progressing');
    expect(state(obj('example.com/v1', 'Widget', {}, { conditions: [{ type: 'Ready', status: 'True' }] }))).toBe('ready');
    expect(state(obj('example.com/v1', 'Widget', {}, { observedGeneration: 1 }))).toBe('progressing');
    // A custom resource whose controller reports nothing (or that has no controller): current, as in
    // kstatus; waiting for an observedGeneration nobody writes would hang every wait on it.
    expect(state(obj('example.com/v1', 'Widget', {}, {}, 0))).toBe('ready');
    expect(state(obj('example.com/v1', 'Widget', { size: 1 }, {}, 3))).toBe('ready');
    expect(state({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'x' } })).toBe('ready');
  });
});

// Kinds looked up without discovery: those every supported release serves, and those of later
// releases (IngressClass 1.19, PodDisruptionBudget policy/v1 1.21, …) only on a server known to be
// at least that version; everything else is left to discovery.
import { describe, expect, it } from 'vitest';
import { coreKind, serverMinor } from '../../src/k8s/discovery.js';

describe('coreKind', () => {
  it('knows the webhooks, APIService and NetworkPolicy on any server, cluster-scoped where they are', () => {
    expect(coreKind('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration')).toMatchObject({ resource: 'validatingwebhookconfigurations', namespaced: false });
    expect(coreKind('apiregistration.k8s.io/v1', 'APIService')).toMatchObject({ resource: 'apiservices', namespaced: false });
    expect(coreKind('networking.k8s.io/v1', 'NetworkPolicy', 'v1.10.0')).toMatchObject({ resource: 'networkpolicies', namespaced: true });
    expect(coreKind('v1', 'Namespace')?.verbs).not.toContain('deletecollection');
  });

  it('knows IngressClass and policy/v1 PodDisruptionBudget only from the release that serves them', () => {
    expect(coreKind('networking.k8s.io/v1', 'IngressClass', 'v1.34.4')).toMatchObject({ resource: 'ingressclasses', namespaced: false });
    expect(coreKind('policy/v1', 'PodDisruptionBudget', 'v1.29.3-eks-a5565ad')).toMatchObject({ resource: 'poddisruptionbudgets', namespaced: true });
    expect(coreKind('networking.k8s.io/v1', 'IngressClass', 'v1.18.20')).toBeUndefined();
    expect(coreKind('policy/v1', 'PodDisruptionBudget', 'v1.20.0')).toBeUndefined();
    expect(coreKind('networking.k8s.io/v1', 'IngressClass')).toBeUndefined(); // version unknown
    expect(coreKind('networking.k8s.io/v1', 'IngressClass', 'not-a-version')).toBeUndefined();
  });

  it('leaves other kinds and versions to discovery', () => {
    expect(coreKind('policy/v1beta1', 'PodDisruptionBudget', 'v1.34.0')).toBeUndefined();
    expect(coreKind('example.com/v1', 'Widget', 'v1.34.0')).toBeUndefined();
  });

  it('reads the minor version of gitVersion strings', () => {
    expect(serverMinor('v1.34.4')).toBe(34);
    expect(serverMinor('v1.27.3+k3s1')).toBe(27);
    expect(serverMinor('')).toBeUndefined();
    expect(serverMinor(undefined)).toBeUndefined();
  });
});

// Quantities as the API server stores them: a manifest's `cpu: 0.1` is known to be the live
// `100m` without a dry-run. The table is what kube-apiserver v1.34.4 stored for each input (a
// Pod's container requests, cpu and memory alike; recorded from the sandbox with a server-side
// dry-run): the function must give the same, or a different answer where the server rounds to
// 1m or clamps (then kplay cannot tell and asks the server).
import { describe, expect, it } from 'vitest';
import { sameQuantity, storedQuantity } from '../../src/k8s/quantity.js';
import { appliedUnchanged } from '../../src/k8s/object-plan.js';
import type { KubeObject } from '../../src/k8s/types.js';

const SERVER: [string | number, string][] = [
    ["0.1", "100m"],
    ["100m", "100m"],
    ["1000m", "1"],
    ["1.5", "1500m"],
    ["0.5", "500m"],
    ["64Mi", "64Mi"],
    ["1024Mi", "1Gi"],
    ["1536Mi", "1536Mi"],
    ["0.5Gi", "512Mi"],
    ["1Ki", "1Ki"],
    ["1023Ki", "1023Ki"],
    ["512", "512"],
    ["1000", "1k"],
    ["1500", "1500"],
    ["1e3", "1e3"],
    ["1.5e3", "1500"],
    ["1E-3", "1E-3"],
    ["12e-1", "1200e-3"],
    ["100Mi", "100Mi"],
    ["1G", "1G"],
    ["1000M", "1G"],
    ["0.0000000001", "1m"],
    ["1.0000000001", "1001m"],
    ["2.5Gi", "2560Mi"],
    ["1.5Ki", "1536"],
    ["0.5Ki", "512"],
    ["100k", "100k"],
    ["10000", "10k"],
    ["0", "0"],
    ["0m", "0"],
    ["0Gi", "0"],
    ["1e0", "1e0"],
    [".5", "500m"],
    ["5.", "5."],
    ["+1", "+1"],
    ["123456789", "123456789"],
    ["0.123456789", "124m"],
    ["1000Ki", "1000Ki"],
    ["1048576", "1048576"],
    ["2048", "2048"],
    ["1e2", "100"],
    ["50e-3", "50e-3"],
    ["1Ei", "1Ei"],
    ["8Ei", "9223372036854775807"],
    ["3u", "1m"],
    ["3n", "1m"],
    ["1000n", "1m"],
    ["1000000u", "1"],
    ["01", "01"],
    ["1.10", "1100m"],
    [0.1, "100m"],
    [1, "1"],
    [2, "2"],
    [0.25, "250m"],
    [1000, "1k"],
    [1.5, "1500m"],
    [1000, "1k"],
    [64, "64"],
    [100, "100"],
    [0.001, "1m"]
];
/** Inputs the Pod API rounds up to 1m (sub-milli precision) or clamps to int64: not modelled. */
const ROUNDED = new Set<string | number>(['0.0000000001', '1.0000000001', '0.123456789', '3u', '3n', '1000n', '8Ei']);

describe('storedQuantity', () => {
  it.each(SERVER)('%j is stored as %j', (input, stored) => {
    if (ROUNDED.has(input)) expect(storedQuantity(input)).not.toBe(stored);
    else expect(storedQuantity(input)).toBe(stored);
  });

  it.each(['', 'abc', '1.2.3', '-1', '1e', '1Kb', '1 Gi', 'Infinity', '1e99999', '0x10'])('does not model %j', (input) => {
    expect(storedQuantity(input)).toBeUndefined();
  });

  it('compares quantities only where the built-in APIs have them', () => {
    expect(sameQuantity('100m', 0.1, 'cpu', 'requests')).toBe(true);
    expect(sameQuantity('1Gi', '1024Mi', 'memory', 'limits')).toBe(true);
    expect(sameQuantity('1', 1, 'cpu', 'limits')).toBe(true);
    expect(sameQuantity('512Mi', '0.5Gi', 'sizeLimit', 'emptyDir')).toBe(true);
    expect(sameQuantity('10', 10, 'requests.cpu', 'hard')).toBe(true);
    // not a quantity field: a number and a string differ (an apply would change the type)
    expect(sameQuantity('8080', 8080, 'targetPort', undefined)).toBe(false);
    expect(sameQuantity('1', 1, 'replicas', 'spec')).toBe(false);
    // different values, or text the server keeps as written
    expect(sameQuantity('200m', 0.1, 'cpu', 'requests')).toBe(false);
    expect(sameQuantity('5', '5.', 'cpu', 'requests')).toBe(false);
    expect(sameQuantity(100, 100, 'cpu', 'requests')).toBe(false);
  });
});

describe('a no-op apply of a manifest whose quantities the server rewrote', () => {
  const obj = (apiVersion: string, kind: string, requests: Record<string, unknown>): KubeObject => ({
    apiVersion,
    kind,
    metadata: { name: 'web', namespace: 'ns', managedFields: [{ manager: 'kplay', operation: 'Apply', apiVersion, fieldsV1: {} }] },
    spec: { template: { spec: { containers: [{ name: 'app', resources: { requests } }] } } },
  });
  const live = (apiVersion: string, kind: string): KubeObject => obj(apiVersion, kind, { cpu: '100m', memory: '1Gi' });

  it('needs no dry-run for a built-in kind', () => {
    expect(appliedUnchanged(live('apps/v1', 'Deployment'), obj('apps/v1', 'Deployment', { cpu: 0.1, memory: '1024Mi' }), 'kplay')).toBe(true);
    expect(appliedUnchanged(live('apps/v1', 'Deployment'), obj('apps/v1', 'Deployment', { cpu: 0.2, memory: '1024Mi' }), 'kplay')).toBe(false);
  });

  it('compares custom resources as written (their quantities are stored as sent)', () => {
    expect(appliedUnchanged(live('example.com/v1', 'Widget'), obj('example.com/v1', 'Widget', { cpu: 0.1, memory: '1024Mi' }), 'kplay')).toBe(false);
    expect(appliedUnchanged(live('example.com/v1', 'Widget'), obj('example.com/v1', 'Widget', { cpu: '100m', memory: '1Gi' }), 'kplay')).toBe(true);
  });
});

// The example module's own tests: what a module author can check without a cluster, using only
// kplay's public SDK (its behaviour against real clusters is tested by kplay's
// test/integration/community-module.test.ts, which installs this package outside the repository).
import { checkArgs } from 'kplay/sdk';
import { describe, expect, it } from 'vitest';
import configChecksum, { configChecksum as checksumOf } from '../index.js';

describe('config_checksum', () => {
  it('fills in its declared defaults and refuses what its schema refuses', () => {
    expect(checkArgs(configChecksum, { name: 'web' })).toEqual({
      ok: true,
      args: { name: 'web', kind: 'Deployment', namespace: 'default', configmaps: [], secrets: [], annotation: 'checksum/config' },
    });
    expect(checkArgs(configChecksum, { name: 'web', kind: 'Pod' })).toEqual({ ok: false, errors: ["config_checksum.kind: must be one of \"Deployment\", \"StatefulSet\", \"DaemonSet\""] });
    expect(checkArgs(configChecksum, { namespace: 'x' })).toEqual({ ok: false, errors: ["config_checksum: missing required key 'name'"] });
  });

  it('declares its result, check and diff mode', () => {
    expect(Object.keys(configChecksum.result.properties)).toEqual(['checksum', 'previous']);
    expect(configChecksum.checkMode).toBe('supported');
    expect(configChecksum.diffMode).toBe('supported');
  });

  it('a checksum depends on the data, not on key order, and changes when a value changes', () => {
    const a = checksumOf([{ kind: 'ConfigMap', name: 'c', data: { a: '1', b: '2' }, binaryData: {} }]);
    const b = checksumOf([{ kind: 'ConfigMap', name: 'c', data: { b: '2', a: '1' }, binaryData: {} }]);
    const c = checksumOf([{ kind: 'ConfigMap', name: 'c', data: { a: '1', b: '3' }, binaryData: {} }]);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(b).toBe(a);
    expect(c).not.toBe(a);
  });
});

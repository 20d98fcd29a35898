// kubernetes.core's action plugin check on `template` (plugins/action/k8s_info.py, load_template).
import { describe, expect, it } from 'vitest';
import { kcoreActionRefusal } from '../../src/playbook/kcore-action-plugin.js';

describe('kcoreActionRefusal', () => {
  it('refuses a template given to a kubernetes.core module other than k8s, with the plugin\'s message', () => {
    expect(kcoreActionRefusal('k8s_service', { template: 'pod.j2', state: 'present' })).toBe("'template' is only a supported parameter for the 'k8s' module.");
    expect(kcoreActionRefusal('k8s_info', { template: { path: 'pod.j2' } })).toBe("'template' is only a supported parameter for the 'k8s' module.");
  });
  it('leaves k8s, modules without that plugin, and an empty template alone', () => {
    expect(kcoreActionRefusal('k8s', { template: 'pod.j2' })).toBeUndefined();
    expect(kcoreActionRefusal('template', { src: 'a.j2', dest: '/tmp/a' })).toBeUndefined();
    expect(kcoreActionRefusal('k8s_service', { template: '' })).toBeUndefined();
    expect(kcoreActionRefusal('k8s_service', { name: 'web', namespace: 'x' })).toBeUndefined();
  });
});

// kubernetes.core's kind lookup (src/k8s/kcore-action.ts findResource/kcoreResource): `v1` (the
// modules' api_version default) is the core group first, then the one group whose v1 serves the kind.
import { describe, expect, it } from 'vitest';
import { findResource, kcoreResource } from '../../src/k8s/kcore-action.js';
import { KubeApiError } from '../../src/k8s/errors.js';
import type { KubeClient, ResourceInfo } from '../../src/k8s/types.js';

const info = (group: string, version: string, kind: string, resource: string): ResourceInfo => ({ group, version, kind, resource, namespaced: true, verbs: ['get'] });

/** A client whose discovery serves `served` (keyed `apiVersion/kind`) and the groups of `/apis`. */
function client(served: ResourceInfo[], groups: string[]): { client: KubeClient; asked: string[] } {
  const asked: string[] = [];
  const c = {
    resource: (apiVersion: string, kind: string): Promise<ResourceInfo> => {
      asked.push(`${apiVersion} ${kind}`);
      const found = served.find((i) => (i.group ? `${i.group}/${i.version}` : i.version) === apiVersion && i.kind === kind);
      return found ? Promise.resolve(found) : Promise.reject(new KubeApiError(404, 'NotFound', `no ${kind} in ${apiVersion}`, 'DISCOVER', '', 'c1'));
    },
    getPath: (p: string): Promise<unknown> => Promise.resolve(p === '/apis' ? { groups: groups.map((g) => ({ name: g, versions: [{ version: 'v1' }, { version: 'v2' }] })) } : {}),
  };
  return { client: c as unknown as KubeClient, asked };
}

describe('kubernetes.core kind lookup', () => {
  const deploy = info('apps', 'v1', 'Deployment', 'deployments');
  const cm = info('', 'v1', 'ConfigMap', 'configmaps');

  it('v1 + a kind of another group: the only group whose v1 serves it', async () => {
    const { client: c } = client([deploy, cm], ['apps', 'batch']);
    expect(await findResource(c, 'v1', 'Deployment')).toBe(deploy);
    expect(await kcoreResource(c, 'v1', 'Deployment')).toEqual({ info: deploy, apiVersion: 'apps/v1' });
    expect(await kcoreResource(c, 'v1', 'ConfigMap')).toEqual({ info: cm, apiVersion: 'v1' });
  });

  it('none when several groups serve the kind in v1, or for another apiVersion; kcoreResource throws discovery\'s error', async () => {
    const { client: c, asked } = client([info('a.example.com', 'v1', 'Widget', 'widgets'), info('b.example.com', 'v1', 'Widget', 'widgets'), deploy], ['a.example.com', 'b.example.com', 'apps']);
    expect(await findResource(c, 'v1', 'Widget')).toBeUndefined();
    asked.length = 0;
    expect(await findResource(c, 'apps/v2', 'Deployment')).toBeUndefined();
    expect(asked).toEqual(['apps/v2 Deployment']);
    await expect(kcoreResource(c, 'v1', 'Gadget')).rejects.toThrow(/no Gadget in v1/);
  });
});

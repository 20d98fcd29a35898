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
    getPath: (p: string): Promise<unknown> =>
      Promise.resolve(
        p === '/apis'
          ? { groups: groups.map((g) => ({ name: g, versions: [{ version: 'v1' }, { version: 'v2' }] })) }
          : { resources: served.filter((i) => p === (i.group ? `/apis/${i.group}/${i.version}` : `/api/${i.version}`)).map((i) => ({ name: i.resource, kind: i.kind })) },
      ),
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

/** A discovery document: `/api/v1`, `/apis`, `/apis/<group>/v1` as an apiserver serves them. */
type Doc = Record<string, { kind: string; name: string; singularName?: string; shortNames?: string[]; namespaced?: boolean }[]>;

function served(doc: Doc): KubeClient {
  const groups = Object.keys(doc).filter((gv) => gv.includes('/'));
  const c = {
    resource: (apiVersion: string, kind: string): Promise<ResourceInfo> => {
      const r = doc[apiVersion]?.find((x) => x.kind === kind && !x.name.includes('/'));
      const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
      return r ? Promise.resolve(info(group ?? '', version ?? '', r.kind, r.name)) : Promise.reject(new KubeApiError(404, 'NotFound', `no kind ${kind} in apiVersion ${apiVersion}`, 'DISCOVER', apiVersion, 'c1'));
    },
    getPath: (p: string): Promise<unknown> => {
      if (p === '/apis') return Promise.resolve({ groups: groups.map((gv) => ({ name: gv.split('/')[0], versions: [{ version: 'v1' }] })) });
      const gv = p.replace(/^\/apis?\//, '');
      const list = doc[gv];
      return list ? Promise.resolve({ kind: 'APIResourceList', groupVersion: gv, resources: list.map((r) => ({ namespaced: true, verbs: ['get'], ...r })) }) : Promise.reject(new KubeApiError(404, 'NotFound', 'not found', 'GET', '', 'c1'));
    },
  };
  return c as unknown as KubeClient;
}

describe('kubernetes.core kind lookup by resource names', () => {
  const doc: Doc = {
    v1: [
      { kind: 'Namespace', name: 'namespaces', singularName: '', shortNames: ['ns'] },
      { kind: 'Node', name: 'nodes', singularName: 'node', shortNames: ['no'] },
      { kind: 'Node', name: 'nodes/status' },
      { kind: 'ConfigMap', name: 'configmaps', singularName: '', shortNames: ['cm'] },
      { kind: 'Endpoints', name: 'endpoints', shortNames: ['ep'] },
    ],
    'apps/v1': [{ kind: 'Deployment', name: 'deployments', singularName: 'deployment', shortNames: ['deploy'] }],
    'apiextensions.k8s.io/v1': [{ kind: 'CustomResourceDefinition', name: 'customresourcedefinitions', singularName: 'customresourcedefinition', shortNames: ['crd', 'crds'] }],
    'a.example.com/v1': [{ kind: 'Widget', name: 'widgets', singularName: 'widget', shortNames: ['wd'] }],
    'b.example.com/v1': [{ kind: 'Widget', name: 'widgets', singularName: 'widget', shortNames: ['wd'] }],
  };
  const c = served(doc);
  const kindOf = async (apiVersion: string, kind: string): Promise<string | undefined> => {
    const i = await findResource(c, apiVersion, kind);
    return i ? `${i.group ? `${i.group}/` : ''}${i.version} ${i.kind}` : undefined;
  };

  it('the kind, the plural, the singular (discovery\'s, else the plural less its last letter) and a sole short name', async () => {
    expect(await kindOf('v1', 'Namespace')).toBe('v1 Namespace');
    expect(await kindOf('v1', 'namespaces')).toBe('v1 Namespace');
    expect(await kindOf('v1', 'namespace')).toBe('v1 Namespace');
    expect(await kindOf('v1', 'ns')).toBe('v1 Namespace');
    expect(await kindOf('v1', 'node')).toBe('v1 Node');
    expect(await kindOf('v1', 'nodes')).toBe('v1 Node');
    expect(await kindOf('v1', 'cm')).toBe('v1 ConfigMap');
    expect(await kindOf('v1', 'configmap')).toBe('v1 ConfigMap');
    expect(await kindOf('v1', 'endpoint')).toBe('v1 Endpoints');
    expect(await kindOf('apps/v1', 'deploy')).toBe('apps/v1 Deployment');
    expect(await kindOf('apps/v1', 'deployments')).toBe('apps/v1 Deployment');
    expect(await kindOf('a.example.com/v1', 'wd')).toBe('a.example.com/v1 Widget');
  });

  it('refuses another case, a subresource, one of several short names, and v1 names of another group', async () => {
    for (const [gv, kind] of [['apps/v1', 'Deployments'], ['v1', 'configMap'], ['v1', 'NAMESPACE'], ['v1', 'nodes/status'], ['apiextensions.k8s.io/v1', 'crd'], ['v1', 'deploy'], ['v1', 'deployments'], ['v1', 'Gadget']] as const) {
      expect(await kindOf(gv, kind), `${gv} ${kind}`).toBeUndefined();
    }
  });

  it('v1 finds another group by the kind when one group serves it; ambiguous across groups without api_version', async () => {
    expect(await kindOf('v1', 'Deployment')).toBe('apps/v1 Deployment');
    expect(await kindOf('v1', 'CustomResourceDefinition')).toBe('apiextensions.k8s.io/v1 CustomResourceDefinition');
    expect(await kindOf('v1', 'Widget')).toBeUndefined();
    expect(await kindOf('v1', 'widgets')).toBeUndefined();
    expect(await kindOf('b.example.com/v1', 'widget')).toBe('b.example.com/v1 Widget');
  });
});

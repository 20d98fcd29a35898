// The smaller kubernetes.core adapters (k8s_json_patch, k8s_scale, …) against the real sandbox, run
// as the executor runs them. Objects live in a namespace k8smods-mods-<random> on sandbox-1.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import jsonPatch from '../../modules/k8s_json_patch.js';
import type { ModuleDefinition, ModuleResult } from '../../src/sdk/module.js';
import type { TObject, TSchema } from '../../src/sdk/args.js';
import { makeCtx, runModule } from '../helpers/ctx.js';
import { kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const ns = `k8smods-mods-${randomBytes(3).toString('hex')}`;
let env: SandboxEnv;

function run<S extends TSchema, R extends TObject>(mod: ModuleDefinition<S, R>, args: Record<string, unknown>, opts: { checkMode?: boolean; diffMode?: boolean } = {}): Promise<ModuleResult> {
  return runModule(mod, args, makeCtx({ cluster: { name: 'sandbox-1', context: 'sandbox-1', kubeconfig: env.kubeconfig }, ...opts })) as Promise<ModuleResult>;
}
const data = (r: ModuleResult): Record<string, unknown> => ('data' in r && r.data ? r.data : {});
const result = (r: ModuleResult): Record<string, Record<string, unknown>> => data(r).result as Record<string, Record<string, unknown>>;
const get = async (args: string[]): Promise<string> => (await kubectl(['-n', ns, 'get', ...args], { check: false })).stdout.trim();

beforeAll(async () => {
  env = sandboxEnv();
  await kubectl(['create', 'namespace', ns]);
  await kubectl(['-n', ns, 'create', 'deployment', 'web', '--image=nginx', '--replicas=1']);
  await kubectl(['-n', ns, 'create', 'configmap', 'cfg', '--from-literal=a=1']);
});

afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--wait=false'], { check: false });
});

describe('k8s_json_patch', () => {
  const base = { kind: 'ConfigMap', name: 'cfg' };
  it('patches (check mode writes nothing), then is ok when the patch changes nothing', async () => {
    const patch = [
      { op: 'add', path: '/data/b', value: '2' },
      { op: 'replace', path: '/data/a', value: 'one' },
    ];
    const check = await run(jsonPatch, { ...base, namespace: ns, patch }, { checkMode: true, diffMode: true });
    expect(check.status).toBe('changed');
    expect(result(check).data).toEqual({ a: 'one', b: '2' });
    expect('diff' in check && check.diff?.[0]?.after).toContain('b: "2"');
    expect(await get(['configmap', 'cfg', '-o', 'jsonpath={.data}'])).toBe('{"a":"1"}');
    const r = await run(jsonPatch, { ...base, namespace: ns, patch, hidden_fields: ['metadata.labels'] });
    expect(r.status).toBe('changed');
    expect(await get(['configmap', 'cfg', '-o', 'jsonpath={.data}'])).toBe('{"a":"one","b":"2"}');
    const again = await run(jsonPatch, { ...base, namespace: ns, patch: [{ op: 'replace', path: '/data/a', value: 'one' }] });
    expect(again.status).toBe('ok');
    expect(result(again).metadata?.name).toBe('cfg');
  });

  it('fails when a test operation fails or the object does not exist (reason, status as kubernetes.core)', async () => {
    const t = await run(jsonPatch, { ...base, namespace: ns, patch: [{ op: 'test', path: '/data/a', value: 'nope' }] });
    expect(t.status).toBe('failed');
    expect(t.msg).toMatch(/^Failed to patch existing object: /);
    const missing = await run(jsonPatch, { kind: 'ConfigMap', name: 'missing', namespace: ns, patch: [{ op: 'add', path: '/data/x', value: 'y' }] });
    expect(missing).toMatchObject({ status: 'failed', data: { status: 404, reason: 'Not Found' } });
    expect(missing.msg).toMatch(/^ConfigMap missing: Failed to retrieve requested object: /);
  });

  it('waits for a patched Deployment to be ready (duration)', async () => {
    const r = await run(jsonPatch, { kind: 'Deployment', api_version: 'apps/v1', name: 'web', namespace: ns, patch: [{ op: 'add', path: '/metadata/labels/patched', value: 'yes' }], wait: true });
    expect(r.status, r.msg).toBe('changed');
    expect(data(r).duration).toEqual(expect.any(Number));
  });
});

// The smaller kubernetes.core adapters (k8s_json_patch, k8s_scale, …) against the real sandbox, run
// as the executor runs them. Objects live in a namespace k8smods-mods-<random> on sandbox-1.
import { randomBytes } from 'node:crypto';
import { compileSchema } from '../../src/load/schema.js';
import type { JsonSchema } from '../../src/core/module.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import jsonPatch from '../../modules/k8s_json_patch.js';
import scale from '../../modules/k8s_scale.js';
import rollback from '../../modules/k8s_rollback.js';
import service from '../../modules/k8s_service.js';
import clusterInfo from '../../modules/k8s_cluster_info.js';
import taint from '../../modules/k8s_taint.js';
import drain from '../../modules/k8s_drain.js';
import type { ModuleDefinition, ModuleResult } from '../../src/core/module.js';
import type { TObject, TSchema } from '../../src/core/args.js';
import { makeCtx, runModule } from '../helpers/ctx.js';
import { kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const ns = `k8smods-mods-${randomBytes(3).toString('hex')}`;
let env: SandboxEnv;

function run<S extends TSchema, R extends TObject>(mod: ModuleDefinition<S, R>, args: Record<string, unknown>, opts: { checkMode?: boolean; diffMode?: boolean } = {}): Promise<ModuleResult> {
  return runModule(mod, args, makeCtx({ cluster: { name: 'sandbox-1', context: 'sandbox-1', kubeconfig: env.kubeconfig }, ...opts })).then((r) => checkResult(mod, r as ModuleResult));

/** Every successful result must match the module's declared `result` schema (as KPLAY_CHECK_RESULTS checks in runs). */
function checkResult(mod: { name: string; result: unknown }, r: ModuleResult): ModuleResult {
  if ((r.status === 'ok' || r.status === 'changed') && r.data) {
    const validate = compileSchema(mod.result as JsonSchema);
    if (!validate(r.data)) throw new Error(`${mod.name} result does not match its schema: ${JSON.stringify(validate.errors?.[0])}`);
  }
  return r;
}

}
const data = (r: ModuleResult): Record<string, unknown> => ('data' in r && r.data ? r.data : {});
const result = (r: ModuleResult): Record<string, Record<string, unknown>> => data(r).result as Record<string, Record<string, unknown>>;
const get = async (args: string[]): Promise<string> => (await kubectl(['-n', ns, 'get', ...args], { check: false })).stdout.trim();

beforeAll(async () => {
  env = sandboxEnv();
  await kubectl(['create', 'namespace', ns]);
  await kubectl(['-n', ns, 'create', 'deployment', 'web', '--image=nginx', '--replicas=1']);
  await kubectl(['-n', ns, 'create', 'configmap', 'cfg', '--from-literal=a=1']);
  for (const d of ['s1', 's2']) {
    await kubectl(['-n', ns, 'create', 'deployment', d, '--image=nginx', '--replicas=1']);
    await kubectl(['-n', ns, 'label', 'deployment', d, 'group=scale']);
  }
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

describe('k8s_scale', () => {
  const dep = { kind: 'Deployment', api_version: 'apps/v1', name: 's1' };
  it('scales and waits (check mode writes nothing), then is ok at the wanted count', async () => {
    const check = await run(scale, { ...dep, namespace: ns, replicas: 2 }, { checkMode: true });
    expect(check.status).toBe('changed');
    expect(result(check).spec?.replicas).toBe(2);
    expect(await get(['deployment', 's1', '-o', 'jsonpath={.spec.replicas}'])).toBe('1');
    const r = await run(scale, { ...dep, namespace: ns, replicas: 2, wait_timeout: 120 });
    expect(r.status, r.msg).toBe('changed');
    expect(data(r).duration).toEqual(expect.any(Number));
    expect(result(r).status?.readyReplicas).toBe(2);
    const again = await run(scale, { ...dep, namespace: ns, replicas: 2 });
    expect(again.status).toBe('ok');
    expect(data(again)).toMatchObject({ duration: 0, result: { spec: { replicas: 2 } } });
  });

  it('does nothing but warn when current_replicas or resource_version do not hold', async () => {
    const r = await run(scale, { ...dep, namespace: ns, replicas: 3, current_replicas: 5 });
    expect(r.status).toBe('ok');
    expect(data(r)).toEqual({ warning: `current replicas 5 does not match with actual 2 for object kind=Deployment name=s1 namespace=${ns}.`, result: {}, duration: 0 });
    const v = await run(scale, { ...dep, namespace: ns, replicas: 3, resource_version: '1', wait: false });
    expect(data(v).warning).toMatch(/^expected resource version 1 does not match with actual \d+/);
    expect(await get(['deployment', 's1', '-o', 'jsonpath={.spec.replicas}'])).toBe('2');
  });

  it('scales every object label_selectors select, returning results', async () => {
    const r = await run(scale, { kind: 'Deployment', api_version: 'apps/v1', namespace: ns, label_selectors: ['group=scale'], replicas: 0, wait: false });
    expect(r.status).toBe('changed');
    const results = data(r).results as { changed: boolean; result: { metadata: { name: string } } }[];
    expect(results.map((x) => [x.result.metadata.name, x.changed]).sort()).toEqual([
      ['s1', true],
      ['s2', true],
    ]);
    expect(await get(['deployment', '-l', 'group=scale', '-o', 'jsonpath={.items[*].spec.replicas}'])).toBe('0 0');
  });

  it('fails for a missing object', async () => {
    const r = await run(scale, { kind: 'Deployment', api_version: 'apps/v1', name: 'missing', namespace: ns, replicas: 1 });
    expect(r.status).toBe('failed');
    expect(r.msg).toMatch(/^Failed to retrieve requested object: /);
  });
});

describe('k8s_rollback', () => {
  it('rolls a Deployment back to the previous revision (check mode changes nothing); without history it warns', async () => {
    await kubectl(['-n', ns, 'create', 'deployment', 'rb', '--image=nginx:1.1', '--replicas=1']);
    const none = await run(rollback, { kind: 'Deployment', api_version: 'apps/v1', name: 'rb', namespace: ns });
    expect(none.status).toBe('ok');
    expect(data(none).rollback_info).toEqual([{ changed: false, warnings: ['No rollout history found for resource Deployment/rb'] }]);
    await kubectl(['-n', ns, 'set', 'image', 'deployment/rb', 'nginx=nginx:1.2']);
    await kubectl(['-n', ns, 'rollout', 'status', 'deployment/rb', '--timeout=120s']);
    const image = (): Promise<string> => get(['deployment', 'rb', '-o', 'jsonpath={.spec.template.spec.containers[0].image}']);
    const check = await run(rollback, { kind: 'Deployment', api_version: 'apps/v1', name: 'rb', namespace: ns }, { checkMode: true });
    expect(check.status).toBe('changed');
    expect(await image()).toBe('nginx:1.2');
    const r = await run(rollback, { kind: 'Deployment', api_version: 'apps/v1', name: 'rb', namespace: ns });
    expect(r.status, r.msg).toBe('changed');
    const [info] = data(r).rollback_info as { changed: boolean; method: string; body: { op: string; path: string }[]; resources: { spec: { template: { spec: { containers: { image: string }[] } } } } }[];
    expect(info?.method).toBe('patch');
    expect(info?.body.map((o) => o.path)).toEqual(['/spec/template', '/metadata/annotations']);
    expect(info?.resources.spec.template.spec.containers[0]?.image).toBe('nginx:1.1');
    expect(await image()).toBe('nginx:1.1');
  });
});

describe('k8s_service', () => {
  const svc = (): Record<string, unknown> => ({ name: 'websvc', namespace: ns, type: 'ClusterIP', ports: [{ port: 80, targetPort: 8080, protocol: 'TCP', name: 'http' }], selector: { app: 'web' } });
  it('creates a Service, is ok on the second run, patches a change and deletes it', async () => {
    const check = await run(service, svc(), { checkMode: true });
    expect(check.status).toBe('changed');
    expect(await get(['service', 'websvc'])).toBe('');
    const r = await run(service, svc());
    expect(r.status, r.msg).toBe('changed');
    expect(data(r).method).toBe('create');
    expect(result(r).spec?.clusterIP).toEqual(expect.any(String));
    const again = await run(service, svc());
    expect(again.status, again.msg).toBe('ok');
    expect(data(again).method).toBe('update');
    const changed = await run(service, { ...svc(), selector: { app: 'api' } }, { diffMode: true });
    expect(changed.status).toBe('changed');
    expect(await get(['service', 'websvc', '-o', 'jsonpath={.spec.selector.app}'])).toBe('api');
    // a definition under the arguments: its labels kept, the arguments win
    const merged = await run(service, { ...svc(), definition: { metadata: { labels: { team: 'a' } }, spec: { selector: { app: 'ignored' } } } });
    expect(merged.status).toBe('changed');
    expect(await get(['service', 'websvc', '-o', 'jsonpath={.metadata.labels.team}/{.spec.selector.app}'])).toBe('a/web');
    const del = await run(service, { name: 'websvc', namespace: ns, state: 'absent' });
    expect(del.status).toBe('changed');
    expect(data(del).method).toBe('delete');
    expect((await run(service, { name: 'websvc', namespace: ns, state: 'absent' })).status).toBe('ok');
  });
});

describe('k8s_cluster_info', () => {
  it('lists the served kinds per group version, the server version and the host', async () => {
    const r = await run(clusterInfo, {});
    expect(r.status).toBe('ok');
    const apis = data(r).apis as Record<string, Record<string, Record<string, unknown>>>;
    expect(apis.v1?.Pod).toEqual({ categories: ['all'], name: 'pods', namespaced: true, preferred: true, short_names: ['po'], singular_name: 'pod' });
    expect(apis['apps/v1']?.Deployment).toMatchObject({ name: 'deployments', namespaced: true, short_names: ['deploy'] });
    expect(apis.v1?.['Pod/status']).toBeUndefined();
    expect(apis.v1?.PodList).toBeUndefined();
    const version = data(r).version as { server: { kubernetes: { gitVersion: string } }; client: string };
    expect(version.server.kubernetes.gitVersion).toMatch(/^v1\./);
    expect((data(r).connection as { host: string }).host).toMatch(/^https:/);
  });
});

describe('k8s_taint', () => {
  // a harmless taint (PreferNoSchedule) with a key of its own, removed at the end
  const key = `k8smods-${randomBytes(3).toString('hex')}`;
  let node = '';
  const taints = async (): Promise<string> => (await kubectl(['get', 'node', node, '-o', `jsonpath={.spec.taints[?(@.key=="${key}")].value}`])).stdout.trim();
  beforeAll(async () => {
    node = (await kubectl(['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).stdout.trim();
  });
  afterAll(async () => {
    await kubectl(['taint', 'node', node, `${key}-`], { check: false });
  });

  it('adds a taint (check mode does not), is ok when present, updates its value, removes it', async () => {
    const t = { key, value: 'a', effect: 'PreferNoSchedule' };
    const check = await run(taint, { name: node, taints: [t] }, { checkMode: true });
    expect(check).toMatchObject({ status: 'changed', data: { result: {} } });
    expect(await taints()).toBe('');
    const r = await run(taint, { name: node, taints: [t] });
    expect(r.status, r.msg).toBe('changed');
    expect(await taints()).toBe('a');
    expect(result(r).metadata?.name).toBe(node);
    expect((await run(taint, { name: node, taints: [t] })).status).toBe('ok');
    expect((await run(taint, { name: node, taints: [{ ...t, value: 'b' }] })).status).toBe('changed');
    expect(await taints()).toBe('b');
    // absent matches by key alone when no effect is given
    const del = await run(taint, { name: node, state: 'absent', taints: [{ key }] });
    expect(del).toMatchObject({ status: 'changed', data: { result: {} } });
    expect(await taints()).toBe('');
    expect((await run(taint, { name: node, state: 'absent', taints: [{ key }] })).status).toBe('ok');
    expect(await run(taint, { name: 'no-such-node', taints: [t] })).toMatchObject({ status: 'failed', msg: "Node 'no-such-node' has not been found." });
  });
});

describe('k8s_drain', () => {
  // a node of its own (kwok simulates it), tainted so that nobody else's pods land on it; deleted at the end
  const node = `k8smods-drain-${randomBytes(3).toString('hex')}`;
  const unschedulable = async (): Promise<string> => (await kubectl(['get', 'node', node, '-o', 'jsonpath={.spec.unschedulable}'])).stdout.trim();
  beforeAll(async () => {
    const manifest = `apiVersion: v1\nkind: Node\nmetadata:\n  name: ${node}\n  annotations: { kwok.x-k8s.io/node: fake }\n  labels: { type: kwok }\nspec:\n  taints: [{ key: k8smods-drain, value: only, effect: NoSchedule }]\n`;
    await kubectl(['apply', '-f', '-'], { input: manifest });
  });
  afterAll(async () => {
    await kubectl(['delete', 'node', node, '--wait=false'], { check: false });
  });

  it('cordons and uncordons, ok when already so', async () => {
    expect(await run(drain, { name: node, state: 'cordon' })).toMatchObject({ status: 'changed', data: { result: `node ${node} marked unschedulable.` } });
    expect(await unschedulable()).toBe('true');
    expect(await run(drain, { name: node, state: 'cordon' })).toMatchObject({ status: 'ok', data: { result: `node ${node} already marked unschedulable.` } });
    expect(await run(drain, { name: node, state: 'uncordon' })).toMatchObject({ status: 'changed', data: { result: `node ${node} marked schedulable.` } });
    expect(await unschedulable()).toBe('');
    expect(await run(drain, { name: node, state: 'uncordon' })).toMatchObject({ status: 'ok' });
    expect(await run(drain, { name: 'no-such-node', state: 'cordon' })).toMatchObject({ status: 'failed', msg: 'Node no-such-node not found.' });
  });

  it('refuses unmanaged pods without force (undoing its cordon), evicts them with force and waits for them to go', async () => {
    const pod = `apiVersion: v1\nkind: Pod\nmetadata: { name: lonely, namespace: ${ns} }\nspec:\n  nodeName: ${node}\n  containers: [{ name: c, image: nginx }]\n`;
    await kubectl(['apply', '-f', '-'], { input: pod });
    const refused = await run(drain, { name: node });
    expect(refused.status).toBe('failed');
    expect(refused.msg).toBe(`Pod deletion errors: cannot delete Pods not managed by ReplicationController, ReplicaSet, Job, DaemonSet or StatefulSet (use option force set to yes): ${ns}/lonely.`);
    expect(await unschedulable()).toBe('');
    const r = await run(drain, { name: node, delete_options: { force: true, wait_timeout: 120, terminate_grace_period: 0 } });
    expect(r.status, r.msg).toBe('changed');
    expect(data(r)).toEqual({ result: `node ${node} marked unschedulable. 1 Pod(s) deleted from node.`, warnings: [`Deleting Pods not managed by ReplicationController, ReplicaSet, Job, DaemonSet or StatefulSet: ${ns}/lonely.`] });
    expect(await get(['pod', 'lonely'])).toBe('');
    expect(await unschedulable()).toBe('true');
    // nothing left to evict, already cordoned
    expect(await run(drain, { name: node })).toMatchObject({ status: 'ok', data: { result: `node ${node} already marked unschedulable.` } });
  });
});

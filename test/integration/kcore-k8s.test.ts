// `k8s` (kubernetes.core.k8s) against the real sandbox, run as the executor runs it (arguments
// validated and defaulted, a real ModuleContext). Everything lives in namespaces k8smods-<random>
// on sandbox-1, deleted at the end.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compileSchema } from '../../src/load/schema.js';
import type { JsonSchema } from '../../src/core/module.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import k8s from '../../modules/k8s.js';
import type { ModuleResult } from '../../src/core/module.js';
import { makeCtx, runModule, type CtxOverrides } from '../helpers/ctx.js';
import { kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const rand = (): string => randomBytes(3).toString('hex');
const ns = `k8smods-${rand()}`;
let env: SandboxEnv;
const dir = mkdtempSync(path.join(os.tmpdir(), 'kcore-k8s-'));

function ctx(over: CtxOverrides = {}): ReturnType<typeof makeCtx> {
  return makeCtx({ cluster: { name: 'sandbox-1', context: 'sandbox-1', kubeconfig: env.kubeconfig }, baseDir: dir, ...over });
}
const run = async (args: Record<string, unknown>, over: CtxOverrides = {}): Promise<ModuleResult> => checkResult(k8s, (await runModule(k8s, args, ctx(over))) as ModuleResult);

/** Every successful result must match the module's declared `result` schema (as KPLAY_CHECK_RESULTS checks in runs). */
function checkResult(mod: { name: string; result: unknown }, r: ModuleResult): ModuleResult {
  if ((r.status === 'ok' || r.status === 'changed') && r.data) {
    const validate = compileSchema(mod.result as JsonSchema);
    if (!validate(r.data)) throw new Error(`${mod.name} result does not match its schema: ${JSON.stringify(validate.errors?.[0])}`);
  }
  return r;
}

const data = (r: ModuleResult): Record<string, unknown> => ('data' in r && r.data ? r.data : {});
const obj = (r: ModuleResult): Record<string, unknown> => data(r).result as Record<string, unknown>;
const meta = (o: Record<string, unknown>): Record<string, unknown> => o.metadata as Record<string, unknown>;
const get = async (args: string[]): Promise<string> => (await kubectl(['-n', ns, 'get', ...args], { check: false })).stdout.trim();

beforeAll(async () => {
  env = sandboxEnv();
  await kubectl(['create', 'namespace', ns]);
});

afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--wait=false'], { check: false });
});

const cm = (data: Record<string, string>, name = 'cfg'): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data });

describe('k8s: present', () => {
  it('creates a namespace from kind/name alone, then reports ok (method update) on the second run', async () => {
    const name = `${ns}-b`;
    try {
      const first = await run({ name, api_version: 'v1', kind: 'Namespace', state: 'present' });
      expect(first.status, first.msg).toBe('changed');
      expect(data(first).method).toBe('create');
      expect(meta(obj(first)).name).toBe(name);
      expect(meta(obj(first)).uid).toEqual(expect.any(String));
      const second = await run({ name, kind: 'Namespace' });
      expect(second.status, second.msg).toBe('ok');
      expect(data(second).method).toBe('update');
    } finally {
      await kubectl(['delete', 'namespace', name, '--wait=false'], { check: false });
    }
    const second = await run({ name: ns, kind: 'Namespace' });
    expect(second.status, second.msg).toBe('ok');
    expect(data(second).method).toBe('update');
  });

  it('creates an inline ConfigMap (alias `definition`), is idempotent, and patches a change (check mode writes nothing, diff shows it)', async () => {
    const created = await run({ definition: cm({ a: '1' }) });
    expect(created.status).toBe('changed');
    expect(obj(created).data).toEqual({ a: '1' });
    expect((await run({ inline: cm({ a: '1' }) })).status).toBe('ok');

    const check = await run({ resource_definition: cm({ a: '2' }) }, { checkMode: true, diffMode: true });
    expect(check.status).toBe('changed');
    expect(data(check).method).toBe('update');
    expect(obj(check).data).toEqual({ a: '2' });
    expect('diff' in check && check.diff?.[0]?.after).toContain('a: "2"');
    expect(await get(['configmap', 'cfg', '-o', 'jsonpath={.data.a}'])).toBe('1');

    const patched = await run({ resource_definition: cm({ a: '2' }) });
    expect(patched.status).toBe('changed');
    expect(await get(['configmap', 'cfg', '-o', 'jsonpath={.data.a}'])).toBe('2');
    // a strategic merge patch keeps keys the definition does not name (kubernetes.core's update)
    const merged = await run({ resource_definition: cm({ b: '3' }) });
    expect(obj(merged).data).toEqual({ a: '2', b: '3' });
  });

  it('reads a multi-document string and returns result.results, one per object', async () => {
    const text = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m1}\ndata: {x: "1"}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: m2}\n`;
    const r = await run({ definition: text, namespace: ns });
    expect(r.status).toBe('changed');
    const results = (obj(r).results ?? []) as Record<string, unknown>[];
    expect(results.map((x) => [x.changed, x.method, meta(x.result as Record<string, unknown>).name])).toEqual([
      [true, 'create', 'm1'],
      [true, 'create', 'm2'],
    ]);
    const again = await run({ definition: text, namespace: ns });
    expect(again.status).toBe('ok');
  });

  it('reads src (a file next to the playbook) and renders template with the task variables', async () => {
    writeFileSync(path.join(dir, 'cm.yaml'), `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-src\n  namespace: ${ns}\ndata: {k: v}\n`);
    writeFileSync(path.join(dir, 'cm.j2'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ cm_name }}\ndata:\n{% for k in keys %}\n  {{ k }}: "{{ loop.index }}"\n{% endfor %}\n');
    const src = await run({ src: 'cm.yaml' });
    expect(src.status, src.msg).toBe('changed');
    const tpl = await run({ template: { path: 'cm.j2' }, namespace: ns }, { vars: { cm_name: 'from-template', keys: ['x', 'y'] } });
    expect(tpl.status, tpl.msg).toBe('changed');
    expect(obj(tpl).data).toEqual({ x: '1', y: '2' });
    // other delimiters as kubernetes.core takes them; lstrip_blocks is refused
    writeFileSync(path.join(dir, 'brackets.j2'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [[ cm_name ]]\ndata:\n  text: "{{ kept }}"\n');
    const custom = await run({ template: { path: 'brackets.j2', variable_start_string: '[[', variable_end_string: ']]' }, namespace: ns }, { vars: { cm_name: 'from-brackets' } });
    expect(custom.status, custom.msg).toBe('changed');
    expect(obj(custom).data).toEqual({ text: '{{ kept }}' });
    const lstrip = await run({ template: { path: 'cm.j2', lstrip_blocks: true }, namespace: ns });
    expect(lstrip.status).toBe('failed');
    expect(lstrip.msg).toMatch(/lstrip_blocks .*not supported/);
  });

  it('applies server-side with the given field manager, idempotently', async () => {
    const def = cm({ ssa: 'yes' }, 'ssa');
    const first = await run({ definition: def, apply: true, server_side_apply: { field_manager: 'ansible' } });
    expect(first.status, first.msg).toBe('changed');
    expect(data(first).method).toBe('apply');
    const managers = await get(['configmap', 'ssa', '--show-managed-fields', '-o', 'jsonpath={.metadata.managedFields[*].manager}']);
    expect(managers).toContain('ansible');
    const second = await run({ definition: def, apply: true, server_side_apply: { field_manager: 'ansible' } });
    expect(second.status, second.msg).toBe('ok');
    expect(meta(obj(second)).name).toBe('ssa');
  });

  it('replaces with force: ok when the definition is what is stored, changed (fields dropped) when not', async () => {
    await run({ definition: cm({ a: '1', b: '2' }, 'rep') });
    expect((await run({ definition: cm({ a: '1', b: '2' }, 'rep'), force: true })).status).toBe('ok');
    const r = await run({ definition: cm({ a: '1' }, 'rep'), force: true });
    expect(r.status).toBe('changed');
    expect(data(r).method).toBe('replace');
    expect(obj(r).data).toEqual({ a: '1' });
  });

  it('state patched changes an existing object and leaves a missing one alone with a warning', async () => {
    const r = await run({ state: 'patched', kind: 'Namespace', name: ns, definition: { metadata: { labels: { support: 'patch' } } } });
    expect(r.status).toBe('changed');
    expect((meta(obj(r)).labels as Record<string, string>).support).toBe('patch');
    expect((await run({ state: 'patched', kind: 'Namespace', name: ns, definition: { metadata: { labels: { support: 'patch' } } } })).status).toBe('ok');
    const missing = await run({ state: 'patched', kind: 'ConfigMap', name: 'nope', namespace: ns, definition: { data: { a: 'b' } } });
    expect(missing.status).toBe('ok');
    expect(data(missing).warnings).toEqual(["resource 'kind=ConfigMap,name=nope' was not found but will not be created as 'state' parameter has been set to 'patched'"]);
    expect(await get(['configmap', 'nope'])).toBe('');
  });

  it('fails like kubernetes.core for a namespaced object without a namespace, and for an unknown kind', async () => {
    const r = await run({ definition: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } });
    expect(r).toMatchObject({ status: 'failed', msg: 'Failed to create object: Namespace is required for v1.ConfigMap' });
    const u = await run({ definition: { apiVersion: 'example.com/v1', kind: 'Nope', metadata: { name: 'x' } } });
    expect(u).toMatchObject({ status: 'failed', msg: 'Failed to find exact match for example.com/v1.Nope by [kind, name, singularName, shortNames]' });
  });

  it('continues past a failing object with continue_on_error, recording its error', async () => {
    const r = await run({ definition: [cm({ ok: '1' }, 'coe'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name', namespace: ns } }], continue_on_error: true });
    expect(r.status).toBe('changed');
    const results = (obj(r).results ?? []) as Record<string, unknown>[];
    expect(results[0]?.changed).toBe(true);
    expect(results[1]?.error).toMatchObject({ msg: expect.stringMatching(/^Failed to create object: /) as unknown, reason: 'Unprocessable Entity' });
  });

  it('waits for a Deployment to be ready and reports the duration; wait_condition with a reason', async () => {
    const dep = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: ns },
      spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } },
    };
    const r = await run({ definition: dep, wait: true, wait_timeout: 120 });
    expect(r.status, r.msg).toBe('changed');
    expect(data(r).duration).toEqual(expect.any(Number));
    expect((obj(r).status as Record<string, unknown>).readyReplicas).toBe(1);
    const c = await run({ definition: dep, wait: true, wait_condition: { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' } });
    expect(c.status, c.msg).toBe('ok');
  });
});

describe('k8s: absent', () => {
  it('deletes by name (check mode deletes nothing), then is ok when already gone; waits for the deletion', async () => {
    const made = await run({ definition: cm({ a: '1' }, 'gone') });
    expect(made.status, made.msg).toBe('changed');
    expect(await get(['configmap', 'gone', '-o', 'name'])).toBe('configmap/gone');
    const check = await run({ state: 'absent', kind: 'ConfigMap', name: 'gone', namespace: ns }, { checkMode: true });
    expect(check.status).toBe('changed');
    // the apiserver's answer to the (dry-run) DELETE, as kubernetes.core registers it
    expect(obj(check)).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'gone', kind: 'configmaps' } });
    expect(await get(['configmap', 'gone', '-o', 'name'])).toBe('configmap/gone');
    const del = await run({ state: 'absent', kind: 'ConfigMap', name: 'gone', namespace: ns, wait: true });
    expect(del.status).toBe('changed');
    expect(data(del).method).toBe('delete');
    expect(obj(del)).toMatchObject({ kind: 'Status', status: 'Success' });
    expect(await get(['configmap', 'gone'])).toBe('');
    const again = await run({ state: 'absent', kind: 'ConfigMap', name: 'gone', namespace: ns });
    expect(again.status).toBe('ok');
    expect(data(again)).toEqual({ result: {}, method: 'delete' });
  });

  it('deletes what label_selectors select, and every object of a kind with delete_all', async () => {
    await run({ definition: [{ ...cm({}, 'l1'), metadata: { name: 'l1', namespace: ns, labels: { del: 'me' } } }, { ...cm({}, 'l2'), metadata: { name: 'l2', namespace: ns, labels: { del: 'me' } } }] });
    const r = await run({ state: 'absent', kind: 'ConfigMap', namespace: ns, label_selectors: ['del=me'] });
    expect(r.status).toBe('changed');
    expect((obj(r) as unknown as unknown[]).length).toBe(2);
    expect(await get(['configmap', '-l', 'del=me', '-o', 'name'])).toBe('');
    await run({ definition: [{ ...cm({}, 'a1'), metadata: { name: 'a1', namespace: ns, labels: { all: 'x' } } }, { ...cm({}, 'a2'), metadata: { name: 'a2', namespace: ns, labels: { all: 'x' } } }] });
    const all = await run({ state: 'absent', kind: 'ConfigMap', namespace: ns, all: true, label_selectors: 'all in (x, y)' });
    expect(all.status).toBe('changed');
    expect(((obj(all).results ?? []) as Record<string, unknown>[]).map((x) => [x.method, x.changed])).toEqual([
      ['delete', true],
      ['delete', true],
    ]);
    expect(await get(['configmap', '-l', 'all', '-o', 'name'])).toBe('');
    expect((await run({ state: 'absent', kind: 'ConfigMap', namespace: ns, delete_all: true, label_selectors: ['all=x'] })).status).toBe('ok');
  });
});

describe('k8s: connection arguments', () => {
  it('reaches the cluster named by kubeconfig + context even when the task cluster is elsewhere', async () => {
    const r = await run({ kind: 'Namespace', name: ns, kubeconfig: env.kubeconfig, context: 'sandbox-1' }, { cluster: { name: 'nowhere', context: 'no-such-context', kubeconfig: '/nonexistent/kubeconfig' } });
    expect(r.status, r.msg).toBe('ok');
  });

  it('fails the task (masking the token) when host + api_key are refused', async () => {
    const server = (await kubectl(['config', 'view', '--minify', '--context', 'sandbox-1', '-o', 'jsonpath={.clusters[0].cluster.server}'])).stdout;
    const r = await run({ kind: 'Namespace', name: ns, host: server, api_key: 'not-a-valid-token-123', validate_certs: false });
    expect(r.status).toBe('failed');
    expect(r.msg).toMatch(/^Could not create API client: .*401/);
    expect(r.msg).not.toContain('not-a-valid-token-123');
  });
});

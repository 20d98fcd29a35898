// `k8s_info` with kubernetes.core.k8s_info's arguments against the real sandbox (module run as the
// executor runs it). Objects live in a namespace k8smods-info-<random> on sandbox-1.
import { randomBytes } from 'node:crypto';
import { compileSchema } from '../../src/load/schema.js';
import type { JsonSchema } from '../../src/core/module.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import k8sInfo from '../../modules/k8s_info.js';
import type { ModuleResult } from '../../src/core/module.js';
import { makeCtx, runModule } from '../helpers/ctx.js';
import { kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const ns = `k8smods-info-${randomBytes(3).toString('hex')}`;
let env: SandboxEnv;

const run = async (args: Record<string, unknown>, checkMode = false): Promise<ModuleResult> =>
  checkResult(k8sInfo, (await runModule(k8sInfo, args, makeCtx({ cluster: { name: 'sandbox-1', context: 'sandbox-1', kubeconfig: env.kubeconfig }, checkMode }))) as ModuleResult);

/** Every successful result must match the module's declared `result` schema (as KPLAY_CHECK_RESULTS checks in runs). */
function checkResult(mod: { name: string; result: unknown }, r: ModuleResult): ModuleResult {
  if ((r.status === 'ok' || r.status === 'changed') && r.data) {
    const validate = compileSchema(mod.result as JsonSchema);
    if (!validate(r.data)) throw new Error(`${mod.name} result does not match its schema: ${JSON.stringify(validate.errors?.[0])}`);
  }
  return r;
}

const data = (r: ModuleResult): Record<string, unknown> => ('data' in r && r.data ? r.data : {});
const names = (r: ModuleResult): string[] => ((data(r).resources ?? []) as { metadata: { name: string } }[]).map((o) => o.metadata.name).sort();

beforeAll(async () => {
  env = sandboxEnv();
  await kubectl(['create', 'namespace', ns]);
  const cm = (name: string, labels: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: ${ns}, labels: {${labels}}, annotations: {note: x}}\ndata: {k: v}\n`;
  await kubectl(['apply', '-f', '-'], { input: [cm('a', 'app: web, tier: fe'), cm('b', 'app: web, tier: be'), cm('c', 'app: db')].join('---\n') });
});

afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--wait=false'], { check: false });
});

describe('k8s_info (kubernetes.core arguments)', () => {
  it('filters with label_selectors and field_selectors lists, returns api_found, never changes (check mode too)', async () => {
    const r = await run({ kind: 'ConfigMap', namespace: ns, label_selectors: ['app=web', 'tier in (fe, be)'] });
    expect(r.status).toBe('ok');
    expect(names(r)).toEqual(['a', 'b']);
    expect(data(r).api_found).toBe(true);
    const f = await run({ kind: 'ConfigMap', namespace: ns, label_selectors: 'app', field_selectors: ['metadata.name=c'] }, true);
    expect(f.status).toBe('ok');
    expect(names(f)).toEqual(['c']);
    // the kplay spellings still work, and combine with the lists
    expect(names(await run({ kind: 'ConfigMap', namespace: ns, label_selector: 'app=web', label_selectors: ['tier=fe'] }))).toEqual(['a']);
  });

  it('reads by name with the api/version aliases and hides hidden_fields', async () => {
    const r = await run({ kind: 'ConfigMap', version: 'v1', name: 'a', namespace: ns, hidden_fields: ['metadata.annotations[note]', 'data'] });
    const [o] = (data(r).resources ?? []) as Record<string, Record<string, unknown>>[];
    expect(o?.metadata?.name).toBe('a');
    expect(o?.metadata?.annotations).not.toHaveProperty('note');
    expect(o?.metadata?.annotations).toHaveProperty(['kubectl.kubernetes.io/last-applied-configuration']);
    expect(o?.data).toBeUndefined();
    expect(o?.metadata?.managedFields).toBeUndefined();
  });

  it('reports api_found: false (ok, empty) for a kind the cluster does not serve', async () => {
    const r = await run({ kind: 'Widget', api_version: 'example.com/v1' });
    expect(r).toMatchObject({ status: 'ok', msg: 'Failed to find API for resource with apiVersion "example.com/v1" and kind "Widget"', data: { resources: [], api_found: false } });
  });

  it('waits for a condition with a reason (wait_condition.reason)', async () => {
    await kubectl(['-n', ns, 'create', 'deployment', 'web', '--image=nginx', '--replicas=1']);
    const r = await run({ kind: 'Deployment', api_version: 'apps/v1', name: 'web', namespace: ns, wait: true, wait_sleep: 1, wait_timeout: 120, wait_condition: { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' } });
    expect(r.status, r.msg).toBe('ok');
    const [o] = (data(r).resources ?? []) as { status: { conditions: { type: string; reason: string }[] } }[];
    expect(o?.status.conditions.find((c) => c.type === 'Available')?.reason).toBe('MinimumReplicasAvailable');
    const wrong = await run({ kind: 'Deployment', api_version: 'apps/v1', name: 'web', namespace: ns, wait: true, wait_timeout: 2, wait_condition: { type: 'Available', reason: 'NotThisReason' } });
    expect(wrong.status).toBe('failed');
  });
});

// Clear errors against the real sandbox (issue 51 item 7): a CRD deleted between two tasks is a
// kind that is no longer served (named, with its group/version and what to do), not `404 page not
// found` nor "0 found"; and a field another field manager took with `kubectl apply --server-side
// --force-conflicts` is drift for `kplay drift` (the field and the manager, exit 3), not an error.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { kplay } from '../helpers/cli.js';
import { kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const CONTEXT = 'sandbox-2';
const suffix = randomBytes(3).toString('hex');
const ns = `clear-${suffix}`;
const group = `gone${suffix}.kplay.test`;
const crdName = `widgets.${group}`;
let env: SandboxEnv;
let tmp: string;

beforeAll(() => {
  env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-clear-'));
});

afterAll(async () => {
  await kubectl(['delete', 'crd', crdName, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  rmSync(tmp, { recursive: true, force: true });
});

const write = (name: string, plays: unknown): string => {
  const file = path.join(tmp, name);
  writeFileSync(file, YAML.stringify(plays));
  return file;
};

describe('a CRD deleted between two tasks', () => {
  it('the next tasks on its kind say the kind is no longer served, naming it, its group/version and what to do', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: crdName },
      spec: { group, scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }] },
    };
    const widget = (name: string): unknown => ({ apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name, namespace: ns }, spec: { size: 1 } });
    const pb = write('crd-gone.yml', [
      {
        hosts: CONTEXT,
        tasks: [
          { name: 'install', k8s_apply: { definition: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, crd, widget('w1')] } },
          { name: 'read it', k8s_info: { api_version: `${group}/v1`, kind: 'Widget', namespace: ns, name: 'w1' }, register: 'before' },
          { name: 'show', debug: { msg: 'before={{ before.resources | length }}' } },
          // someone deletes the CRD (and with it every Widget) while the run goes on
          { name: 'delete the CRD', command: { argv: [path.join(env.binDir, 'kubectl'), '--kubeconfig', env.kubeconfig, '--context', CONTEXT, 'delete', 'crd', crdName, '--wait=true'] } },
          // as when the CRD is missing at the start: api_found false, with why
          { name: 'read it again', k8s_info: { api_version: `${group}/v1`, kind: 'Widget', namespace: ns, name: 'w1' }, register: 'again' },
          { name: 'list them', k8s_info: { api_version: `${group}/v1`, kind: 'Widget', namespace: ns }, register: 'listed' },
          { name: 'show again', debug: { msg: 'again={{ again.api_found }}/{{ again.resources | length }} listed={{ listed.api_found }}/{{ listed.resources | length }} why={{ again.msg }}' } },
          { name: 'apply another', k8s_apply: { definition: widget('w2') } },
        ],
      },
    ]);
    const r = await kplay(['run', pb, '-i', env.inventory, '--no-lock'], { timeoutMs: 180_000 });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stdout).toContain('before=1');
    const said = `no kind Widget in apiVersion ${group}/v1 on cluster ${CONTEXT} any more: the kind is no longer served — its CustomResourceDefinition ${crdName} was deleted after this run started`;
    // the GET (which used to read as "not found") and the LIST find no API, as when the CRD is missing at the start; the apply fails saying why
    expect(r.stdout).toContain('again=False/0 listed=False/0 why=' + said);
    expect(r.stdout.split(said).length - 1, r.stdout).toBe(2);
    expect(r.stdout).toContain('install the CRD again before this task');
    expect(r.stdout).not.toMatch(/failed: 404 NotFound: 404 page not found/);
  });
});

describe('kplay drift and a field another manager took with --force-conflicts', () => {
  const cm = (v: string): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'taken', namespace: ns }, data: { v, keep: 'same' } });
  let pb: string;

  beforeAll(async () => {
    pb = write('taken.yml', [{ hosts: CONTEXT, tasks: [{ name: 'config', k8s_apply: { definition: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, cm('1')] } }] }]);
    const r = await kplay(['run', pb, '-i', env.inventory, '--no-lock'], { timeoutMs: 120_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // another applier takes .data.v (field manager "kubectl", an Apply: not a manual edit kplay takes back)
    await kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], { context: CONTEXT, input: JSON.stringify(cm('2')) });
  }, 150_000);

  it('is drift: the field and its manager, exit 3', async () => {
    const json = await kplay(['drift', pb, '-i', env.inventory, '--limit', CONTEXT, '--output', 'json'], { timeoutMs: 120_000 });
    expect(json.code, json.stdout + json.stderr).toBe(3);
    const report = JSON.parse(json.stdout) as { clusters: Record<string, { state: string; errors: unknown[]; drift: { object: string; fields: { path: string; change: string; manager?: string; operation?: string; kplay_owns: boolean }[] }[] }> };
    const c = report.clusters[CONTEXT];
    expect(c?.state).toBe('drifted');
    expect(c?.errors).toEqual([]);
    expect(c?.drift).toEqual([expect.objectContaining({ object: `ConfigMap ${ns}/taken`, fields: [expect.objectContaining({ path: '.data.v', change: 'changed', manager: 'kubectl', operation: 'Apply', kplay_owns: false })] })]);
    const text = await kplay(['drift', pb, '-i', env.inventory, '--limit', CONTEXT], { timeoutMs: 120_000 });
    expect(text.code, text.stdout + text.stderr).toBe(3);
    expect(text.stdout).toContain('~ .data.v  changed by kubectl (Apply');
    expect(text.stdout).toContain('drift found (exit 3)');
    // what a real run would do: fail on the conflict, naming the manager and the field (the check says so too)
    const check = await kplay(['run', pb, '-i', env.inventory, '--no-lock', '--check'], { timeoutMs: 120_000 });
    expect(check.code, check.stdout + check.stderr).toBe(2);
    expect(check.stdout).toMatch(/conflict with \\?"kubectl\\?": \.data\.v/);
    expect((await kubectl(['-n', ns, 'get', 'configmap', 'taken', '-o', 'jsonpath={.data.v}'], { context: CONTEXT })).stdout).toBe('2');
  });
});

// The k8s lookup (kubernetes.core.k8s) against the real sandbox: templates render synchronously,
// so the executor reads the looked-up objects with the task's cluster client first.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay, repoRoot } from '../helpers/cli.js';
import { kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const ns = `k8s-lookup-${randomBytes(3).toString('hex')}`;
let env: SandboxEnv;

beforeAll(async () => {
  env = sandboxEnv();
  await kubectl(['create', 'namespace', ns]);
  await kubectl(['-n', ns, 'create', 'configmap', 'settings', '--from-literal=level=debug']);
  for (const name of ['b-two', 'a-one']) {
    await kubectl(['-n', ns, 'create', 'configmap', name, '--from-literal=x=1']);
    await kubectl(['-n', ns, 'label', 'configmap', name, 'app=lookup']);
  }
});

afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--wait=false'], { check: false });
});

describe('lookup/query kubernetes.core.k8s', () => {
  it('reads one object, a missing one, and a labelled list from the task cluster', async () => {
    const playbook = path.join(repoRoot, 'test/fixtures/k8s/lookup.yml');
    const r = await kplay(['run', playbook, '-i', env.inventory, '--limit', 'sandbox-1', '-e', JSON.stringify({ ns }), '--no-lock', '-o', 'json'], { timeoutMs: 120_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const msgs = jsonEvents(r.stdout).filter((e) => e.type === 'task_result' && !e.loop_summary).map((e) => String(e.msg ?? ''));
    expect(msgs).toContain('level=debug kind=ConfigMap');
    expect(msgs).toContain('missing=0');
    const listed = msgs.filter((m) => m === 'a-one' || m === 'b-two');
    expect(listed).toEqual(['a-one', 'b-two']);
  });
});

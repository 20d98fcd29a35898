// wait_for (and k8s_info) against the real sandbox, through the built CLI.
// Runs use --no-lock: these tests are about the k8s modules, and other engineers' concurrent runs hold the cluster lock.
// kwok only simulates happy pods, so a bad image is simulated by patching the status of a pod
// that can never be scheduled (nodeSelector matches no node): kwok only manages pods bound to its
// nodes, so it never overwrites that status (documented in test/fixtures/k8s/bad.yaml).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kplay, repoRoot } from '../helpers/cli.js';
import { kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const fixtures = path.join(repoRoot, 'test/fixtures/k8s');
const ns = `k8s-wait-${randomBytes(3).toString('hex')}`;
let env: SandboxEnv;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  env = sandboxEnv();
  await kubectl(['create', 'namespace', ns]);
});

afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--wait=false'], { check: false });
});

function run(playbook: string, vars: Record<string, unknown>): ReturnType<typeof kplay> {
  return kplay(['run', path.join(fixtures, playbook), '-i', env.inventory, '-e', JSON.stringify(vars), '--no-lock'], { timeoutMs: 200_000 });
}

describe('wait_for', () => {
  it('waits for a 3-replica rollout (readiness, that, condition) and k8s_info reads it', async () => {
    await kubectl(['-n', ns, 'create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=3']);
    const r = await run('wait.yml', { ns, replicas: 3 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/ok: \[sandbox-1\] => Deployment [^ ]+\/web: ready after/);
    expect(r.stdout).toContain('ready=3');
    const ready = (await kubectl(['-n', ns, 'get', 'deploy', 'web', '-o', 'jsonpath={.status.readyReplicas}'])).stdout;
    expect(ready).toBe('3');
  });

  it('fails fast on a bad image with the reason, well before the timeout', async () => {
    const name = 'bad-image';
    const started = Date.now();
    const pending = run('bad.yml', { ns, name, timeout: 150 });
    // wait for the (unschedulable) pod, then give it the status a kubelet would report
    let pod = '';
    for (let i = 0; i < 100 && !pod; i++) {
      pod = (await kubectl(['-n', ns, 'get', 'pods', '-l', `app=${name}`, '-o', 'jsonpath={.items[0].metadata.name}'], { check: false })).stdout.trim();
      if (!pod) await sleep(300);
    }
    expect(pod).not.toBe('');
    const status = { status: { containerStatuses: [{ name: 'c', ready: false, restartCount: 0, image: 'registry.invalid/nope:1', imageID: '', state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "registry.invalid/nope:1"' } } }] } };
    await kubectl(['-n', ns, 'patch', 'pod', pod, '--subresource=status', '--type=merge', '-p', JSON.stringify(status)]);
    const r = await pending;
    const elapsed = Date.now() - started;
    expect(r.code, r.stdout).toBe(2);
    expect(r.stdout).toContain('ImagePullBackOff');
    expect(r.stdout).toContain(`Deployment ${ns}/${name} will not become ready`);
    expect(elapsed).toBeLessThan(60_000);
  });

  it('on timeout lists what was not ready', async () => {
    const name = 'never-ready';
    const r = await run('bad.yml', { ns, name, timeout: 4 });
    expect(r.code, r.stdout).toBe(2);
    expect(r.stdout).toContain('timed out after 4s waiting for readiness');
    expect(r.stdout).toMatch(new RegExp(`not ready: Deployment ${ns}/${name}: 0/1 ready`));
  });

  it('waits until an object is deleted (state: absent) and k8s_info then finds nothing', async () => {
    await kubectl(['-n', ns, 'create', 'configmap', 'gone-soon']);
    const p = kplay(['run', path.join(fixtures, 'absent.yml'), '-i', env.inventory, '-e', JSON.stringify({ ns }), '--no-lock']);
    await sleep(1500);
    await kubectl(['-n', ns, 'delete', 'configmap', 'gone-soon']);
    const r = await p;
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toContain('absent after');
    expect(r.stdout).toContain('0 ConfigMap objects found');
  });
});

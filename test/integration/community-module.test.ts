// The example community module (examples/kplay-module-config-checksum, one file importing only
// `kplay/sdk`) installed as an npm package in a project outside the kplay repository, as a user
// would: kplay finds it in node_modules/kplay-module-*, resolves its `kplay/sdk` import to the
// kplay that loads it, and runs it against the sandbox — idempotent, check mode, a real rollout.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kplay, repoRoot } from '../helpers/cli.js';
import { kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const ns = `community-${randomBytes(3).toString('hex')}`;
const project = mkdtempSync(path.join(os.tmpdir(), 'kplay-community-'));
let env: SandboxEnv;

const run = (level: string, extra: string[] = []): ReturnType<typeof kplay> => kplay(['run', 'site.yml', '-i', env.inventory, '--limit', 'sandbox-1', '--no-lock', '-e', JSON.stringify({ level }), ...extra], { cwd: project });
const checksum = async (): Promise<string> => (await kubectl(['-n', ns, 'get', 'deployment', 'web', '-o', 'jsonpath={.spec.template.metadata.annotations.checksum/config}'])).stdout;

beforeAll(() => {
  env = sandboxEnv();
  cpSync(path.join(repoRoot, 'examples/kplay-module-config-checksum'), path.join(project, 'node_modules/kplay-module-config-checksum'), { recursive: true });
  writeFileSync(
    path.join(project, 'site.yml'),
    `- hosts: all
  tasks:
    - name: app
      k8s_apply:
        definition:
          - { apiVersion: v1, kind: Namespace, metadata: { name: ${ns} } }
          - { apiVersion: v1, kind: ConfigMap, metadata: { name: web-settings, namespace: ${ns} }, data: { level: "{{ level }}" } }
          - { apiVersion: v1, kind: Secret, metadata: { name: web-credentials, namespace: ${ns} }, stringData: { password: s3cr3t-community } }
          - apiVersion: apps/v1
            kind: Deployment
            metadata: { name: web, namespace: ${ns} }
            spec:
              replicas: 1
              selector: { matchLabels: { app: web } }
              template:
                metadata: { labels: { app: web } }
                spec: { containers: [{ name: web, image: "registry.k8s.io/pause:3.9" }] }
    - name: roll on config change
      config_checksum: { name: web, namespace: ${ns}, configmaps: [web-settings], secrets: [web-credentials] }
`,
  );
});
afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found'], { check: false });
  rmSync(project, { recursive: true, force: true });
});

describe('a community module installed as an npm package outside the repository', () => {
  it('is listed by kplay modules from the project', async () => {
    const r = await kplay(['modules'], { cwd: project });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^config_checksum\s+Roll a workload/m);
  });

  it('sets the checksum, then changes nothing on a rerun', async () => {
    const first = await run('info');
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toMatch(/changed: \[sandbox-1\] => Deployment .*\/web: configuration changed, rolling/);
    const sum = await checksum();
    expect(sum).toMatch(/^[0-9a-f]{64}$/);
    const again = await run('info');
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/sandbox-1\s+: ok=2\s+changed=0/);
    expect(await checksum()).toBe(sum);
  });

  it('check mode writes nothing; a config change rolls the workload', async () => {
    const before = await checksum();
    const check = await run('debug', ['--check', '--diff']);
    expect(check.code).toBe(0);
    // the ConfigMap would change; the checksum task reads the live (unchanged) ConfigMap in check mode
    expect(check.stdout).toMatch(/1 would be configured, 3 unchanged: configured ConfigMap .*\/web-settings/);
    expect(await checksum()).toBe(before);
    const r = await run('debug');
    expect(r.code).toBe(0);
    const after = await checksum();
    expect(after).not.toBe(before);
    expect(r.stdout).not.toContain('s3cr3t-community');
  });
});

// kplay as a user gets it: `npm pack` of kplay, of the example community module (TypeScript,
// importing only kplay/sdk) and of the example role, installed as dependencies of a project outside
// the repository; a playbook there uses both against the sandbox, and a second run changes nothing.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const exec = promisify(execFile);
const ns = `packed-${randomBytes(3).toString('hex')}`;
const work = mkdtempSync(path.join(os.tmpdir(), 'kplay-pack-'));
const project = path.join(work, 'project');
let env: SandboxEnv;

/** `npm pack` of a directory into `work`; returns the tarball's file name. */
async function pack(dir: string): Promise<string> {
  const before = new Set(readdirSync(work));
  await exec('npm', ['pack', '--silent', '--pack-destination', work, dir], { cwd: work, maxBuffer: 16 << 20 });
  const made = readdirSync(work).filter((f) => f.endsWith('.tgz') && !before.has(f));
  if (made.length !== 1 || !made[0]) throw new Error(`npm pack ${dir} made ${made.join(', ') || 'nothing'}`);
  return made[0];
}

async function kplayInProject(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await exec(path.join(project, 'node_modules/.bin/kplay'), args, { cwd: project, env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 64 << 20 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : 1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

beforeAll(async () => {
  env = sandboxEnv();
  const kplayTgz = await pack(repoRoot); // npm test built dist/ before the tests
  const moduleTgz = await pack(path.join(repoRoot, 'examples/kplay-module-config-checksum'));
  const roleTgz = await pack(path.join(repoRoot, 'examples/kplay-role-namespace-baseline'));
  mkdirSync(project);
  writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'ops-playbooks', private: true, dependencies: { kplay: `file:../${kplayTgz}`, 'kplay-module-config-checksum': `file:../${moduleTgz}`, 'kplay-role-namespace-baseline': `file:../${roleTgz}` } }, null, 2),
  );
  await exec('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: project, maxBuffer: 64 << 20, timeout: 600_000 });
  writeFileSync(
    path.join(project, 'site.yml'),
    `- hosts: all
  roles:
    - role: namespace-baseline
      baseline_namespace: ${ns}
      baseline_team: shop
      baseline_pods: 20
  tasks:
    - name: app
      k8s_apply:
        definition:
          - { apiVersion: v1, kind: ConfigMap, metadata: { name: web-settings, namespace: ${ns} }, data: { level: info } }
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
      config_checksum: { name: web, namespace: ${ns}, configmaps: [web-settings] }
`,
  );
}, 900_000);

afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found'], { check: false });
  rmSync(work, { recursive: true, force: true });
});

describe('kplay installed from npm pack with a community module and a role', () => {
  it('lists the TypeScript community module and validates the playbook (role arguments included)', async () => {
    const mods = await kplayInProject(['modules']);
    expect(mods.code, mods.stderr).toBe(0);
    expect(mods.stdout).toMatch(/^config_checksum\s+Roll a workload/m);
    const v = await kplayInProject(['validate', 'site.yml', '-i', env.inventory]);
    expect(v.code, v.stderr + v.stdout).toBe(0);
  });

  it('runs the playbook: the role lays the namespace baseline, the module sets the checksum', async () => {
    const r = await kplayInProject(['run', 'site.yml', '-i', env.inventory, '--limit', 'sandbox-1', '--no-lock']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain("TASK [namespace-baseline : Validating arguments against arg spec 'main' - namespace baseline]");
    expect(r.stdout).toContain(`${ns}: 4 created, 0 configured, 0 unchanged`);
    expect((await kubectl(['get', 'namespace', ns, '-o', 'jsonpath={.metadata.labels.team}'])).stdout).toBe('shop');
    expect((await kubectl(['-n', ns, 'get', 'resourcequota', 'baseline', '-o', 'jsonpath={.spec.hard.pods}'])).stdout).toBe('20');
    expect((await kubectl(['-n', ns, 'get', 'networkpolicy', 'default-deny-ingress', '-o', 'name'])).stdout.trim()).toBe('networkpolicy.networking.k8s.io/default-deny-ingress');
    expect((await kubectl(['-n', ns, 'get', 'deployment', 'web', '-o', 'jsonpath={.spec.template.metadata.annotations.checksum/config}'])).stdout).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a second run changes nothing and says so', async () => {
    const r = await kplayInProject(['run', 'site.yml', '-i', env.inventory, '--limit', 'sandbox-1', '--no-lock']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain(`${ns}: 0 created, 0 configured, 4 unchanged`);
    expect(r.stdout).toMatch(/sandbox-1\s+: ok=\d+\s+changed=0 /);
  });
});

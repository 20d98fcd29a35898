// One hand edit is one drifted object: when two tasks manage the same object — a check-mode plan
// task and the upgrade it guards (one Helm release, as in playbooks/upgrade.yml), two k8s_apply sets
// sharing a ConfigMap — `kplay drift` reports the object once per cluster, with its diff once,
// naming both tasks, and counts it once (text, JSON, JUnit). A values change of the release is
// one drifted release, not two.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kplay, repoRoot } from '../helpers/cli.js';
import { kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const CONTEXT = 'sandbox-3';
const playbook = path.join(repoRoot, 'test/fixtures/drift/managed-twice.yml');
const ns = `drift-once-${randomBytes(3).toString('hex')}`;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-drift-once-'));
let env: SandboxEnv;

interface Entry {
  object: string;
  kind?: string;
  name?: string;
  fields: { path: string; change: string; manager?: string }[];
  tasks: { task: string; msg?: string }[];
  diff: { label: string }[];
}
interface Report {
  drift: boolean;
  clusters: Record<string, { state: string; objects: number; drifted_objects: number; drift: Entry[] }>;
}

const kp = (args: string[]): ReturnType<typeof kplay> =>
  kplay(args, { env: { KPLAY_HELM: path.join(env.binDir, 'helm'), HELM_CACHE_HOME: path.join(tmp, 'helm/cache'), HELM_CONFIG_HOME: path.join(tmp, 'helm/config'), HELM_DATA_HOME: path.join(tmp, 'helm/data'), KPLAY_RECORD_DIR: path.join(tmp, 'records') }, timeoutMs: 180_000 });
const drift = (extra: string[] = [], vars: Record<string, unknown> = {}): ReturnType<typeof kplay> => kp(['drift', playbook, '-i', env.inventory, '--limit', CONTEXT, '-e', JSON.stringify({ ns, ...vars }), ...extra]);
const count = (text: string, s: string): number => text.split(s).length - 1;

beforeAll(async () => {
  env = sandboxEnv();
  const r = await kp(['run', playbook, '-i', env.inventory, '--limit', CONTEXT, '-e', JSON.stringify({ ns }), '--no-lock']);
  if (r.code !== 0) throw new Error(`setup run failed (exit ${String(r.code)}):\n${r.stdout}\n${r.stderr}`);
}, 200_000);

afterAll(async () => {
  rmSync(tmp, { recursive: true, force: true });
  await kubectl(['delete', 'namespace', ns, '--wait=false'], { context: CONTEXT, check: false });
});

describe('kplay drift: an object two tasks manage', () => {
  it('is in sync after the run, counting each managed object once', async () => {
    const r = await drift(['--output', 'json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const c = (JSON.parse(r.stdout) as Report).clusters[CONTEXT];
    expect(c?.state).toBe('in sync');
    // the release's ConfigMap, Deployment and Service, and the ConfigMaps shared and own
    expect(c?.objects).toBe(5);
  });

  it('one hand edit of each is reported once, naming both tasks: text', async () => {
    const deployment = (await kubectl(['-n', ns, 'get', 'deployments', '-o', 'jsonpath={.items[0].metadata.name}'], { context: CONTEXT })).stdout;
    await kubectl(['-n', ns, 'scale', 'deployment', deployment, '--replicas=5'], { context: CONTEXT });
    await kubectl(['-n', ns, 'patch', 'configmap', 'shared', '--type=merge', '-p', '{"data":{"mode":"edited"}}'], { context: CONTEXT });

    const r = await drift();
    expect(r.code, r.stdout + r.stderr).toBe(3);
    expect(r.stdout).toContain(`${CONTEXT}: DRIFT in 2 object(s), reported by 4 task(s)`);
    expect(r.stdout).toContain(`  - Deployment ${ns}/${deployment}  (tasks: Plan the release; Upgrade the release)`);
    expect(r.stdout).toContain(`  - ConfigMap ${ns}/shared  (tasks: settings; more settings)`);
    expect(count(r.stdout, `--- before: Deployment ${ns}/${deployment}`)).toBe(1);
    expect(count(r.stdout, `--- before: ConfigMap ${ns}/shared`)).toBe(1);
    expect(count(r.stdout, '~ .spec.replicas  changed by kubectl')).toBe(1);
    expect(count(r.stdout, '~ .data.mode  changed by kubectl-patch')).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`^${CONTEXT}\\s+drifted\\s+5\\s+2\\s+0$`, 'm'));
  });

  it('JSON: one entry per object, with its tasks', async () => {
    const r = await drift(['--output', 'json']);
    expect(r.code).toBe(3);
    const c = (JSON.parse(r.stdout) as Report).clusters[CONTEXT];
    expect(c?.objects).toBe(5);
    expect(c?.drifted_objects).toBe(2);
    expect(c?.drift.map((d) => [d.object, d.tasks.map((t) => t.task), d.fields.map((f) => f.path), d.diff.length])).toEqual([
      [expect.stringMatching(new RegExp(`^Deployment ${ns}/`)), ['Plan the release', 'Upgrade the release'], ['.spec.replicas'], 1],
      [`ConfigMap ${ns}/shared`, ['settings', 'more settings'], ['.data.mode'], 1],
    ]);
  });

  it('JUnit: one failing test case per object', async () => {
    const r = await drift(['--output', 'junit']);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(`<testsuite name="${CONTEXT}" tests="2" failures="2" errors="0">`);
    expect(r.stdout).toMatch(new RegExp(`<testcase classname="${CONTEXT}" name="Deployment ${ns}/[^"]+"><failure type="drift" message="Deployment ${ns}/[^ ]+ drifted \\(Plan the release; Upgrade the release\\)">`));
    expect(r.stdout).toContain(`<testcase classname="${CONTEXT}" name="ConfigMap ${ns}/shared"><failure type="drift" message="ConfigMap ${ns}/shared drifted (settings; more settings)">`);
  });

  it('a values change of the release is one drifted release, with its diff once', async () => {
    const r = await drift(['--output', 'json'], { replicas: 3 });
    expect(r.code).toBe(3);
    const c = (JSON.parse(r.stdout) as Report).clusters[CONTEXT];
    const release = c?.drift.filter((d) => d.object === `helm release ${ns}/twice`) ?? [];
    expect(release).toHaveLength(1);
    expect(release[0]?.tasks.map((t) => t.task)).toEqual(['Plan the release', 'Upgrade the release']);
    expect(release[0]?.diff).toHaveLength(1);
    const text = await drift([], { replicas: 3 });
    expect(count(text.stdout, `--- before: helm release ${ns}/twice`)).toBe(1);
  });
});

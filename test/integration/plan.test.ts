// Change management against the real sandbox: a plan is written, shown, approved and carried out;
// a hand edit of a planned object, a changed input file or an edited plan makes `run --plan`
// refuse (exit 5) naming what moved, without writing anything; `require_approval` keeps changes
// out of a cluster until an approved plan carries them.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kplay } from '../helpers/cli.js';
import { auditSnapshot, kubectl, sandboxEnv, SANDBOX_ADMIN_USER, type SandboxEnv } from '../sandbox/env.js';

const ns = `plan-${randomBytes(3).toString('hex')}`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-plan-'));
const records = path.join(dir, '.records');
let env: SandboxEnv;

function playbook(replicas: number, extra = ''): string {
  return `- hosts: sandbox-1:sandbox-2
  ${extra}tasks:
    - name: app
      k8s_apply:
        definition:
          - { apiVersion: v1, kind: Namespace, metadata: { name: ${ns} } }
          - { apiVersion: v1, kind: ConfigMap, metadata: { name: settings, namespace: ${ns} }, data: { level: "{{ level | default: 'info' }}" } }
          - apiVersion: apps/v1
            kind: Deployment
            metadata: { name: web, namespace: ${ns} }
            spec:
              replicas: ${replicas}
              selector: { matchLabels: { app: web } }
              template:
                metadata: { labels: { app: web } }
                spec: { containers: [{ name: web, image: "registry.k8s.io/pause:3.9" }] }
`;
}
const pb = path.join(dir, 'app.yml');
const planFile = path.join(dir, 'plan.json');
const k = (args: string[], opts: { cwd?: string } = {}): ReturnType<typeof kplay> => kplay(args, { cwd: opts.cwd ?? dir, env: { KPLAY_RECORD_DIR: records, KUBECONFIG: env.kubeconfig } });

beforeAll(async () => {
  env = sandboxEnv();
  writeFileSync(pb, playbook(1));
  const r = await k(['run', pb, '-i', env.inventory, '--no-lock']);
  if (r.code !== 0) throw new Error(`setup failed: ${r.stdout}${r.stderr}`);
});
afterAll(async () => {
  for (const context of ['sandbox-1', 'sandbox-2']) await kubectl(['delete', 'namespace', ns, '--wait=false'], { context, check: false });
  rmSync(dir, { recursive: true, force: true });
});

describe('plan, show, approve, run --plan', () => {
  it('writes a plan with the changes per cluster and the inputs; show prints it', async () => {
    writeFileSync(pb, playbook(3));
    const r = await k(['plan', pb, '-i', env.inventory, '-o', planFile]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`plan written to ${planFile}`);
    const plan = JSON.parse(readFileSync(planFile, 'utf8')) as { clusters: Record<string, { task: string; module: string; diff: { label: string }[] }[]>; inputs: { files: Record<string, string> }; digest: string; approvals: unknown[] };
    for (const c of ['sandbox-1', 'sandbox-2']) expect(plan.clusters[c]?.[0]).toMatchObject({ task: 'app', module: 'k8s_apply', diff: [{ label: `Deployment ${ns}/web` }] });
    expect(Object.keys(plan.inputs.files)).toContain('app.yml');
    expect(plan.approvals).toEqual([]);
    const show = await k(['show', planFile]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('not approved');
    expect(show.stdout).toMatch(/-\s+replicas: 1\n\s+\+\s+replicas: 3/);
  });

  it('refuses when a planned object was edited by hand since the plan, naming cluster, task and object; writes nothing', async () => {
    await kubectl(['-n', ns, 'scale', 'deployment', 'web', '--replicas=2'], { context: 'sandbox-2' });
    const audit = auditSnapshot(env.cluster('sandbox-1').auditLog);
    const r = await k(['run', '--plan', planFile, '--no-lock']);
    expect(r.code, r.stdout + r.stderr).toBe(5);
    expect(r.stderr).toContain(`cluster sandbox-2, task "app", Deployment ${ns}/web: its live state moved since the plan`);
    expect(r.stderr).not.toContain('cluster sandbox-1');
    await audit.settle();
    expect(audit.events({ user: SANDBOX_ADMIN_USER, namespace: ns }).filter((e) => !e.requestURI.includes('dryRun='))).toEqual([]);
    expect((await kubectl(['-n', ns, 'get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas}'])).stdout).toBe('1');
  });

  it('refuses when an input file changed since the plan, naming the file', async () => {
    await kubectl(['-n', ns, 'scale', 'deployment', 'web', '--replicas=1'], { context: 'sandbox-2' });
    writeFileSync(path.join(dir, 'vars.yml'), 'level: debug\n');
    const r = await k(['run', '--plan', planFile, '--no-lock']);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('input file added: vars.yml');
    rmSync(path.join(dir, 'vars.yml'));
  });

  it('approve binds to the digest; the approved plan runs, and the run record names the plan and who approved', async () => {
    const a = await k(['approve', planFile, '--as', 'alice', '--comment', 'CHG-42']);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toMatch(/approved .*plan\.json \(digest [0-9a-f]{16}\) by alice at /);
    expect((await k(['show', planFile])).stdout).toContain('approved by alice at');
    const r = await k(['run', '--plan', planFile, '--no-lock', '-o', 'json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    for (const context of ['sandbox-1', 'sandbox-2']) expect((await kubectl(['-n', ns, 'get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas}'], { context })).stdout).toBe('3');
    const runId = String((r.stdout.split('\n').map((l) => (l.startsWith('{') ? (JSON.parse(l) as Record<string, unknown>) : {})).find((e) => e.type === 'run_start') ?? {}).run_id);
    const rec = readFileSync(path.join(records, `${runId}.jsonl`), 'utf8').split('\n')[0] ?? '';
    const header = JSON.parse(rec) as { plan: { file: string; digest: string; approvals: { by: string; comment: string }[] } };
    const plan = JSON.parse(readFileSync(planFile, 'utf8')) as { digest: string };
    expect(header.plan).toMatchObject({ digest: plan.digest, approvals: [{ by: 'alice', comment: 'CHG-42' }], replan: false });
    // carried out: a second run of the same plan now finds nothing to change, and refuses
    const again = await k(['run', '--plan', planFile, '--no-lock']);
    expect(again.code).toBe(5);
    expect(again.stderr).toContain('now nothing would change');
  });

  it('an edited plan loses its approval and is refused', async () => {
    const plan = JSON.parse(readFileSync(planFile, 'utf8')) as { clusters: Record<string, { msg: string }[]> };
    const first = plan.clusters['sandbox-1']?.[0];
    if (first) first.msg = 'nothing to see here';
    writeFileSync(planFile, JSON.stringify(plan));
    const show = await k(['show', planFile]);
    expect(show.code).toBe(5);
    expect(show.stdout).toContain('MODIFIED after it was made');
    expect(show.stdout).toContain('NOT VALID');
    const r = await k(['run', '--plan', planFile, '--no-lock']);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('was modified after it was made');
    expect((await k(['approve', planFile])).code).toBe(5);
  });
});

describe('require_approval', () => {
  const guarded = path.join(dir, 'guarded.yml');
  beforeAll(() => writeFileSync(guarded, playbook(2, 'vars: { require_approval: true }\n  ')));
  it('a run without an approved plan changes nothing and names the clusters', async () => {
    const r = await k(['run', guarded, '-i', env.inventory, '--no-lock']);
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/sandbox-1 requires an approved plan \(require_approval in play/);
    expect(r.stderr).toContain('kplay approve plan.json');
    expect((await k(['run', guarded, '-i', env.inventory, '--no-lock', '--check'])).code).toBe(0);
    const p = path.join(dir, 'guarded.plan.json');
    expect((await k(['plan', guarded, '-i', env.inventory, '-o', p])).code).toBe(0);
    const unapproved = await k(['run', '--plan', p, '--no-lock']);
    expect(unapproved.code).toBe(5);
    expect(unapproved.stderr).toContain('approve it first');
    expect((await k(['approve', p, '--as', 'bob'])).code).toBe(0);
    expect((await k(['run', '--plan', p, '--no-lock', '--replan'])).code).toBe(5);
    const ok = await k(['run', '--plan', p, '--no-lock']);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect((await kubectl(['-n', ns, 'get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas}'])).stdout).toBe('2');
    expect(readdirSync(records).length).toBeGreaterThan(0);
  });
});

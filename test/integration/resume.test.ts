// Resuming an interrupted window and approval gates, against the real sandbox.
// - A serial rollout over 3 clusters is interrupted (SIGINT) during cluster 2; `--resume last`
//   finishes clusters 2 and 3 and sends cluster 1 no request at all (its audit log proves it).
// - An `approve` gate blocks its cluster until a second process approves it; a rejection fails it.
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kplay } from '../helpers/cli.js';
import { auditSnapshot, kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const ns = `resume-${randomBytes(3).toString('hex')}`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-resume-'));
const records = path.join(dir, 'records');
let env: SandboxEnv;
const CLUSTERS = ['sandbox-1', 'sandbox-2', 'sandbox-3'];

const k = (args: string[], onSpawn?: (c: ChildProcess) => void): ReturnType<typeof kplay> => kplay(args, { cwd: dir, env: { KPLAY_RECORD_DIR: records }, onSpawn, timeoutMs: 120_000 });

/** Resolves when `text` appears in the child's stdout. */
function waitFor(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = pattern.exec(out);
      if (m) resolve(m[0]);
    });
  });
}

beforeAll(() => {
  env = sandboxEnv();
  writeFileSync(
    path.join(dir, 'rollout.yml'),
    `- hosts: sandbox-1:sandbox-2:sandbox-3
  serial: 1
  tasks:
    - name: namespace and config
      k8s_apply:
        definition:
          - { apiVersion: v1, kind: Namespace, metadata: { name: ${ns} } }
          - { apiVersion: v1, kind: ConfigMap, metadata: { name: release, namespace: ${ns} }, data: { version: "2" } }
    - name: soak
      pause: { seconds: 3 }
    - name: mark done
      k8s_apply:
        definition: { apiVersion: v1, kind: ConfigMap, metadata: { name: done, namespace: ${ns} }, data: { ok: "yes" } }
`,
  );
  writeFileSync(
    path.join(dir, 'gated.yml'),
    `- hosts: sandbox-1:sandbox-2
  serial: 1
  tasks:
    - name: go / no-go
      approve: { gate: prod-go, timeout: 60, message: check the canary }
      when: inventory_hostname == 'sandbox-2'
    - name: after
      debug: { msg: "after the gate on {{ inventory_hostname }}" }
`,
  );
});
afterAll(async () => {
  for (const context of CLUSTERS) await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found'], { context, check: false });
  rmSync(dir, { recursive: true, force: true });
});

describe('--resume', () => {
  it('an upgrade interrupted during cluster 2 of 3 resumes and finishes 2 and 3 without touching cluster 1', async () => {
    let child: ChildProcess | undefined;
    const first = k(['run', 'rollout.yml', '-i', env.inventory, '--no-lock', '-o', 'json'], (c) => {
      child = c;
      void waitFor(c, /"type":"play_start"[^\n]*"batch":2/).then(() => setTimeout(() => c.kill('SIGINT'), 1500));
    });
    const r1 = await first;
    expect(child).toBeDefined();
    expect(r1.code, r1.stdout.slice(-2000) + r1.stderr).toBe(130);
    const journal = readdirSync(records).find((f) => f.endsWith('.journal'));
    expect(journal).toBeDefined();
    expect(readFileSync(path.join(records, journal ?? ''), 'utf8')).toContain('{"type":"done","play":0,"cluster":"sandbox-1"}');
    // cluster 2 started (its config exists) but did not finish; cluster 3 was not reached
    expect((await kubectl(['-n', ns, 'get', 'configmap', 'done', '--ignore-not-found', '-o', 'name'], { context: 'sandbox-2' })).stdout.trim()).toBe('');
    expect((await kubectl(['get', 'namespace', ns, '--ignore-not-found', '-o', 'name'], { context: 'sandbox-3' })).stdout.trim()).toBe('');

    const audit1 = auditSnapshot(env.cluster('sandbox-1').auditLog);
    const r2 = await k(['run', '--resume', 'last', '--no-lock', '-o', 'json']);
    expect(r2.code, r2.stdout.slice(-2000) + r2.stderr).toBe(0);
    expect(r2.stderr).toMatch(/resuming run \d{8}T\d{9}-[0-9a-f]{6}/);
    expect(r2.stderr).toContain("finished on sandbox-1");
    for (const context of ['sandbox-2', 'sandbox-3']) expect((await kubectl(['-n', ns, 'get', 'configmap', 'done', '-o', 'jsonpath={.data.ok}'], { context })).stdout).toBe('yes');
    await audit1.settle();
    const runId = String((r2.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>).find((e) => e.type === 'run_start') ?? {}).run_id);
    expect(audit1.events({ namespace: ns }).filter((e) => e.userAgent.startsWith('kplay'))).toEqual([]);
    // nothing of this run either (the sandbox is shared: other kplay runs may be at work on sandbox-1 meanwhile):
    // no lock, no record, nothing about the namespace
    const mine = (e: { name?: string; requestURI: string }): boolean => e.name === ns || e.requestURI.includes(runId.toLowerCase()) || e.requestURI.includes(`/${ns}`);
    expect(audit1.events().filter((e) => e.userAgent.startsWith('kplay') && mine(e))).toEqual([]);
    // the resumed run names the run it resumed
    const header = JSON.parse(readFileSync(path.join(records, `${runId}.jsonl`), 'utf8').split('\n')[0] ?? '{}') as { resumed_from?: string };
    expect(header.resumed_from).toBe(journal?.replace(/\.journal$/, ''));
  });

  it('an unknown run is a clear usage error', async () => {
    const r = await k(['run', '--resume', '20990101T000000000-000000', '--no-lock']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no journal of run 20990101T000000000-000000');
  });
});

describe('approval gates', () => {
  it('blocks the gated cluster until a second process approves; the result names the approver', async () => {
    let approved = '';
    let runId = '';
    const r = await k(['run', 'gated.yml', '-i', env.inventory, '--no-lock', '-o', 'json'], (c) => {
      void waitFor(c, /"run_id":"[^"]+"/).then(async (m) => {
        runId = m.split('"')[3] ?? '';
        // wait until the gate is open on sandbox-2, and check the run is held there
        for (let i = 0; i < 100; i++) {
          const cm = await kubectl(['-n', 'kplay-system', 'get', 'configmaps', '-l', 'kplay.dev/gate=prod-go', '-o', 'name'], { context: 'sandbox-2', check: false });
          if (cm.stdout.includes(runId.toLowerCase())) break;
          await new Promise((res) => setTimeout(res, 200));
        }
        await new Promise((res) => setTimeout(res, 1000));
        approved = new Date().toISOString();
        const a = await k(['approve', runId, '--gate', 'prod-go', '-i', env.inventory, '--as', 'carol', '--comment', 'dashboards green']);
        if (a.code !== 0) throw new Error(a.stderr);
      });
    });
    expect(r.code, r.stdout.slice(-2000) + r.stderr).toBe(0);
    const events = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { type: string; task?: string; cluster?: string; msg?: string; duration_ms?: number });
    const gate = events.find((e) => e.type === 'task_result' && e.task === 'go / no-go' && e.cluster === 'sandbox-2');
    expect(gate?.msg).toMatch(/^gate prod-go approved by carol at .* \(dashboards green\)$/);
    expect(gate?.duration_ms).toBeGreaterThan(1000); // it waited for the approval sent a second after the gate opened
    const after2 = events.findIndex((e) => e.type === 'task_result' && e.task === 'after' && e.cluster === 'sandbox-2');
    expect(after2).toBeGreaterThan(events.indexOf(gate ?? events[0] ?? { type: '' }));
    expect(approved).not.toBe('');
    // the gate object is removed once decided
    expect(runId).not.toBe('');
    expect((await kubectl(['-n', 'kplay-system', 'get', 'configmaps', '-l', 'kplay.dev/gate=prod-go', '-o', 'name'], { context: 'sandbox-2' })).stdout).not.toContain(runId.toLowerCase());
  });

  it('a rejection fails the gated cluster', async () => {
    const r = await k(['run', 'gated.yml', '-i', env.inventory, '--no-lock', '-o', 'json'], (c) => {
      void waitFor(c, /"run_id":"[^"]+"/).then(async (m) => {
        const runId = m.split('"')[3] ?? '';
        for (let i = 0; i < 100; i++) {
          const a = await k(['approve', runId, '--gate', 'prod-go', '-i', env.inventory, '--limit', 'sandbox-2', '--reject', '--as', 'dave']);
          if (a.code === 0) return;
          await new Promise((res) => setTimeout(res, 300));
        }
      });
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/gate prod-go rejected by dave/);
  });
});

// Resume per (cluster, task), against the real sandbox: a run on two clusters is killed with
// SIGKILL while both wait on a file the test creates only after the kill (after a server-named
// ConfigMap was created and a line appended to a file — neither is idempotent). `--resume last`
// does not repeat them, gives the later task what they registered, runs the interrupted task again
// (saying so), takes over the dead run's lock, and `kplay history verify` finds the trail intact.
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay } from '../helpers/cli.js';
import { kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const ns = `resume-task-${randomBytes(3).toString('hex')}`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-resume-task-'));
const records = path.join(dir, 'records');
const out = path.join(dir, 'appended.txt');
const gate = path.join(dir, 'gate');
const CLUSTERS = ['sandbox-1', 'sandbox-2'];
let env: SandboxEnv;

const k = (args: string[], onSpawn?: (c: ChildProcess) => void): ReturnType<typeof kplay> => kplay(args, { cwd: dir, env: { KPLAY_RECORD_DIR: records }, onSpawn, timeoutMs: 240_000 });

/** The journal lines of the only run so far (empty until it exists). */
function journalLines(): Record<string, unknown>[] {
  const name = existsSync(records) ? readdirSync(records).find((f) => f.endsWith('.journal')) : undefined;
  if (!name) return [];
  return readFileSync(path.join(records, name), 'utf8').split('\n').flatMap((l) => {
    try {
      return [JSON.parse(l) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/** Resolves once both clusters are inside the gate task (its start is journaled for both). */
async function bothInGate(child: ChildProcess): Promise<void> {
  await new Promise<void>((resolve) => {
    let text = '';
    child.stdout?.on('data', (d: Buffer) => {
      text += d.toString();
      if (/"type":"task_start"[^\n]*"task":"gate"/.test(text)) resolve();
    });
  });
  for (;;) {
    const started = journalLines().filter((l) => l.type === 'start' && l.task === 'gate').map((l) => l.cluster);
    if (CLUSTERS.every((c) => started.includes(c))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const tickets = async (context: string): Promise<string[]> =>
  (await kubectl(['-n', ns, 'get', 'configmaps', '-l', 'app=ticket', '-o', 'jsonpath={.items[*].metadata.name}'], { context })).stdout.split(/\s+/).filter(Boolean);

beforeAll(() => {
  env = sandboxEnv();
  writeFileSync(
    path.join(dir, 'window.yml'),
    `- hosts: sandbox-1:sandbox-2
  gather_facts: false
  tasks:
    - name: namespace
      k8s_apply:
        definition: { apiVersion: v1, kind: Namespace, metadata: { name: ${ns} } }
    - name: ticket
      kubernetes.core.k8s:
        state: present
        definition:
          apiVersion: v1
          kind: ConfigMap
          metadata: { generateName: ticket-, namespace: ${ns}, labels: { app: ticket } }
          data: { by: "{{ inventory_hostname }}" }
      register: ticket
    - name: append
      ansible.builtin.command: sh -c 'echo {{ inventory_hostname }} >> ${out}'
      register: appended
    - name: gate
      ansible.builtin.wait_for: { path: ${gate}, timeout: 200 }
    - name: result
      when: inventory_hostname == 'sandbox-1'
      k8s_apply:
        definition:
          apiVersion: v1
          kind: ConfigMap
          metadata: { name: result, namespace: ${ns} }
          data: { ticket: "{{ ticket.result.metadata.name }}", appended_rc: "{{ appended.rc | string }}" }
`,
  );
});
afterAll(async () => {
  for (const context of CLUSTERS) await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found'], { context, check: false });
  rmSync(dir, { recursive: true, force: true });
});

describe('--resume after kill -9, per task', () => {
  it('does not repeat finished tasks, restores what they registered, runs the interrupted task again; the trail verifies', async () => {
    let killed = false;
    const r1 = await k(['run', 'window.yml', '-i', env.inventory, '--lock-timeout', '180', '-o', 'json'], (c) => {
      void bothInGate(c).then(() => {
        killed = c.kill('SIGKILL');
      });
    });
    expect(killed).toBe(true);
    expect(r1.signal, r1.stderr).toBe('SIGKILL');
    const firstId = String(jsonEvents(r1.stdout).find((e) => e.type === 'run_start')?.run_id);
    // the non-idempotent steps happened once per cluster; the later task did not run
    expect(readFileSync(out, 'utf8').split('\n').filter(Boolean).sort()).toEqual(CLUSTERS);
    for (const context of CLUSTERS) {
      expect(await tickets(context)).toHaveLength(1);
      expect((await kubectl(['-n', ns, 'get', 'configmap', 'result', '--ignore-not-found', '-o', 'name'], { context })).stdout.trim()).toBe('');
    }
    const before = Object.fromEntries(await Promise.all(CLUSTERS.map(async (c) => [c, (await tickets(c))[0]] as const)));

    writeFileSync(gate, 'open\n');
    const r2 = await k(['run', '--resume', 'last', '--lock-timeout', '180', '-o', 'json']);
    expect(r2.code, r2.stdout.slice(-3000) + r2.stderr).toBe(0);
    expect(r2.stderr).toContain(`resuming run ${firstId}`);
    const events = jsonEvents(r2.stdout);
    const result = (task: string, cluster: string): Record<string, unknown> | undefined => events.find((e) => e.type === 'task_result' && e.task === task && e.cluster === cluster);
    for (const c of CLUSTERS) {
      for (const task of ['namespace', 'ticket', 'append']) expect(result(task, c)).toMatchObject({ status: 'skipped', msg: expect.stringMatching(new RegExp(`^done in run ${firstId} \\((changed|ok)\\)$`)) as unknown });
      expect(events.some((e) => e.type === 'warning' && e.cluster === c && e.msg === `task 'gate' was interrupted in run ${firstId} before it finished: running it again`)).toBe(true);
      expect(result('gate', c)?.status).toBe('ok');
    }
    expect(result('result', 'sandbox-1')?.status).toBe('changed');
    expect(result('result', 'sandbox-2')?.status).toBe('skipped');
    // nothing was repeated, and the last task used what the killed run registered
    expect(readFileSync(out, 'utf8').split('\n').filter(Boolean).sort()).toEqual(CLUSTERS);
    for (const context of CLUSTERS) expect(await tickets(context)).toEqual([before[context]]);
    const data = JSON.parse((await kubectl(['-n', ns, 'get', 'configmap', 'result', '-o', 'jsonpath={.data}'], { context: 'sandbox-1' })).stdout) as Record<string, string>;
    expect(data).toEqual({ ticket: before['sandbox-1'], appended_rc: '0' });
    const secondId = String(events.find((e) => e.type === 'run_start')?.run_id);
    // the killed run wrote no record; the resumed run's record in each cluster names what it did there
    // (sandbox-2: the resumed run itself changed nothing there)
    for (const context of CLUSTERS) {
      const text = (await kubectl(['-n', 'kplay-system', 'get', 'configmap', `kplay-run-${secondId}`.toLowerCase(), '-o', 'jsonpath={.data.record\\.json}'], { context })).stdout;
      const rec = JSON.parse(text) as { run: { resumed_from?: string }; tasks: { cluster: string; task: string; msg?: string }[] };
      expect(rec.run.resumed_from).toBe(firstId);
      expect(rec.tasks.find((t) => t.task === 'ticket' && t.cluster === context)?.msg).toBe(`done in run ${firstId} (changed)`);
    }
    const header = JSON.parse(readFileSync(path.join(records, `${secondId}.jsonl`), 'utf8').split('\n')[0] ?? '{}') as { resumed_from?: string };
    expect(header.resumed_from).toBe(firstId);

    const v = await k(['history', 'verify']);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    expect(v.stdout).toContain('every record is intact');
  });
});

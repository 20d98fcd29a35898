// `kplay run --resume` from the command line on the implicit localhost (no cluster): the built
// CLI is killed with SIGKILL while a task waits on a file the test creates only afterwards; a
// resume refuses an edited playbook (naming the file), and once it is put back, finishes the run
// without repeating the task that appended to a file. Spawns the built kplay.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay } from '../helpers/cli.js';

const root = mkdtempSync(path.join(tmpdir(), 'kplay-journal-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const records = path.join(root, 'records');
const out = path.join(root, 'out.txt');
const gate = path.join(root, 'gate');
const ENV = { HOME: path.join(root, 'home'), KUBECONFIG: path.join(root, 'home/none'), K8S_AUTH_KUBECONFIG: undefined, K8S_AUTH_CONTEXT: undefined, KPLAY_RECORD_DIR: records, XDG_CACHE_HOME: path.join(root, 'cache') };
const pb = path.join(root, 'site.yml');
const PLAYBOOK = `- hosts: localhost
  gather_facts: false
  tasks:
    - name: append
      command: sh -c 'echo once >> ${out}; echo token-a1'
      register: appended
    - name: gate
      wait_for: { path: ${gate}, timeout: 100 }
    - name: after
      command: sh -c 'echo "after {{ appended.stdout }}" >> ${out}'
`;

/** Resolves once the gate task's start is in the journal. */
async function inGate(child: ChildProcess): Promise<void> {
  await new Promise<void>((resolve) => {
    let text = '';
    child.stdout?.on('data', (d: Buffer) => {
      text += d.toString();
      if (/"type":"task_start"[^\n]*"task":"gate"/.test(text)) resolve();
    });
  });
  for (;;) {
    const name = existsSync(records) ? readdirSync(records).find((f) => f.endsWith('.journal')) : undefined;
    if (name && readFileSync(path.join(records, name), 'utf8').includes('"type":"start","cluster":"localhost","key":"0:site.yml:7:7#0"')) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('kplay run --resume (CLI, localhost)', () => {
  it('after kill -9: refuses an edited playbook, then finishes without repeating finished tasks', async () => {
    writeFileSync(pb, PLAYBOOK);
    let killed = false;
    const r1 = await kplay(['run', pb, '-o', 'json'], {
      cwd: root,
      env: ENV,
      onSpawn: (c) => {
        void inGate(c).then(() => (killed = c.kill('SIGKILL')));
      },
    });
    expect(killed).toBe(true);
    expect(r1.signal).toBe('SIGKILL');
    const firstId = String(jsonEvents(r1.stdout).find((e) => e.type === 'run_start')?.run_id);
    expect(readFileSync(out, 'utf8')).toBe('once\n');
    writeFileSync(gate, '');

    writeFileSync(pb, PLAYBOOK.replace('    - name: gate', '    - debug: {msg: inserted}\n    - name: gate'));
    const refused = await kplay(['run', '--resume', 'last'], { cwd: root, env: ENV });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`cannot resume run ${firstId}: the playbook changed since it ran (site.yml)`);
    expect(readFileSync(out, 'utf8')).toBe('once\n');

    writeFileSync(pb, PLAYBOOK);
    const r2 = await kplay(['run', '--resume', 'last', '-o', 'json'], { cwd: root, env: ENV });
    expect(r2.code, r2.stderr).toBe(0);
    expect(r2.stderr).toContain('localhost: 1 task(s) finished in unfinished plays (restored, not run again), 1 interrupted (run again)');
    expect(readFileSync(out, 'utf8')).toBe('once\nafter token-a1\n');
    const ev = jsonEvents(r2.stdout);
    expect(ev.find((e) => e.type === 'task_result' && e.task === 'append')).toMatchObject({ status: 'skipped', msg: `done in run ${firstId} (changed)` });
    expect(ev.some((e) => e.type === 'warning' && e.msg === `task 'gate' was interrupted in run ${firstId} before it finished: running it again`)).toBe(true);

    const v = await kplay(['history', 'verify'], { cwd: root, env: ENV });
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });
});

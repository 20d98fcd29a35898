// `hosts: localhost`, `127.0.0.1` and `all` under ansible-playbook and kplay with the SAME Ansible
// inventory file (and with no inventory at all): which hosts each play runs on and what they see
// (inventory_hostname, ansible_connection, group_names, groups, all-group vars with group_vars/all).
// kplay runs the built CLI (npm run build) with no kubeconfig: nothing here needs a cluster.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay } from '../helpers/cli.js';

const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const ANSIBLE = path.join(VENV, 'bin/ansible-playbook');

const root = mkdtempSync(path.join(os.tmpdir(), 'kplay-localhost-parity-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const write = (rel: string, text: string): string => {
  const p = path.join(root, rel);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, text);
  return p;
};

// (every host in a group: ansible-core's group_names lists `ungrouped`, kplay's engine does not)
const inv = write('inventory/hosts.yml', 'all:\n  vars: {x: inline-all, y: inline-all}\n  children:\n    db:\n      hosts: {h1: }\n    web:\n      hosts: {w1: }\n');
write('inventory/group_vars/all.yml', 'x: file-all\n');
// next to the playbook: group_vars/all for every host, host_vars/localhost for the implicit localhost
write('group_vars/all.yml', 'pbv: pb-all\n');
write('host_vars/localhost.yml', 'hv: pb-localhost\nx: host-file\n');
// ansible_connection only for localhost (ansible-core reports its ssh default for other hosts)
const SHOW = "{{ inventory_hostname }} conn={{ ansible_connection if inventory_hostname == 'localhost' else '-' }} groups={{ group_names | join(',') }} all={{ groups['all'] | join(',') }} x={{ x | default('none') }} y={{ y | default('none') }} pbv={{ pbv | default('none') }} hv={{ hv | default('none') }}";
const pb = write(
  'site.yml',
  ['localhost', 'all', '127.0.0.1', 'localhost:web'].map((h) => `- hosts: ${h}\n  gather_facts: false\n  tasks:\n    - name: show\n      debug:\n        msg: ${JSON.stringify(SHOW)}\n`).join(''),
);
// kplay does not know gather_facts yet in every branch: the same plays without it
const kpb = write('site-kplay.yml', ['localhost', 'all', '127.0.0.1', 'localhost:web'].map((h) => `- hosts: ${h}\n  tasks:\n    - name: show\n      debug:\n        msg: ${JSON.stringify(SHOW)}\n`).join(''));
const localOnly = write('local.yml', `- hosts: localhost\n  gather_facts: false\n  tasks:\n    - name: show\n      debug:\n        msg: ${JSON.stringify(SHOW)}\n`);
const kLocalOnly = write('local-kplay.yml', `- hosts: localhost\n  tasks:\n    - name: show\n      debug:\n        msg: ${JSON.stringify(SHOW)}\n`);

/** Per play: the sorted "host: msg" lines of its `show` task. */
type PerPlay = string[][];

function runAnsible(args: string[]): Promise<{ plays: PerPlay; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(ANSIBLE, args, { cwd: root, env: { ...process.env, ANSIBLE_STDOUT_CALLBACK: 'json', ANSIBLE_NOCOLOR: '1', ANSIBLE_HOME: path.join(root, '.ansible') }, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      try {
        const doc = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { plays: { tasks: { task: { name: string }; hosts: Record<string, { msg?: string }> }[] }[] };
        resolve({ plays: doc.plays.map((p) => p.tasks.filter((t) => t.task.name === 'show').flatMap((t) => Object.entries(t.hosts).map(([h, r]) => `${h}: ${String(r.msg)}`)).sort()), stderr });
      } catch (e) {
        reject(new Error(`ansible-playbook: ${String(err)} ${stdout.slice(0, 300)} ${String(e)}`));
      }
    });
  });
}

async function runKplay(args: string[]): Promise<{ plays: PerPlay; stderr: string; code: number | null }> {
  const r = await kplay(['run', ...args, '-o', 'json'], { cwd: root, env: { HOME: path.join(root, 'home'), KUBECONFIG: path.join(root, 'home/none'), K8S_AUTH_KUBECONFIG: undefined, K8S_AUTH_CONTEXT: undefined } });
  const plays: PerPlay = [];
  for (const e of jsonEvents(r.stdout)) {
    if (e.type === 'play_start') plays.push([]);
    if (e.type === 'task_result' && e.task === 'show') plays[plays.length - 1]?.push(`${String(e.cluster)}: ${String(e.msg)}`);
  }
  return { plays: plays.map((p) => p.sort()), stderr: r.stderr, code: r.code };
}

describe('the implicit localhost: kplay vs ansible-playbook', () => {
  it('the venv is installed', () => {
    expect(existsSync(ANSIBLE), `${ANSIBLE} missing: run bash test/bench/install.sh`).toBe(true);
  });

  it('with an Ansible inventory without localhost: same hosts per play, same vars', async () => {
    const [a, k] = await Promise.all([runAnsible(['-i', inv, pb]), runKplay([kpb, '-i', inv])]);
    expect(k.code, k.stderr).toBe(0);
    expect(k.plays).toEqual(a.plays);
    // what that is, spelled out
    expect(a.plays[0]).toEqual(['localhost: localhost conn=local groups= all=h1,w1 x=host-file y=inline-all pbv=pb-all hv=pb-localhost']);
    expect(a.plays[1]).toEqual([
      'h1: h1 conn=- groups=db all=h1,w1 x=file-all y=inline-all pbv=pb-all hv=none',
      'w1: w1 conn=- groups=web all=h1,w1 x=file-all y=inline-all pbv=pb-all hv=none',
    ]);
  });

  it('with no inventory: the same warning and the same localhost', async () => {
    const [a, k] = await Promise.all([runAnsible([localOnly]), runKplay([kLocalOnly])]);
    expect(a.stderr).toContain('No inventory was parsed, only implicit localhost is available');
    expect(k.stderr).toContain('No inventory was parsed, only implicit localhost is available');
    expect(k.code, k.stderr).toBe(0);
    expect(k.plays).toEqual(a.plays);
    expect(a.plays).toEqual([['localhost: localhost conn=local groups= all= x=host-file y=none pbv=pb-all hv=pb-localhost']]);
  });
});

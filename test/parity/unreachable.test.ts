// An apiserver that cannot be reached, under ansible-playbook + kubernetes.core and under kplay,
// with the same playbook and the same kubeconfig (its server a port nothing listens on).
// kubernetes.core knows no unreachable host: the task fails, `ignore_errors` ignores it and the
// play goes on. kplay calls the cluster unreachable (exit 4), but an `ignore_errors` task must end
// as it ends under Ansible: an ignored failure, registered as kubernetes.core registers it, and the
// cluster stays in the play. `ignore_unreachable` (Ansible's keyword for a host it cannot reach)
// lets kplay go on too: counted ok and ignored, `unreachable: true` registered.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay } from '../helpers/cli.js';

const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const ANSIBLE = path.join(VENV, 'bin/ansible-playbook');
const root = mkdtempSync(path.join(os.tmpdir(), 'kplay-unreachable-parity-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const kubeconfig = path.join(root, 'kubeconfig');

/** A port that was just free: bound, then closed, so a connection to it is refused at once. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (a !== null && typeof a === 'object' ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

beforeAll(async () => {
  const port = await closedPort();
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: dead, cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]`,
      'users: [{name: u, user: {token: not-a-real-token}}]',
      'contexts: [{name: dead, context: {cluster: dead, user: u, namespace: default}}]',
      'current-context: dead',
      '',
    ].join('\n'),
  );
});

const PLAYBOOK = `- hosts: localhost
  gather_facts: false
  tasks:
    - name: read from a cluster that is down
      kubernetes.core.k8s_info: { kind: ConfigMap, namespace: default }
      register: r
      ignore_errors: true
    - name: show after
      debug:
        msg: "failed={{ r.failed }} changed={{ r.changed }} unreachable={{ r.unreachable | default('-') }} is_failed={{ r is failed }} has_msg={{ r.msg | length > 0 }}"
    - name: write to it, errors ignored from a template
      kubernetes.core.k8s: { kind: ConfigMap, name: x, namespace: default }
      register: w
      ignore_errors: "{{ 1 == 1 }}"
    - name: show after write
      debug:
        msg: "failed={{ w.failed }} changed={{ w.changed }}"
`;

interface Outcome {
  exit: number;
  shows: string[];
  recap: { ok: number; changed: number; failed: number; ignored: number };
}

function runAnsible(file: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    execFile(ANSIBLE, [file], { cwd: root, env: { ...process.env, KUBECONFIG: kubeconfig, ANSIBLE_STDOUT_CALLBACK: 'json', ANSIBLE_NOCOLOR: '1', ANSIBLE_LOCALHOST_WARNING: 'False', ANSIBLE_HOME: path.join(root, '.ansible') }, maxBuffer: 16 << 20 }, (err, stdout) => {
      try {
        const doc = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { plays: { tasks: { task: { name: string }; hosts: Record<string, { msg?: string }> }[] }[]; stats: Record<string, Outcome['recap'] & { failures?: number }> };
        const shows = doc.plays.flatMap((p) => p.tasks.filter((t) => t.task.name.startsWith('show')).map((t) => String(t.hosts.localhost?.msg)));
        const s = doc.stats.localhost as Outcome['recap'] & { failures?: number };
        // ansible-core's JSON callback calls the failed count `failures`
        resolve({ exit: err ? Number(err.code) : 0, shows, recap: { ok: s.ok, changed: s.changed, failed: s.failures ?? s.failed, ignored: s.ignored } });
      } catch (e) {
        reject(new Error(`ansible-playbook: ${String(err)} ${stdout.slice(0, 300)} ${String(e)}`));
      }
    });
  });
}

async function runKplay(file: string): Promise<Outcome & { events: Record<string, unknown>[] }> {
  const r = await kplay(['run', file, '-o', 'json'], { cwd: root, env: { KUBECONFIG: kubeconfig, K8S_AUTH_KUBECONFIG: undefined, K8S_AUTH_CONTEXT: undefined } });
  const events = jsonEvents(r.stdout);
  const shows = events.filter((e) => e.type === 'task_result' && String(e.task).startsWith('show')).map((e) => String(e.msg));
  const recapEvent = events.find((e) => e.type === 'recap') as { clusters?: Record<string, Outcome['recap']> } | undefined;
  const s = recapEvent?.clusters?.localhost ?? { ok: -1, changed: -1, failed: -1, ignored: -1 };
  return { exit: r.code ?? -1, shows, recap: { ok: s.ok, changed: s.changed, failed: s.failed, ignored: s.ignored }, events };
}

describe('an apiserver that cannot be reached: kplay vs ansible-playbook', () => {
  it('the venv is installed', () => {
    expect(existsSync(ANSIBLE), `${ANSIBLE} missing: run bash test/bench/install.sh`).toBe(true);
  });

  it('ignore_errors ignores it as under kubernetes.core: same results, registered fields, recap and exit', async () => {
    const file = path.join(root, 'ignore-errors.yml');
    writeFileSync(file, PLAYBOOK);
    const [a, k] = await Promise.all([runAnsible(file), runKplay(file)]);
    expect(a.shows).toEqual(['failed=True changed=False unreachable=- is_failed=True has_msg=True', 'failed=True changed=False']);
    expect({ exit: k.exit, shows: k.shows, recap: k.recap }).toEqual(a);
  }, 120_000);

  it('ignore_unreachable (task, block or play) keeps the cluster in the play, counted ok and ignored; without it the cluster is unreachable (exit 4)', async () => {
    const file = path.join(root, 'ignore-unreachable.yml');
    writeFileSync(
      file,
      `- hosts: localhost
  gather_facts: false
  tasks:
    - name: probe
      kubernetes.core.k8s_info: { kind: ConfigMap, namespace: default }
      register: r
      ignore_unreachable: yes
    - name: show probe
      debug: { msg: "unreachable={{ r.unreachable }} failed={{ r.failed | default('-') }} changed={{ r.changed }}" }
    - block:
        - name: probe in a block
          kubernetes.core.k8s_info: { kind: Secret, namespace: default }
      ignore_unreachable: true
    - name: show still here
      debug: { msg: here }
    - name: without it
      kubernetes.core.k8s_info: { kind: Pod, namespace: default }
    - name: show never
      debug: { msg: never }
`,
    );
    const k = await runKplay(file);
    expect(k.shows).toEqual(['unreachable=True failed=- changed=False', 'here']);
    expect(k.recap).toEqual({ ok: 4, changed: 0, failed: 0, ignored: 2 });
    expect(k.exit).toBe(4);
    const probe = k.events.find((e) => e.type === 'task_result' && e.task === 'probe');
    expect(probe).toMatchObject({ status: 'unreachable', ignored: true });
  }, 120_000);
});

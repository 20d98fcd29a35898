// Differential tests of configuration and paths: the role trees in test/fixtures/ansible-paths run
// under real ansible-playbook (the venv, `-i localhost, -c local`) and under the built kplay (its
// implicit localhost) with the SAME working directory and environment; the messages of the `show …`
// tasks (roles, task files, lookups and `ansible_search_path` as ansible-core finds them) and the
// exit code must be identical. The roles are found only through ANSIBLE_ROLES_PATH, ANSIBLE_CONFIG
// or ./ansible.cfg, as kubernetes.core's integration targets find theirs.
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay, repoRoot } from '../helpers/cli.js';

const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const ANSIBLE = path.join(VENV, 'bin/ansible-playbook');
const FIXTURES = path.join(repoRoot, 'test/fixtures/ansible-paths');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-paths-parity-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The tasks compared: named `show …` (a role's task: `role : show …`). */
const SHOW = /^([^ ]+ : )?show/;

/** What is compared: the exit code and the `show` messages, in order. */
interface Outcome {
  exit: number;
  messages: string[];
}

/** A clean environment for both engines: no ansible.cfg of the machine's user, nothing of the caller's ANSIBLE_*. */
function baseEnv(extra: Record<string, string>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, HOME: path.join(tmp, 'home'), ANSIBLE_NOCOLOR: '1', ANSIBLE_LOCALHOST_WARNING: 'False' };
  for (const k of Object.keys(env)) if (k.startsWith('ANSIBLE_') && k !== 'ANSIBLE_NOCOLOR' && k !== 'ANSIBLE_LOCALHOST_WARNING') delete env[k];
  return { ...env, ...extra };
}

function runAnsible(playbook: string, cwd: string, extra: Record<string, string>): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const env = { ...baseEnv(extra), ANSIBLE_STDOUT_CALLBACK: 'json' };
    execFile(ANSIBLE, ['-i', 'localhost,', '-c', 'local', playbook], { cwd, env, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const exit = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      const start = stdout.indexOf('{');
      if (start < 0) {
        // an error before the play (a role not found) prints no JSON
        resolve({ exit, messages: [] });
        return;
      }
      try {
        const doc = JSON.parse(stdout.slice(start)) as { plays: { tasks: { task: { name: string }; hosts: Record<string, { msg?: unknown }> }[] }[] };
        const messages = doc.plays.flatMap((p) => p.tasks.filter((t) => SHOW.test(t.task.name)).map((t) => String(t.hosts.localhost?.msg)));
        resolve({ exit, messages });
      } catch (e) {
        reject(new Error(`ansible-playbook printed no JSON (exit ${exit}): ${stdout.slice(0, 300)} ${stderr.slice(0, 300)} ${String(e)}`));
      }
    });
  });
}

async function runKplay(playbook: string, cwd: string, extra: Record<string, string>): Promise<Outcome & { stderr: string }> {
  const env = { ...baseEnv(extra), KUBECONFIG: path.join(tmp, 'home/none'), K8S_AUTH_KUBECONFIG: undefined, K8S_AUTH_CONTEXT: undefined };
  const r = await kplay(['run', playbook, '-o', 'json', '--record-dir', path.join(tmp, 'records')], { cwd, env });
  const messages = jsonEvents(r.stdout)
    .filter((e) => e.type === 'task_result' && SHOW.test(String(e.task)) && e.msg !== undefined)
    .map((e) => String(e.msg));
  return { exit: r.code ?? -1, messages, stderr: r.stderr };
}

/** Both engines on one case: the same messages and exit code; ansible-playbook's, for the case to check. */
async function same(playbook: string, cwd: string, env: Record<string, string>): Promise<Outcome> {
  const [a, k] = await Promise.all([runAnsible(playbook, cwd, env), runKplay(playbook, cwd, env)]);
  expect(k.messages, `show messages (kplay stderr: ${k.stderr.slice(0, 400)})`).toEqual(a.messages);
  expect(k.exit, 'exit code').toBe(a.exit);
  return a;
}

const T1 = path.join(FIXTURES, 'targets/t1');
const root = (rel: string): string => path.join(FIXTURES, rel);

describe('configuration and paths: kplay vs ansible-playbook', () => {
  it('ansible-playbook is installed', () => {
    expect(existsSync(ANSIBLE), `${ANSIBLE} missing: run bash test/bench/install.sh`).toBe(true);
  });

  it('ANSIBLE_ROLES_PATH=../ as a kubernetes.core target sets it: roles, include_tasks from the role root and tasks/, nested includes, lookups, ansible_search_path, a collection role', async () => {
    const a = await same('play.yml', T1, { ANSIBLE_ROLES_PATH: '../' });
    expect(a.exit).toBe(0);
    // what that is, spelled out (ansible-core's choices)
    expect(a.messages.slice(0, 3)).toEqual(['created', 'tasks/b.yml', 'sub/only-here.yml']);
    expect(a.messages).toContain('tasks/sub/b.yml');
    expect(a.messages).toContain('role data');
    expect(a.messages).toContain('near template\n');
    expect(a.messages).toContain('hello from acme.tools.greet');
    expect(a.messages).toContain([root('targets/other'), root('targets/common/tasks/sub'), T1].join(','));
    expect(a.messages[a.messages.length - 1]).toBe(T1);
    // without it, neither finds the roles
    expect((await same('play.yml', T1, {})).exit).not.toBe(0);
  });

  it('roles_path of the ansible.cfg ANSIBLE_CONFIG names, relative to that file, with continuation lines and comments', async () => {
    const a = await same(root('cfg/play.yml'), tmp, { ANSIBLE_CONFIG: root('cfg/ansible.cfg') });
    expect(a.messages).toEqual(['cfgrole in shared-roles']);
    // ANSIBLE_CONFIG naming the directory: its ansible.cfg
    await same(root('cfg/play.yml'), tmp, { ANSIBLE_CONFIG: root('cfg') });
  });

  it('ANSIBLE_ROLES_PATH wins over roles_path of ansible.cfg', async () => {
    const a = await same(root('cfg/play.yml'), tmp, { ANSIBLE_CONFIG: root('cfg/ansible.cfg'), ANSIBLE_ROLES_PATH: root('cfg/alt-roles') });
    expect(a.messages).toEqual(['cfgrole in alt-roles']);
  });

  it('./ansible.cfg of the working directory, and not when that directory is world-writable', async () => {
    const a = await same('play.yml', root('cwdcfg'), {});
    expect(a.messages).toEqual(['cwdrole']);
    const open = path.join(tmp, 'open');
    cpSync(root('cwdcfg'), open, { recursive: true });
    chmodSync(open, 0o777);
    const b = await same('play.yml', open, {});
    expect(b.exit).not.toBe(0);
  });
});

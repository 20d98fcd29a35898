// `kplay run -o ansible` against real ansible-playbook's default stdout callback (the venv of
// test/bench/install.sh): the playbooks of test/parity/ansible-output/ (debug, loops over strings
// and maps, set_fact, a changed command notifying a handler, skipped tasks and items, an ignored
// failure, block/rescue/always, include_tasks, include_role, a play matching no host, a failed loop
// item ending the host, copy/file with --diff and --check) at -v levels and with the display
// settings. stdout and stderr must be the same text after normalising only what must differ: the
// scratch directory of each engine, a command's timing (`delta`, `start`, `end`), and at -vv
// ansible-playbook's version block (kplay is not ansible-core; README "Output formats").
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kplay, repoRoot } from '../helpers/cli.js';

const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const DIR = path.join(repoRoot, 'test/parity/ansible-output');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-ansout-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const inv = path.join(tmp, 'hosts');
writeFileSync(inv, `[g]\nc1 ansible_connection=local ansible_python_interpreter=${path.join(VENV, 'bin/python')}\n`);
const cfg = path.join(tmp, 'ansible.cfg');
writeFileSync(cfg, '[defaults]\nstdout_callback = default\ndisplay_skipped_hosts = False\n');

interface Out {
  code: number;
  stdout: string;
  stderr: string;
}

const BASE_ENV = { ANSIBLE_NOCOLOR: '1', ANSIBLE_HOME: path.join(tmp, '.ansible'), ANSIBLE_CONFIG: path.join(tmp, 'none.cfg'), ANSIBLE_DEPRECATION_WARNINGS: 'false' };

function ansible(args: string[], env: Record<string, string>): Promise<Out> {
  return new Promise((resolve) => {
    execFile(path.join(VENV, 'bin/ansible-playbook'), ['-i', inv, ...args], { cwd: DIR, env: { ...process.env, ...BASE_ENV, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** Only what must differ: each engine's scratch directory, timing, ansible-core's version block at -vv. */
function normalise(text: string, out: string): string {
  return text
    .split(out)
    .join('OUT')
    .replace(/"(delta|start|end)": "[^"]*"/g, '"$1": "T"')
    .replace(/^ansible-playbook \[core [^\]]*\]\n(?: {2}.*\n)*/m, '');
}

/** [label, arguments, extra environment, kplay's own arguments (`-o ansible` unless the environment chooses it)]. */
const CASES: [string, string[], Record<string, string>, string[]][] = [
  ['site', ['site.yml'], {}, ['-o', 'ansible']],
  ['site -v', ['site.yml', '-v'], {}, ['-o', 'ansible']],
  ['site -vv', ['site.yml', '-vv'], {}, ['-o', 'ansible']],
  ['site, ANSIBLE_DISPLAY_OK_HOSTS=false', ['site.yml'], { ANSIBLE_DISPLAY_OK_HOSTS: 'false' }, ['-o', 'ansible']],
  ['site, chosen by ANSIBLE_STDOUT_CALLBACK=default', ['site.yml'], { ANSIBLE_STDOUT_CALLBACK: 'default', ANSIBLE_DISPLAY_SKIPPED_HOSTS: 'false' }, []],
  ['site -v, chosen by ansible.cfg (display_skipped_hosts = False)', ['site.yml', '-v'], { ANSIBLE_CONFIG: cfg }, []],
  ['fails', ['fails.yml'], {}, ['-o', 'ansible']],
  ['fails -v', ['fails.yml', '-v'], {}, ['-o', 'ansible']],
  ['files --diff', ['files.yml', '--diff'], {}, ['-o', 'ansible']],
  ['files --check --diff', ['files.yml', '--check', '--diff'], {}, ['-o', 'ansible']],
];

describe('kplay run -o ansible prints what ansible-playbook prints', () => {
  it.each(CASES)('%s', async (label, args, env, own) => {
    const dirs = { a: path.join(tmp, `${label.replace(/\W+/g, '_')}-a`), k: path.join(tmp, `${label.replace(/\W+/g, '_')}-k`) };
    mkdirSync(dirs.a);
    mkdirSync(dirs.k);
    const [a, k] = await Promise.all([
      ansible([...args, '-e', `out=${dirs.a}`], env),
      kplay(['run', '--no-lock', '--record-dir', path.join(tmp, 'runs'), ...own, '-i', inv, ...args, '-e', `out=${dirs.k}`], { cwd: DIR, env: { ...BASE_ENV, ...env } }),
    ]);
    expect(normalise(k.stdout, dirs.k)).toBe(normalise(a.stdout, dirs.a));
    expect(normalise(k.stderr, dirs.k)).toBe(normalise(a.stderr, dirs.a));
    expect(k.code).toBe(a.code);
  });
});

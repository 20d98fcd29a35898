// ansible-playbook's listings against real ansible-playbook (the venv of test/bench/install.sh):
// `--syntax-check`, `--list-hosts`, `--list-tasks`, `--list-tags`, alone, together and with
// `--tags`, `--skip-tags` and `--limit`, on a playbook with roles and their dependencies, blocks
// (rescue and always are not listed), includes, imports, `never`/`always` tags and an unnamed play
// (test/parity/listings/). kplay must print the same text. Two things ansible-core prints from a
// Python set — the hosts of a play and a play's own tags — are compared as sets.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kplay, repoRoot } from '../helpers/cli.js';

const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const DIR = path.join(repoRoot, 'test/parity/listings');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-listings-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const ansibleInv = path.join(tmp, 'hosts');
writeFileSync(ansibleInv, '[g1]\nc1\nc2\n[g2]\nc3\n');
const kplayInv = path.join(tmp, 'inventory.yml');
writeFileSync(kplayInv, 'all:\n  children:\n    g1:\n      clusters: { c1: {}, c2: {} }\n    g2:\n      clusters: { c3: {} }\n');

function ansible(args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(path.join(VENV, 'bin/ansible-playbook'), ['-i', ansibleInv, ...args], { cwd: DIR, env: { ...process.env, ANSIBLE_NOCOLOR: '1', ANSIBLE_HOME: path.join(tmp, '.ansible') } }, (err, stdout) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout });
    });
  });
}

/** Sets printed by ansible-core (a play's hosts, a play's own tags) in a stable order. */
function normalise(text: string): string {
  const lines = text.split('\n').map((l) => l.replace(/^( {2}play #\d+ \(.*\): .*\tTAGS: \[)(.*)\]$/, (_m, head: string, tags: string) => `${head}${tags.split(',').sort().join(',')}]`));
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i] as string;
    out.push(l);
    if (/^ {4}hosts \(\d+\):$/.test(l)) {
      const hosts: string[] = [];
      while (/^ {6}\S/.test(lines[i + 1] ?? '')) hosts.push(lines[++i] as string);
      out.push(...hosts.sort());
    }
  }
  return out.join('\n');
}

const CASES: string[][] = [
  ['--syntax-check'],
  ['--list-hosts'],
  ['--list-hosts', '--limit', 'g1'],
  ['--list-tasks'],
  ['--list-tags'],
  ['--list-tasks', '--tags', 't1'],
  ['--list-tasks', '--tags', 'never'],
  ['--list-tasks', '--skip-tags', 'ot,rt'],
  ['--list-tasks', '--tags', 'tagged'],
  ['--list-tasks', '--tags', 'untagged'],
  ['--list-tags', '--tags', 'never'],
  ['--list-tasks', '--list-tags'],
  ['--list-hosts', '--list-tasks', '--list-tags', '--limit', 'c1'],
];

describe('ansible-playbook listings: kplay prints the same', () => {
  it.each(CASES)('%s', async (...args) => {
    const [a, k] = await Promise.all([ansible(['site.yml', ...args]), kplay(['run', 'site.yml', '-i', kplayInv, ...args], { cwd: DIR })]);
    expect(a.code).toBe(0);
    expect(k.stderr).toBe('');
    expect(k.code).toBe(0);
    expect(normalise(k.stdout)).toBe(normalise(a.stdout));
  });
});

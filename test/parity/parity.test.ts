// Differential tests: every playbook in test/parity/cases runs unchanged under real
// `ansible-playbook` (the venv test/bench/install.sh makes; local connection, clusters as hosts)
// and under `kplay run`; the printed `debug` messages per cluster (in order), the exit code and
// the PLAY RECAP numbers must be identical. Cases are written in the syntax both engines share.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay, repoRoot } from '../helpers/cli.js';

const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const ANSIBLE = path.join(VENV, 'bin/ansible-playbook');
const CASES = path.join(repoRoot, 'test/parity/cases');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-parity-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// The same inventory for both: three clusters/hosts in two groups, a variable per group.
const ansibleInv = path.join(tmp, 'hosts.yml');
writeFileSync(ansibleInv, 'all:\n  vars: { ansible_connection: local, ansible_python_interpreter: "{{ ansible_playbook_python }}" }\n  children:\n    g1:\n      vars: { where: g1 }\n      hosts: { c1: {}, c2: {} }\n    g2:\n      vars: { where: g2 }\n      hosts: { c3: {} }\n');
const kplayInv = path.join(tmp, 'inventory.yml');
writeFileSync(kplayInv, 'all:\n  children:\n    g1:\n      vars: { where: g1 }\n      clusters: { c1: {}, c2: {} }\n    g2:\n      vars: { where: g2 }\n      clusters: { c3: {} }\n');

/** The tasks whose messages are compared: named `show …` (a role's task: `role : show …`). */
const SHOW = /^([^ ]+ : )?show/;

/** What is compared. */
interface Outcome {
  exit: number;
  /** cluster → messages of its `show …` tasks, in order. */
  messages: Record<string, string[]>;
  recap: Record<string, { ok: number; changed: number; failed: number; skipped: number; rescued: number; ignored: number }>;
}

interface AnsibleHostResult {
  msg?: unknown;
  skipped?: boolean;
  failed?: boolean;
  results?: { msg?: unknown; skipped?: boolean; failed?: boolean }[];
}

/** A token unique to one engine's run (cases use it for scratch files: both engines run at once). */
const token = (engine: string): string => `${engine}-${process.pid}-${Math.random().toString(16).slice(2, 8)}`;

/** Command-line arguments of a case, from its `# args: …` line (given to both engines). */
function caseArgs(file: string): string[] {
  const m = /^# args: (.+)$/m.exec(readFileSync(file, 'utf8'));
  return m?.[1] ? m[1].trim().split(/\s+/).map((a) => a.replace('@CASES', CASES)) : [];
}

function runAnsible(file: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    execFile(ANSIBLE, ['-i', ansibleInv, '-e', `parity_id=${token('ansible')}`, ...caseArgs(file), file], { env: { ...process.env, ANSIBLE_STDOUT_CALLBACK: 'json', ANSIBLE_GATHERING: 'explicit', ANSIBLE_NOCOLOR: '1', ANSIBLE_HOST_KEY_CHECKING: 'False', ANSIBLE_LOCALHOST_WARNING: 'False' }, maxBuffer: 64 << 20 }, (err, stdout) => {
      const exit = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      let doc: { plays: { tasks: { task: { name: string }; hosts: Record<string, AnsibleHostResult> }[] }[]; stats: Record<string, Record<string, number>> };
      try {
        doc = JSON.parse(stdout.slice(stdout.indexOf('{'))) as typeof doc;
      } catch (e) {
        reject(new Error(`ansible-playbook printed no JSON (exit ${exit}): ${stdout.slice(0, 500)} ${String(e)}`));
        return;
      }
      const messages: Record<string, string[]> = {};
      for (const play of doc.plays) {
        for (const t of play.tasks) {
          if (!SHOW.test(t.task.name)) continue;
          for (const [host, r] of Object.entries(t.hosts)) {
            const list = (messages[host] ??= []);
            // what the debug tasks printed (failures are compared through the exit code and recap)
            if (r.results) for (const it of r.results) {
              if (!it.skipped && !it.failed && it.msg !== undefined) list.push(String(it.msg));
            }
            else if (!r.skipped && !r.failed && r.msg !== undefined) list.push(String(r.msg));
          }
        }
      }
      const recap: Outcome['recap'] = {};
      for (const [h, s] of Object.entries(doc.stats)) recap[h] = { ok: s.ok ?? 0, changed: s.changed ?? 0, failed: s.failures ?? 0, skipped: s.skipped ?? 0, rescued: s.rescued ?? 0, ignored: s.ignored ?? 0 };
      resolve({ exit, messages, recap });
    });
  });
}

async function runKplay(file: string): Promise<Outcome> {
  const r = await kplay(['run', file, '-i', kplayInv, '-o', 'json', '--record-dir', path.join(tmp, 'records'), '-e', `parity_id=${token('kplay')}`, ...caseArgs(file)]);
  const messages: Record<string, string[]> = {};
  let recap: Outcome['recap'] = {};
  for (const e of jsonEvents(r.stdout)) {
    if (e.type === 'task_result' && SHOW.test(String(e.task)) && !e.loop_summary && (e.status === 'ok' || e.status === 'changed') && e.msg !== undefined) {
      (messages[String(e.cluster)] ??= []).push(String(e.msg));
    }
    if (e.type === 'recap') recap = e.clusters as Outcome['recap'];
  }
  const picked: Outcome['recap'] = {};
  for (const [h, s] of Object.entries(recap)) picked[h] = { ok: s.ok, changed: s.changed, failed: s.failed, skipped: s.skipped, rescued: s.rescued, ignored: s.ignored };
  return { exit: r.code ?? -1, messages, recap: picked };
}

const cases = readdirSync(CASES).filter((f) => f.endsWith('.yml')).sort();

describe('parity with ansible-playbook', () => {
  it('ansible-playbook is installed', () => {
    expect(existsSync(ANSIBLE), `${ANSIBLE} missing: run bash test/bench/install.sh`).toBe(true);
  });
  it.each(cases)('%s', async (name) => {
    const file = path.join(CASES, name);
    const [a, k] = await Promise.all([runAnsible(file), runKplay(file)]);
    // a cluster with no message at all is the same as an absent one
    for (const o of [a, k]) for (const [c, list] of Object.entries(o.messages)) if (list.length === 0) delete o.messages[c];
    expect(k.messages, 'debug messages per cluster').toEqual(a.messages);
    expect(k.exit, 'exit code').toBe(a.exit);
    expect(k.recap, 'PLAY RECAP').toEqual(a.recap);
  });
});

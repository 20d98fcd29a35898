// The kubernetes.core modules under real ansible-playbook (kubernetes.core from the venv
// test/bench/install.sh makes; connection local, K8S_AUTH_KUBECONFIG/K8S_AUTH_CONTEXT pointing at
// sandbox-1) and under kplay (the built CLI, cluster sandbox-1) on the same playbooks
// (test/fixtures/kcore): the same ok/changed/failed per task, and the same messages of the `show`
// and `detail` tasks, which print the registered fields. Each engine works in a namespace of its own.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay, repoRoot } from '../helpers/cli.js';
import { kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const ANSIBLE = path.join(VENV, 'bin/ansible-playbook');
const FIXTURES = path.join(repoRoot, 'test/fixtures/kcore');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'kcore-parity-'));
// the playbooks are the *.yml files; what they read (templates/, files/) is copied next to them
for (const dir of ['templates', 'files']) if (existsSync(path.join(FIXTURES, dir))) cpSync(path.join(FIXTURES, dir), path.join(tmp, dir), { recursive: true });
let env: SandboxEnv;
const namespaces: string[] = [];

/** What is compared: each task's status, and what the `show`/`detail` tasks printed. */
interface Outcome {
  statuses: [string, string][];
  messages: string[];
}

const PRINTING = /^(show|detail)$/;

/** The fixture for one engine: its hosts, its namespace (normalised back to NS in messages). */
function prepare(fixture: string, engine: 'ansible' | 'kplay'): { file: string; ns: string } {
  const ns = `k8smods-par-${engine.slice(0, 3)}-${randomBytes(3).toString('hex')}`;
  namespaces.push(ns);
  const text = readFileSync(path.join(FIXTURES, fixture), 'utf8').replaceAll('@HOSTS@', engine === 'ansible' ? 'localhost' : 'sandbox-1').replaceAll('@NS@', ns);
  // the same text for both engines: kplay resolves kubernetes.core.X itself
  const file = path.join(tmp, `${engine}-${fixture}`);
  writeFileSync(file, text);
  return { file, ns };
}

function runAnsible(fixture: string): Promise<Outcome> {
  const { file, ns } = prepare(fixture, 'ansible');
  const vars = { ansible_python_interpreter: path.join(VENV, 'bin/python') };
  return new Promise((resolve, reject) => {
    execFile(
      ANSIBLE,
      ['-i', 'localhost,', '-c', 'local', '-e', JSON.stringify(vars), file],
      {
        env: { ...process.env, K8S_AUTH_KUBECONFIG: env.kubeconfig, K8S_AUTH_CONTEXT: 'sandbox-1', ANSIBLE_STDOUT_CALLBACK: 'json', ANSIBLE_GATHERING: 'explicit', ANSIBLE_NOCOLOR: '1', ANSIBLE_LOCALHOST_WARNING: 'False' },
        maxBuffer: 64 << 20,
        timeout: 400_000,
      },
      (err, stdout) => {
        let doc: { plays: { tasks: { task: { name: string }; hosts: Record<string, { changed?: boolean; failed?: boolean; msg?: unknown; results?: { msg?: unknown }[] }> }[] }[] };
        try {
          doc = JSON.parse(stdout.slice(stdout.indexOf('{'))) as typeof doc;
        } catch (e) {
          reject(new Error(`ansible-playbook printed no JSON (${err?.message ?? ''}): ${stdout.slice(0, 500)} ${String(e)}`));
          return;
        }
        const out: Outcome = { statuses: [], messages: [] };
        for (const play of doc.plays) {
          for (const t of play.tasks) {
            const r = t.hosts.localhost;
            if (!r) continue;
            if (PRINTING.test(t.task.name)) {
              for (const m of r.results ? r.results.map((x) => x.msg) : [r.msg]) out.messages.push(String(m).replaceAll(ns, 'NS'));
            } else out.statuses.push([t.task.name, r.failed ? 'failed' : r.changed ? 'changed' : 'ok']);
          }
        }
        resolve(out);
      },
    );
  });
}

async function runKplay(fixture: string): Promise<Outcome> {
  const { file, ns } = prepare(fixture, 'kplay');
  const r = await kplay(['run', file, '-i', env.inventory, '-o', 'json', '--no-lock'], { timeoutMs: 200_000 });
  const out: Outcome = { statuses: [], messages: [] };
  for (const e of jsonEvents(r.stdout)) {
    if (e.type !== 'task_result' || typeof e.task !== 'string') continue;
    if (PRINTING.test(e.task)) {
      if (e.item !== undefined || e.task === 'detail') out.messages.push(String(e.msg).replaceAll(ns, 'NS'));
    } else if (e.item === undefined) out.statuses.push([e.task, String(e.status)]);
  }
  return out;
}

/** Ansible names an unnamed task by its action; kplay by its module's short name. */
const unprefixed = (o: Outcome): Outcome => ({ ...o, statuses: o.statuses.map(([t, s]) => [t.replace(/^kubernetes\.core\./, ''), s]) });

beforeAll(() => {
  env = sandboxEnv();
  expect(existsSync(ANSIBLE), `${ANSIBLE} missing: run bash test/bench/install.sh`).toBe(true);
});

afterAll(async () => {
  for (const ns of namespaces) await kubectl(['delete', 'namespace', ns, '--wait=false'], { check: false });
});

describe('kubernetes.core modules: kplay and ansible-playbook agree', () => {
  for (const fixture of readdirSync(FIXTURES).filter((f) => f.endsWith('.yml')).sort()) {
    it(`${fixture}: same status per task and same registered fields`, async () => {
      const [ansible, ours] = await Promise.all([runAnsible(fixture), runKplay(fixture)]);
      // KCORE_PARITY_DUMP=dir: both outcomes written there, to read what was compared
      if (process.env.KCORE_PARITY_DUMP) writeFileSync(path.join(process.env.KCORE_PARITY_DUMP, `${fixture}.json`), JSON.stringify({ ansible, kplay: ours }, null, 1));
      expect(ansible.statuses.length).toBeGreaterThan(5);
      expect(unprefixed(ours)).toEqual(unprefixed(ansible));
    }, 420_000);
  }
});

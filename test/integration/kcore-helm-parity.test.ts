// kubernetes.core's helm modules (helm, helm_info, helm_repository, helm_template) under real
// ansible-playbook and under kplay, on the same playbooks (test/fixtures/kcore-helm), against
// sandbox-1: the same ok/changed/failed/skipped per task, the same messages of the `show` tasks
// (which print the registered fields the asserts read), and the same releases afterwards (helm
// list + helm get values of the engine's namespace).
//
// kubernetes.core 6.2 cannot drive helm 4 (it runs `helm list --all`, a flag helm 4 removed:
// "Error: unknown flag: --all"), so the reference runs with helm 3 first on PATH (built by
// test/bench/install.sh into ~/.cache/kplay-bench/helm3); kplay runs with the sandbox's helm 4
// (KPLAY_HELM) — except where a playbook names its helm with `binary_path` (binary_path.yml: helm 3
// for both, read from the environment), which kplay honours as kubernetes.core does. Each engine has its own namespace, its own helm config/cache/data homes and its
// own copy of the charts (with @NS@ replaced, so a chart's CRD is the engine's own). A chart
// repository is served over HTTP on 127.0.0.1 by the test.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay, repoRoot } from '../helpers/cli.js';
import { helm, kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const ANSIBLE = path.join(VENV, 'bin/ansible-playbook');
const HELM3_DIR = process.env.KPLAY_BENCH_HELM3 ?? path.join(os.homedir(), '.cache/kplay-bench/helm3');
const FIXTURES = path.join(repoRoot, 'test/fixtures/kcore-helm');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'kcore-helm-parity-'));
let env: SandboxEnv;
let server: Server;
let repoUrl: string;
const namespaces: string[] = [];
/** `helm list` of every state (helm 4 has no `--all`). */
const ALL_STATES = ['--deployed', '--failed', '--pending', '--superseded', '--uninstalled', '--uninstalling'];

type Status = 'ok' | 'changed' | 'failed' | 'skipped';
type Engine = 'ansible' | 'kplay';

/**
 * The one allowed kind of difference: kubernetes.core reports `changed` where nothing changed,
 * kplay reports `ok` (its honest `changed`). Per fixture, per task name: what kubernetes.core
 * reports. Each entry must really differ (the test checks that kubernetes.core said `changed`
 * and kplay `ok`), so a stale entry fails.
 */
const HONEST_CHANGED: Record<string, string[]> = {
  // helm_template changes nothing; kubernetes.core reports changed on every run
  'template.yml': ['render', 'render only the service', 'render with CRDs', 'render into a directory again'],
  // force: true re-adds an identical repository under kubernetes.core
  'repository.yml': ['add again with force_update'],
  // kubernetes.core compares the values with release_values ({}) and upgrades again
  'set_values_rerun.yml': ['the same set_values again'],
};

/**
 * Fixtures where kubernetes.core's changed-without-a-change made a new revision: the releases
 * after are compared without their revision and history (values, chart and status still are).
 */
const EXTRA_REVISIONS = new Set(['set_values_rerun.yml']);

const withoutRevisions = (releases: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(releases).map(([k, v]) => [k, { ...(v as Record<string, unknown>), revision: undefined, history: undefined }]));

/** What is compared: each task's status, what the `show` tasks printed, and the releases after. */
interface Outcome {
  statuses: [string, Status][];
  messages: string[];
  releases: Record<string, unknown>;
}

/** The fixture for one engine, in a directory of its own: playbook, charts and files with @NS@ etc. replaced. */
function prepare(fixture: string, engine: Engine): { dir: string; file: string; ns: string; helmEnv: Record<string, string> } {
  const ns = `khelm-par-${engine.slice(0, 3)}-${randomBytes(3).toString('hex')}`;
  namespaces.push(ns);
  const dir = path.join(tmp, `${engine}-${fixture.replace(/\.yml$/, '')}`);
  mkdirSync(dir, { recursive: true });
  const subst = (text: string): string => text.replaceAll('@HOSTS@', engine === 'ansible' ? 'localhost' : 'sandbox-1').replaceAll('@NS@', ns).replaceAll('@REPO@', repoUrl);
  for (const sub of ['charts', 'files']) {
    if (!existsSync(path.join(FIXTURES, sub))) continue;
    cpSync(path.join(FIXTURES, sub), path.join(dir, sub), { recursive: true });
    rewrite(path.join(dir, sub), subst);
  }
  const file = path.join(dir, fixture);
  writeFileSync(file, subst(readFileSync(path.join(FIXTURES, fixture), 'utf8')));
  const home = path.join(dir, 'helm-home');
  const helmEnv = { HELM_CACHE_HOME: path.join(home, 'cache'), HELM_CONFIG_HOME: path.join(home, 'config'), HELM_DATA_HOME: path.join(home, 'data') };
  return { dir, file, ns, helmEnv };
}

function rewrite(dir: string, subst: (s: string) => string): void {
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) rewrite(p, subst);
    else writeFileSync(p, subst(readFileSync(p, 'utf8')));
  }
}

/** The releases of a namespace as helm lists them (chart, revision, status, user values), the namespace written NS. */
async function releasesOf(ns: string): Promise<Record<string, unknown>> {
  const list = await helm(['list', '-n', ns, ...ALL_STATES, '-o', 'json']);
  const out: Record<string, unknown> = {};
  for (const r of JSON.parse(list.stdout) as { name: string; revision: string; status: string; chart: string; app_version: string }[]) {
    const values = await helm(['get', 'values', r.name, '-n', ns, '-o', 'json']);
    const history = await helm(['history', r.name, '-n', ns, '-o', 'json']);
    out[r.name] = {
      revision: r.revision,
      status: r.status,
      chart: r.chart,
      app_version: r.app_version,
      values: JSON.parse(values.stdout.replaceAll(ns, 'NS')) as unknown,
      history: (JSON.parse(history.stdout) as { revision: number; status: string }[]).map((h) => `${h.revision}:${h.status}`),
    };
  }
  return out;
}

interface AnsibleDoc {
  plays: { tasks: { task: { name: string }; hosts: Record<string, { changed?: boolean; failed?: boolean; skipped?: boolean; msg?: unknown }> }[] }[];
}

async function runAnsible(fixture: string): Promise<Outcome> {
  const { dir, file, ns, helmEnv } = prepare(fixture, 'ansible');
  const vars = { ansible_python_interpreter: path.join(VENV, 'bin/python') };
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      ANSIBLE,
      ['-i', 'localhost,', '-c', 'local', '-e', JSON.stringify(vars), file],
      {
        cwd: dir,
        env: {
          ...process.env,
          ...helmEnv,
          // helm 3 first on PATH: kubernetes.core finds `helm` there (binary_path unset)
          PATH: `${HELM3_DIR}${path.delimiter}${process.env.PATH ?? ''}`,
          KHELM_PARITY_HELM3: path.join(HELM3_DIR, 'helm'),
          K8S_AUTH_KUBECONFIG: env.kubeconfig,
          K8S_AUTH_CONTEXT: 'sandbox-1',
          ANSIBLE_STDOUT_CALLBACK: 'json',
          ANSIBLE_GATHERING: 'explicit',
          ANSIBLE_NOCOLOR: '1',
          ANSIBLE_LOCALHOST_WARNING: 'False',
        },
        maxBuffer: 64 << 20,
        timeout: 400_000,
      },
      (err, out) => (out.includes('{') ? resolve(out) : reject(new Error(`ansible-playbook printed no JSON (${err?.message ?? ''}): ${out.slice(0, 500)}`))),
    );
  });
  const doc = JSON.parse(stdout.slice(stdout.indexOf('{'))) as AnsibleDoc;
  const out: Outcome = { statuses: [], messages: [], releases: await releasesOf(ns) };
  for (const play of doc.plays) {
    for (const t of play.tasks) {
      const r = t.hosts.localhost;
      if (!r) continue;
      if (t.task.name === 'show') out.messages.push(String(r.msg).replaceAll(ns, 'NS'));
      else out.statuses.push([t.task.name.replace(/^kubernetes\.core\./, ''), r.failed ? 'failed' : r.skipped ? 'skipped' : r.changed ? 'changed' : 'ok']);
    }
  }
  return out;
}

async function runKplay(fixture: string): Promise<Outcome & { raw: string }> {
  const { dir, file, ns, helmEnv } = prepare(fixture, 'kplay');
  const r = await kplay(['run', file, '-i', env.inventory, '-o', 'json', '--no-lock'], {
    cwd: dir,
    env: { ...helmEnv, KPLAY_HELM: path.join(env.binDir, 'helm'), KHELM_PARITY_HELM3: path.join(HELM3_DIR, 'helm'), KPLAY_RECORD_DIR: path.join(dir, 'records') },
    timeoutMs: 300_000,
  });
  const out = { statuses: [] as [string, Status][], messages: [] as string[], releases: await releasesOf(ns), raw: r.stdout + r.stderr };
  for (const e of jsonEvents(r.stdout)) {
    if (e.type !== 'task_result' || typeof e.task !== 'string' || e.item !== undefined) continue;
    if (e.task === 'show') out.messages.push(String(e.msg).replaceAll(ns, 'NS'));
    else out.statuses.push([e.task.replace(/^kubernetes\.core\./, ''), String(e.status) as Status]);
  }
  return out;
}

beforeAll(async () => {
  env = sandboxEnv();
  expect(existsSync(ANSIBLE), `${ANSIBLE} missing: run bash test/bench/install.sh`).toBe(true);
  expect(existsSync(path.join(HELM3_DIR, 'helm')), `${HELM3_DIR}/helm missing: run bash test/bench/install.sh`).toBe(true);
  // the chart repository: app 0.1.0 and 0.2.0, served over HTTP
  const repoDir = path.join(tmp, 'repo');
  mkdirSync(repoDir);
  server = createServer((req, res) => {
    const f = path.join(repoDir, path.basename(new URL(req.url ?? '/', 'http://x').pathname));
    if (!existsSync(f)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200);
    createReadStream(f).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  repoUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const chart = path.join(FIXTURES, 'charts/app');
  for (const v of ['0.1.0', '0.2.0']) await helm(['package', chart, '--version', v, '--app-version', v, '-d', repoDir]);
  await helm(['repo', 'index', repoDir, '--url', repoUrl]);
});

afterAll(async () => {
  for (const ns of namespaces) {
    const list = await helm(['list', '-n', ns, ...ALL_STATES, '-q'], { check: false });
    for (const rel of list.stdout.split('\n').filter(Boolean)) await helm(['uninstall', rel, '-n', ns], { check: false });
    await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { check: false });
  }
  for (const ns of namespaces) await kubectl(['delete', 'crd', `widgets.${ns}.khelm.test`, '--ignore-not-found', '--wait=false'], { check: false });
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(tmp, { recursive: true, force: true });
});

/**
 * Messages kplay prints otherwise by a README difference (reliability: a failed task that wrote
 * something is `changed`): per fixture, kubernetes.core's message → kplay's. Each must really be
 * printed under kubernetes.core, so a stale entry fails.
 */
const WRITTEN_DIFFERS: Record<string, [string, string][]> = {
  // the failed atomic upgrade added two revisions (the failed one, its rollback) to the release's history
  'atomic.yml': [['True False True', 'True True True']],
};

describe('kubernetes.core helm modules: kplay (helm 4) and ansible-playbook (helm 3) agree', () => {
  for (const fixture of readdirSync(FIXTURES).filter((f) => f.endsWith('.yml')).sort()) {
    it(`${fixture}: same status per task, same registered fields, same releases after`, async () => {
      const [ansible, ours] = await Promise.all([runAnsible(fixture), runKplay(fixture)]);
      // KCORE_HELM_PARITY_DUMP=dir: both outcomes written there, to read what was compared
      if (process.env.KCORE_HELM_PARITY_DUMP) writeFileSync(path.join(process.env.KCORE_HELM_PARITY_DUMP, `${fixture}.json`), JSON.stringify({ ansible, kplay: ours }, null, 1));
      expect(ansible.statuses.length).toBeGreaterThan(3);
      // kubernetes.core's changed-without-a-change, listed: must really be ansible changed / kplay ok
      const honest = HONEST_CHANGED[fixture] ?? [];
      for (const task of honest) {
        expect(ansible.statuses.filter(([t]) => t === task).map(([, s]) => s), `${task} under ansible`).toEqual(['changed']);
        expect(ours.statuses.filter(([t]) => t === task).map(([, s]) => s), `${task} under kplay`).toEqual(['ok']);
      }
      const expected = ansible.statuses.map(([t, s]): [string, Status] => [t, honest.includes(t) ? 'ok' : s]);
      expect(ours.statuses, ours.raw.slice(-3000)).toEqual(expected);
      const differs = WRITTEN_DIFFERS[fixture] ?? [];
      for (const [from] of differs) expect(ansible.messages, `${from} under ansible`).toContain(from);
      expect(ours.messages).toEqual(ansible.messages.map((m) => differs.find(([from]) => from === m)?.[1] ?? m));
      if (EXTRA_REVISIONS.has(fixture)) {
        // the extra revision is really there under kubernetes.core, and only there
        expect(JSON.stringify(ansible.releases)).not.toEqual(JSON.stringify(ours.releases));
        expect(withoutRevisions(ours.releases)).toEqual(withoutRevisions(ansible.releases));
      } else expect(ours.releases).toEqual(ansible.releases);
    }, 600_000);
  }
});

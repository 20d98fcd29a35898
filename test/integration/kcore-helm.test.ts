// kubernetes.core's helm modules (helm, helm_info, helm_repository, helm_template) against the real
// sandbox, through `kplay run`. A chart repository is served over HTTP on 127.0.0.1 by the test
// (`helm package` + `helm repo index`). The steps build on each other and run in order:
// repository add → install from repo/chart → rerun (ok, no new revision) → values change → check
// mode → set_values → helm_info → helm_template → absent → repository remove.
import { randomBytes } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { jsonEvents, kplay, repoRoot, type KplayResult } from '../helpers/cli.js';
import { helm, kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const suffix = randomBytes(3).toString('hex');
const ns = `helmmods-${suffix}`;
const rel = 'kweb';
const chartDir = (v: string): string => path.resolve(repoRoot, 'playbooks/charts', `webapp-${v}`);

let env: SandboxEnv;
let tmp: string;
let inventory: string;
let server: Server;
let repoUrl: string;
let helmEnv: Record<string, string>;

beforeAll(async () => {
  env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-kcore-helm-'));
  inventory = path.join(tmp, 'inventory.yml');
  writeFileSync(inventory, YAML.stringify({ all: { clusters: { 'sandbox-1': { context: 'sandbox-1', kubeconfig: env.kubeconfig } } } }));
  helmEnv = { HELM_CACHE_HOME: path.join(tmp, 'helm/cache'), HELM_CONFIG_HOME: path.join(tmp, 'helm/config'), HELM_DATA_HOME: path.join(tmp, 'helm/data') };
  // the chart repository: both webapp versions, served over HTTP
  const repoDir = path.join(tmp, 'repo');
  mkdirSync(repoDir);
  server = createServer((req, res) => {
    const file = path.join(repoDir, path.basename(new URL(req.url ?? '/', 'http://x').pathname));
    if (!existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200);
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  repoUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  for (const v of ['1.0.0', '1.1.0']) await helm(['package', chartDir(v), '-d', repoDir], { env: helmEnv });
  await helm(['repo', 'index', repoDir, '--url', repoUrl], { env: helmEnv });
});

afterAll(async () => {
  await helm(['uninstall', rel, '-n', ns, '--ignore-not-found'], { check: false });
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { check: false });
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(tmp, { recursive: true, force: true });
});

interface TaskResult {
  task: string;
  status: string;
  msg?: string;
  data?: Record<string, unknown>;
}

/** Run a playbook of `tasks` (YAML) against sandbox-1; the task results by task name. */
async function play(tasks: unknown[], args: string[] = [], vars: Record<string, unknown> = {}): Promise<{ r: KplayResult; results: Record<string, TaskResult> }> {
  const file = path.join(tmp, `play-${randomBytes(3).toString('hex')}.yml`);
  writeFileSync(file, YAML.stringify([{ hosts: 'all', vars, tasks }]));
  const r = await kplay(['run', file, '-i', inventory, '--no-lock', '-o', 'json', ...args], {
    env: { KPLAY_HELM: path.join(env.binDir, 'helm'), ...helmEnv, KPLAY_RECORD_DIR: path.join(tmp, 'records') },
    timeoutMs: 200_000,
  });
  const results: Record<string, TaskResult> = {};
  for (const e of jsonEvents(r.stdout)) if (e.type === 'task_result') results[String(e.task)] = e as unknown as TaskResult;
  return { r, results };
}

function result(rs: Record<string, TaskResult>, name: string): TaskResult {
  const t = rs[name];
  if (!t) throw new Error(`no result for task ${name}: have ${Object.keys(rs).join(', ')}`);
  return t;
}

async function history(): Promise<{ revision: number; status: string }[]> {
  const r = await helm(['history', rel, '-n', ns, '-o', 'json'], { check: false });
  return r.code === 0 ? (JSON.parse(r.stdout) as { revision: number; status: string }[]) : [];
}

function repositoriesFile(): string {
  const f = path.join(helmEnv.HELM_CONFIG_HOME ?? '', 'repositories.yaml');
  return existsSync(f) ? readFileSync(f, 'utf8') : '';
}

const release = (values: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown => ({
  name: 'release',
  helm: { name: rel, chart_ref: 'myrepo/webapp', chart_version: '1.0.0', release_namespace: ns, create_namespace: true, values, ...extra },
  register: 'out',
});

describe.sequential('kubernetes.core helm modules against the sandbox', () => {
  it('helm_repository adds a repository once, then reports ok; check mode does not write', async () => {
    const task = { name: 'repo', helm_repository: { name: 'myrepo', repo_url: repoUrl } };
    const check = await play([task], ['--check']);
    expect(result(check.results, 'repo').status).toBe('changed');
    expect(repositoriesFile()).not.toContain(repoUrl);
    const first = await play([task]);
    const r1 = result(first.results, 'repo');
    expect(r1.status, first.r.stdout).toBe('changed');
    expect(r1.data?.stdout).toContain('"myrepo" has been added to your repositories');
    expect(r1.data?.command).toContain(`repo add myrepo ${repoUrl}`);
    expect(YAML.parse(repositoriesFile()).repositories).toEqual([expect.objectContaining({ name: 'myrepo', url: repoUrl })]);
    const before = repositoriesFile();
    const again = await play([task]);
    expect(result(again.results, 'repo')).toMatchObject({ status: 'ok', data: { repo_name: 'myrepo', repo_url: repoUrl } });
    expect(repositoriesFile()).toBe(before);
  });

  it('helm_repository refuses another URL under the same name unless force_update', async () => {
    const other = `${repoUrl}/`;
    const refused = await play([{ name: 'repo', helm_repository: { name: 'myrepo', repo_url: other }, ignore_errors: true }]);
    expect(result(refused.results, 'repo')).toMatchObject({ status: 'failed', msg: 'Repository already have a repository named myrepo' });
    const forced = await play([{ name: 'repo', helm_repository: { name: 'myrepo', repo_url: other, force_update: true } }]);
    expect(result(forced.results, 'repo').status).toBe('changed');
    expect(repositoriesFile()).toContain(other);
    const back = await play([{ name: 'repo', helm_repository: { name: 'myrepo', repo_url: repoUrl, force: true } }]);
    expect(result(back.results, 'repo').status).toBe('changed');
    const same = await play([{ name: 'repo', helm_repository: { name: 'myrepo', repo_url: repoUrl, force_update: true } }]);
    expect(result(same.results, 'repo').status).toBe('ok');
  });

  it('helm installs repo/chart with kubernetes.core results', async () => {
    const { r, results } = await play([release({ replicaCount: 1 })]);
    const out = result(results, 'release');
    expect(out.status, r.stdout + r.stderr).toBe('changed');
    const status = out.data?.status as Record<string, unknown>;
    expect(status).toMatchObject({ name: rel, namespace: ns, revision: '1', status: 'deployed', chart: 'webapp-1.0.0', app_version: '1.0.0', values: { replicaCount: 1 } });
    expect(status.updated).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? [+-]\d{4} \S+$/);
    expect(Object.keys(status).sort()).toEqual(['app_version', 'chart', 'name', 'namespace', 'revision', 'status', 'updated', 'values']);
    expect(out.data?.command).toMatch(/ upgrade kweb myrepo\/webapp --version 1\.0\.0 /);
    expect(out.data?.stdout).toContain(`NAME: ${rel}`);
    expect(out.data?.stdout).toContain('REVISION: 1');
    expect(out.data?.stderr).toBe('');
    // the same as `helm list` shows it
    const list = await helm(['list', '-n', ns, '-o', 'json']);
    const [row] = JSON.parse(list.stdout) as Record<string, unknown>[];
    expect(row).toEqual({ name: rel, namespace: ns, revision: '1', updated: status.updated, status: 'deployed', chart: 'webapp-1.0.0', app_version: '1.0.0' });
  });

  it('a rerun with nothing changed is ok and makes no new revision', async () => {
    const { results } = await play([release({ replicaCount: 1 })]);
    const out = result(results, 'release');
    expect(out.status).toBe('ok');
    expect(out.data?.status).toMatchObject({ revision: '1', status: 'deployed', values: { replicaCount: 1 } });
    expect(out.data?.stdout).toBe('');
    expect(await history()).toHaveLength(1);
  });

  it('check mode reports the change in kubernetes.core shape without a new revision', async () => {
    const { results } = await play([release({ replicaCount: 2 })], ['--check']);
    const out = result(results, 'release');
    expect(out.status).toBe('changed');
    expect(out.data?.status).toMatchObject({ values: { current: { replicaCount: 1 }, declared: { name: rel, revision: '1' } } });
    expect(await history()).toHaveLength(1);
  });

  it('a values change upgrades (changed, new revision); set_values are parsed by helm and compare exactly', async () => {
    const changed = await play([release({ replicaCount: 2 })]);
    expect(result(changed.results, 'release')).toMatchObject({ status: 'changed', data: { status: { revision: '2', values: { replicaCount: 2 } } } });
    const canary = `set-canary-${suffix}`;
    const set = { set_values: [{ value: 'ui.message=hi,replicaCount=2' }, { value: 'logLevel=5', value_type: 'string' }, { value: `auth.password=${canary}` }] };
    const withSet = await play([release({}, set)], ['-vv']);
    expect(result(withSet.results, 'release')).toMatchObject({ status: 'changed', data: { status: { revision: '3', values: { ui: { message: 'hi' }, replicaCount: 2, logLevel: '5' } } } });
    expect(withSet.r.stdout + withSet.r.stderr).not.toContain(canary);
    const again = await play([release({}, set)]);
    expect(result(again.results, 'release')).toMatchObject({ status: 'ok', data: { status: { revision: '3' } } });
    expect(await history()).toHaveLength(3);
    const dep = await kubectl(['get', 'deployment', `${rel}-webapp`, '-n', ns, '-o', 'jsonpath={.spec.replicas}']);
    expect(dep.stdout).toBe('2');
  });

  it('helm_info returns the release as kubernetes.core does', async () => {
    const { results } = await play([
      { name: 'info', helm_info: { release_name: rel, release_namespace: ns } },
      { name: 'all', helm_info: { name: rel, namespace: ns, get_all_values: true } },
      { name: 'missing', helm_info: { name: 'nope', release_namespace: ns } },
      { name: 'superseded', helm_info: { name: rel, release_namespace: ns, release_state: ['superseded'] } },
    ]);
    const status = result(results, 'info').data?.status as Record<string, unknown>;
    expect(Object.keys(status).sort()).toEqual(['app_version', 'chart', 'hooks', 'manifest', 'name', 'namespace', 'notes', 'revision', 'status', 'updated', 'values']);
    expect(status).toMatchObject({ name: rel, namespace: ns, revision: '3', status: 'deployed', chart: 'webapp-1.0.0', notes: '', hooks: [], values: { replicaCount: 2, logLevel: '5' } });
    expect((status.manifest as { kind: string }[]).map((o) => o.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'Service']);
    expect((result(results, 'all').data?.status as { values: Record<string, unknown> }).values).toMatchObject({ replicaCount: 2, image: { repository: 'ghcr.io/stefanprodan/podinfo' }, service: { port: 9898 } });
    expect(result(results, 'missing')).toMatchObject({ status: 'ok', data: {} });
    expect(result(results, 'missing').data?.status).toBeUndefined();
    expect(result(results, 'superseded').data?.status).toMatchObject({ revision: '2', status: 'superseded' });
  });

  it('host, api_key and validate_certs connect helm and kplay; the token never shows', async () => {
    await kubectl(['-n', ns, 'create', 'serviceaccount', 'reader']);
    await kubectl(['-n', ns, 'create', 'rolebinding', 'reader', '--clusterrole', 'admin', `--serviceaccount=${ns}:reader`]);
    const token = (await kubectl(['-n', ns, 'create', 'token', 'reader', '--duration', '10m'])).stdout.trim();
    const kc = YAML.parse(readFileSync(env.kubeconfig, 'utf8')) as { clusters: { name: string; cluster: { server: string } }[] };
    const host = kc.clusters.find((c) => c.name === 'sandbox-1')?.cluster.server;
    const auth = { host, api_key: token, validate_certs: false };
    const { r, results } = await play([
      { name: 'info', helm_info: { name: rel, release_namespace: ns, ...auth } },
      { name: 'release', helm: { name: rel, chart_ref: 'myrepo/webapp', chart_version: '1.0.0', release_namespace: ns, set_values: [{ value: 'ui.message=hi,replicaCount=2' }, { value: 'logLevel=5', value_type: 'string' }, { value: `auth.password=set-canary-${suffix}` }], ...auth } },
      { name: 'denied', helm_info: { name: rel, release_namespace: 'default', ...auth }, ignore_errors: true },
    ]);
    expect(result(results, 'info'), r.stdout + r.stderr).toMatchObject({ status: 'ok', data: { status: { name: rel, revision: '3' } } });
    expect(result(results, 'release')).toMatchObject({ status: 'ok', data: { status: { revision: '3' } } });
    // the service account may not read releases elsewhere: the cluster's refusal, not a crash
    expect(result(results, 'denied').status).toBe('failed');
    expect(result(results, 'denied').msg).toMatch(/forbidden/i);
    expect(r.stdout + r.stderr).not.toContain(token);
  });

  it('helm_template renders without changing anything; output_dir is changed only when a file differs', async () => {
    const out = path.join(tmp, 'rendered');
    const tpl = (name: string, extra: Record<string, unknown> = {}): unknown => ({
      name,
      helm_template: { chart_ref: chartDir('1.1.0'), release_name: 'tpl', release_namespace: 'tplns', values: { replicaCount: 4 }, ...extra },
      register: name,
    });
    const canary = `tpl-canary-${suffix}`;
    const { r, results } = await play(
      [
        tpl('stdout'),
        tpl('only', { show_only: ['templates/service.yaml'] }),
        tpl('dir1', { output_dir: out }),
        tpl('dir2', { output_dir: out }),
        tpl('secret', { values: { extraEnvs: [{ name: 'API_TOKEN', value: '{{ api_token }}' }] } }),
        { name: 'uses', assert: { that: [`'${canary}' in secret.stdout`] } },
        { name: 'shows', debug: { var: 'secret.stdout' } },
      ],
      [],
      { api_token: canary },
    );
    // the registered text keeps the value for later tasks; every output masks it
    expect(result(results, 'uses').status, r.stdout).toBe('ok');
    expect(result(results, 'shows').status).toBe('ok');
    expect(r.stdout + r.stderr).not.toContain(canary);
    const s = result(results, 'stdout');
    expect(s.status).toBe('ok');
    const docs = YAML.parseAllDocuments(String(s.data?.stdout)).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string }; spec?: { replicas?: number } });
    expect(docs.map((d) => d.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'Service']);
    expect(docs.find((d) => d.kind === 'Deployment')?.spec?.replicas).toBe(4);
    expect(docs[0]?.metadata.name).toBe('tpl-webapp');
    expect(s.data?.command).toMatch(/ template tpl .*webapp-1\.1\.0 .*-n tplns/);
    expect(s.data?.rc).toBe(0);
    const only = YAML.parseAllDocuments(String(result(results, 'only').data?.stdout)).map((d) => (d.toJS() as { kind: string }).kind);
    expect(only).toEqual(['Service']);
    expect(result(results, 'dir1').status).toBe('changed');
    expect(readFileSync(path.join(out, 'webapp/templates/deployment.yaml'), 'utf8')).toContain('replicas: 4');
    expect(result(results, 'dir2').status).toBe('ok');
  });

  it('chart_ref may be a chart archive URL', async () => {
    const url = { name: 'release', helm: { name: rel, chart_ref: `${repoUrl}/webapp-1.1.0.tgz`, release_namespace: ns, values: { replicaCount: 2 } }, register: 'out' };
    const first = await play([url]);
    expect(result(first.results, 'release'), first.r.stdout).toMatchObject({ status: 'changed', data: { status: { revision: '4', chart: 'webapp-1.1.0' } } });
    const again = await play([url]);
    expect(result(again.results, 'release')).toMatchObject({ status: 'ok', data: { status: { revision: '4' } } });
  });

  it('purge: false keeps the history; replace installs again under the same name', async () => {
    const base = { name: rel, release_namespace: ns };
    const { r, results } = await play([
      { name: 'keep', helm: { ...base, state: 'absent', purge: false } },
      { name: 'default', helm_info: base },
      { name: 'uninstalled', helm_info: { ...base, release_state: ['uninstalled'] } },
      { name: 'again', helm: { ...base, chart_ref: `${repoUrl}/webapp-1.1.0.tgz`, values: { replicaCount: 2 }, replace: true } },
    ]);
    expect(result(results, 'keep'), r.stdout).toMatchObject({ status: 'changed', data: { status: { status: 'uninstalled', revision: '4' } } });
    expect(result(results, 'keep').data?.command).toMatch(/ uninstall kweb .*--keep-history/);
    expect(result(results, 'default').data?.status).toBeUndefined();
    expect(result(results, 'uninstalled').data?.status).toMatchObject({ status: 'uninstalled', revision: '4' });
    expect(result(results, 'again')).toMatchObject({ status: 'changed', data: { status: { status: 'deployed', revision: '5' } } });
  });

  it('state absent uninstalls (changed, status null), then is ok', async () => {
    const task = { name: 'release', helm: { name: rel, release_namespace: ns, state: 'absent', wait: true }, register: 'out' };
    const first = await play([task]);
    expect(result(first.results, 'release')).toMatchObject({ status: 'changed', data: { status: null } });
    expect(result(first.results, 'release').data?.stdout).toContain(`release "${rel}" uninstalled`);
    expect(result(first.results, 'release').data?.command).toMatch(/ uninstall kweb -n helmmods-\w+ --wait/);
    expect(await history()).toEqual([]);
    const again = await play([task]);
    expect(result(again.results, 'release')).toMatchObject({ status: 'ok', data: { status: null, stdout: '' } });
  });

  it('helm_repository removes the repository, then is ok', async () => {
    const task = { name: 'repo', helm_repository: { name: 'myrepo', repo_state: 'absent' } };
    const first = await play([task]);
    expect(result(first.results, 'repo').status).toBe('changed');
    expect(repositoriesFile()).not.toContain('myrepo');
    const again = await play([task]);
    expect(result(again.results, 'repo').status).toBe('ok');
  });
});

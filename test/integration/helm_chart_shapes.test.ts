// Charts that must settle: after an install, a rerun is 0 changed (no helm process, no API write)
// and `kplay drift` is clean, for the chart shapes kplay once misread — a `.helmignore` keeping
// templates/tests/ and other files out of the chart, and an umbrella chart (sub-charts vendored as
// directories and as a .tgz, a CRD sub-chart, aliases, tags, conditions, `global`,
// `import-values` in both forms, `null` deleting a sub-chart default, YAML 1.1 scalars, hook Jobs).
// Also for a release helm installed by itself (no digest recorded by kplay), and: an edit helm would
// load is a change, one it ignores is not. Finally the files kplay reads from a chart directory are
// compared with the files `helm package` puts in the chart, for many `.helmignore` texts.
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { jsonEvents, kplay, repoRoot, type KplayResult } from '../helpers/cli.js';
import { helm, kubectl, run as runProgram, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';
import { loadChartDir } from '../../src/helm/load.js';

const CONTEXT = 'sandbox-3';
const fixtures = path.join(repoRoot, 'test/fixtures/helm/charts');
const suffix = Math.random().toString(16).slice(2, 8);

let env: SandboxEnv;
let tmp: string;
let inventory: string;
let helmLog: string;
let statsFile: string;

beforeAll(() => {
  env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-shapes-'));
  inventory = path.join(tmp, 'inventory.yml');
  writeFileSync(inventory, YAML.stringify({ all: { clusters: { [CONTEXT]: { context: CONTEXT, kubeconfig: env.kubeconfig } } } }));
  // helm behind a wrapper that logs every invocation: a no-op must run helm zero times.
  helmLog = path.join(tmp, 'helm-calls.log');
  const wrapper = path.join(tmp, 'helm');
  writeFileSync(wrapper, `#!/bin/sh\necho "$*" >> '${helmLog}'\nexec '${path.join(env.binDir, 'helm')}' "$@"\n`);
  chmodSync(wrapper, 0o755);
  statsFile = path.join(tmp, 'stats.jsonl');
  writeFileSync(path.join(tmp, 'release.yml'), [
    '- hosts: all',
    '  tasks:',
    '    - name: release',
    '      helm_release:',
    '        name: "{{ rel }}"',
    '        namespace: "{{ ns }}"',
    '        create_namespace: true',
    '        chart: "{{ chart }}"',
    '        values: "{{ values }}"',
    '        wait: true',
    '        timeout: 120',
  ].join('\n'));
});

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

interface Run extends KplayResult {
  /** helm command lines kplay ran. */
  helm: string[];
  /** API writes kplay made. */
  writes: number;
}

async function kp(args: string[]): Promise<Run> {
  const before = existsSync(helmLog) ? readFileSync(helmLog, 'utf8').split('\n').filter(Boolean).length : 0;
  rmSync(statsFile, { force: true });
  const r = await kplay(args, {
    env: {
      KPLAY_HELM: path.join(tmp, 'helm'),
      KPLAY_STATS_FILE: statsFile,
      KPLAY_RECORD_DIR: path.join(tmp, 'records'),
      HELM_CACHE_HOME: path.join(tmp, 'helm-home/cache'),
      HELM_CONFIG_HOME: path.join(tmp, 'helm-home/config'),
      HELM_DATA_HOME: path.join(tmp, 'helm-home/data'),
    },
    timeoutMs: 230_000,
  });
  const calls = existsSync(helmLog) ? readFileSync(helmLog, 'utf8').split('\n').filter(Boolean).slice(before) : [];
  const stats = existsSync(statsFile) ? readFileSync(statsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { writes?: number }) : [];
  return { ...r, helm: calls, writes: stats.reduce((n, s) => n + (s.writes ?? 0), 0) };
}

function result(r: KplayResult): { status: string; msg?: string } {
  const e = jsonEvents(r.stdout).find((x) => x.type === 'task_result' && x.task === 'release') as { status: string; msg?: string } | undefined;
  return e ?? { status: 'missing' };
}

async function releaseInfo(rel: string, ns: string): Promise<{ revision: number; description: string } | undefined> {
  const r = await helm(['status', rel, '-n', ns, '-o', 'json'], { context: CONTEXT, check: false });
  if (r.code !== 0) return undefined;
  const j = JSON.parse(r.stdout) as { version: number; info: { description: string } };
  return { revision: j.version, description: j.info.description };
}

/** One chart shape: its fixture, the values of the release, checks that helm rendered it as meant, and edits. */
interface Shape {
  fixture: string;
  values: Record<string, unknown>;
  /** Make the chart directory from the fixture (in `dir`). */
  prepare?: (dir: string) => Promise<void>;
  afterInstall: (ns: string, rel: string) => Promise<void>;
  /** Files helm does not load: edited, nothing may change. */
  ignoredEdits: [string, string][];
  /** A file helm loads (a sub-chart's, for the umbrella): edited, the release must be upgraded. */
  loadedEdit: [string, string];
  /** helm processes a no-op may run for a release without kplay's digest (helm's reading of the chart's values). */
  helmForForeignRelease: RegExp[];
  cleanup?: string[][];
}

async function jsonOf(args: string[]): Promise<Record<string, unknown>> {
  return JSON.parse((await kubectl([...args, '-o', 'json'], { context: CONTEXT })).stdout) as Record<string, unknown>;
}

const shapes: Shape[] = [
  {
    fixture: 'helmignored',
    values: { replicaCount: 2 },
    afterInstall: async (ns, rel) => {
      const hooks = (await helm(['get', 'hooks', rel, '-n', ns], { context: CONTEXT })).stdout;
      expect(hooks).not.toContain('test-connection'); // templates/tests/ is not in the chart helm loaded
      const d = await jsonOf(['-n', ns, 'get', 'deployment', `${rel}-app`]);
      const meta = d.metadata as { labels: Record<string, string> };
      expect(meta.labels['app.kubernetes.io/version']).toBe('1.1'); // appVersion: 1.10, a float for helm
      const annotations = (d.spec as { template: { metadata: { annotations: Record<string, string> } } }).template.metadata.annotations;
      expect(annotations).toEqual({ metrics: 'true', since: '2024-01-31', 'file-mode': '420' });
    },
    ignoredEdits: [
      ['README.md', '# edited\n'],
      ['ci/ci-values.yaml', 'replicaCount: 9\n'],
      ['templates/tests/test-connection.yaml', '# edited\n'],
      ['templates/deployment.yaml~', 'an editor backup\n'],
      ['values.yaml.orig', 'replicaCount: 9\n'],
      ['templates/.scratch.yaml', 'helm ignores dotfiles in templates/\n'],
    ],
    loadedEdit: ['templates/deployment.yaml', '# edited\n'],
    helmForForeignRelease: [],
  },
  {
    fixture: 'umbrella',
    values: { frontend: { replicas: 1 }, gizmo: { size: 4 } },
    prepare: async (dir) => {
      await runProgram(path.join(env.binDir, 'helm'), ['package', path.join(fixtures, 'metrics'), '-d', path.join(dir, 'charts')]);
    },
    afterInstall: async (ns, rel) => {
      const deps = (await kubectl(['-n', ns, 'get', 'deployments', '-o', 'name'], { context: CONTEXT })).stdout;
      expect(deps).toContain(`deployment.apps/${rel}-frontend`);
      expect(deps).toContain(`deployment.apps/${rel}-backend`); // condition backend.enabled: yes
      expect(deps).not.toContain(`${rel}-batch`); // tags.optional: false
      const front = await jsonOf(['-n', ns, 'get', 'deployment', `${rel}-frontend`]);
      expect((front.metadata as { labels: Record<string, string> }).labels).toMatchObject({ tier: 'web', environment: 'shapes', 'remove-me': 'deleted' });
      expect((front.spec as { replicas: number }).replicas).toBe(1);
      const summary = await jsonOf(['-n', ns, 'get', 'configmap', `${rel}-summary`]);
      expect(summary.data).toEqual({ environment: 'shapes', theme: 'dark', size: 'm', metricsPort: '9102', rolledOut: '2024-01-31' });
      const gizmo = await jsonOf(['-n', ns, 'get', 'gizmos.shapes.kplay.test', `${rel}-gizmo`]);
      expect((gizmo.spec as { size: number }).size).toBe(4);
      await kubectl(['-n', ns, 'get', 'service', `${rel}-metrics`], { context: CONTEXT }); // the packed sub-chart
      // the admission hook Jobs ran and were deleted (hook-succeeded); they are not release objects
      expect((await kubectl(['-n', ns, 'get', 'jobs', '-o', 'name'], { context: CONTEXT })).stdout).toBe('');
    },
    ignoredEdits: [['charts/.cache/notes.txt', 'not a chart\n']],
    loadedEdit: ['charts/app/templates/deployment.yaml', '# edited\n'],
    helmForForeignRelease: [/^install \S+ \S+ -n \S+ --dry-run=client -o json/],
    cleanup: [['delete', 'crd', 'gizmos.shapes.kplay.test', '--ignore-not-found', '--wait=false']],
  },
];

describe.each(shapes)('chart shape $fixture', (s) => {
  const rel = 'k';
  const ns = `shapes-${s.fixture}-${suffix}`;
  const foreignNs = `${ns}-h`;
  let chart = '';
  const run = (): Promise<Run> => kp(['run', path.join(tmp, 'release.yml'), '-i', inventory, '--no-lock', '-o', 'json', '-e', JSON.stringify({ rel, ns, chart, values: s.values })]);
  const drift = (r = rel, n = ns): Promise<Run> => kp(['drift', path.join(tmp, 'release.yml'), '-i', inventory, '-e', JSON.stringify({ rel: r, ns: n, chart, values: s.values })]);

  beforeAll(async () => {
    chart = path.join(tmp, s.fixture);
    cpSync(path.join(fixtures, s.fixture), chart, { recursive: true });
    await s.prepare?.(chart);
  });

  afterAll(async () => {
    for (const [r, n] of [[rel, ns], ['h', foreignNs]] as const) {
      await helm(['uninstall', r, '-n', n, '--ignore-not-found'], { context: CONTEXT, check: false });
      await kubectl(['delete', 'namespace', n, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
    }
    for (const args of s.cleanup ?? []) await kubectl(args, { context: CONTEXT, check: false });
  });

  it('installs, recording the digest of the chart files with the revision', async () => {
    const r = await run();
    expect(r.code, r.stdout.slice(-3000) + r.stderr).toBe(0);
    expect(result(r).status).toBe('changed');
    const info = await releaseInfo(rel, ns);
    expect(info?.revision).toBe(1);
    expect(info?.description).toMatch(/^Install complete \(kplay: chart sha256:[0-9a-f]{64}\)$/);
    await s.afterInstall(ns, rel);
  });

  it('reruns with 0 changed, no helm process and no API write', async () => {
    const r = await run();
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    expect(result(r)).toMatchObject({ status: 'ok', msg: expect.stringMatching(/up to date/) as unknown });
    expect(r.helm).toEqual([]);
    expect(r.writes).toBe(0);
    expect((await releaseInfo(rel, ns))?.revision).toBe(1);
  });

  it('kplay drift exits 0, with no helm process', async () => {
    const r = await drift();
    expect(r.code, r.stdout).toBe(0);
    expect(r.helm).toEqual([]);
  });

  it('a release helm installed itself (no digest from kplay) settles too: 0 changed, drift 0', async () => {
    const values = path.join(tmp, `${s.fixture}-values.json`);
    writeFileSync(values, JSON.stringify(s.values));
    await helm(['install', 'h', chart, '-n', foreignNs, '--create-namespace', '-f', values, '--wait', '--timeout', '120s'], { context: CONTEXT });
    const r = await kp(['run', path.join(tmp, 'release.yml'), '-i', inventory, '--no-lock', '-o', 'json', '-e', JSON.stringify({ rel: 'h', ns: foreignNs, chart, values: s.values })]);
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    expect(result(r)).toMatchObject({ status: 'ok' });
    expect(r.writes).toBe(0);
    // at most helm's own reading of the chart (no cluster access, no write)
    expect(r.helm.length).toBe(s.helmForForeignRelease.length);
    r.helm.forEach((line, i) => expect(line).toMatch(s.helmForForeignRelease[i] as RegExp));
    expect((await releaseInfo('h', foreignNs))?.revision).toBe(1);
    const d = await drift('h', foreignNs);
    expect(d.code, d.stdout).toBe(0);
  });

  it('an edit of a file helm does not load changes nothing', async () => {
    for (const [file, text] of s.ignoredEdits) {
      mkdirSync(path.dirname(path.join(chart, file)), { recursive: true });
      writeFileSync(path.join(chart, file), text, { flag: 'a' });
    }
    const r = await run();
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    expect(result(r).status, result(r).msg).toBe('ok');
    expect(r.helm).toEqual([]);
  });

  it('an edit of a file helm loads is a change (a sub-chart too); the upgrade settles again', async () => {
    const [file, text] = s.loadedEdit;
    writeFileSync(path.join(chart, file), text, { flag: 'a' });
    const r = await run();
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    expect(result(r).status).toBe('changed');
    expect(result(r).msg).toMatch(file.startsWith('charts/') ? /chart changed since kplay installed it/ : /templates changed: templates\/deployment\.yaml/);
    const info = await releaseInfo(rel, ns);
    expect(info?.revision).toBe(2);
    expect(info?.description).toMatch(/^Upgrade complete \(kplay: chart sha256:/);
    const again = await run();
    expect(result(again).status, result(again).msg).toBe('ok');
    expect(again.helm).toEqual([]);
    const d = await drift();
    expect(d.code, d.stdout).toBe(0);
  });
});

describe('the files of a chart directory: kplay reads what helm packs', () => {
  const tree = [
    'Chart.yaml', 'values.yaml', 'README.md', 'LICENSE', 'a.txt', 'notes.txt~', '.env', '.git/config', 'docs/x.md', 'docs/img/logo.svg',
    'sub/docs/y.md', 'sub/z.txt', 'files/conf.ini', 'files/.keep', 'crds/a.yaml', 'templates/a.yaml', 'templates/_helpers.tpl',
    'templates/.dot.yaml', 'templates/tests/t.yaml', 'templates/nested/b.yaml', 'templates/nested/.c.yaml', 'ci/ci-values.yaml',
    'values.schema.json', '[x].txt', 'a b.txt',
  ];
  const ignores = [
    '',
    '.git/\n*~\n.env\n',
    'templates/tests/\nci/\n/README.md\n',
    'docs\n',
    '/docs/\n',
    '*.md\n*.txt\n',
    'templates/*/\n',
    'templates/nested/*.yaml\n',
    'files/.*\n',
    '\\[x\\].txt\n',
    '[a-c].txt\n',
    '[^a].txt\n',
    '?.txt\n',
    'a?b.txt\n',
    '  # a comment\n  LICENSE  \n',
    '!Chart.yaml\n',
    '!Chart.yaml\n!values.yaml\n!templates\n!templates/a.yaml\n*\n',
    '/*.txt\n/*/*.md\n',
    '*/\n',
  ];
  let dir: string;
  beforeAll(() => {
    env = sandboxEnv();
    dir = path.join(tmp, 'packed', 'tree');
    for (const f of tree) {
      mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
      writeFileSync(path.join(dir, f), f === 'Chart.yaml' ? 'apiVersion: v2\nname: tree\nversion: 0.1.0\n' : f === 'values.schema.json' ? '{}' : f === 'values.yaml' ? 'a: 1\n' : f.startsWith('templates/') ? '' : `${f}\n`);
    }
  });

  it.each(ignores)('.helmignore %j', async (text) => {
    writeFileSync(path.join(dir, '.helmignore'), text);
    const out = path.join(tmp, 'packed', 'out');
    rmSync(out, { recursive: true, force: true });
    const r = await runProgram(path.join(env.binDir, 'helm'), ['package', dir, '-d', out], { check: false });
    let mine: string[] | string;
    try {
      mine = (await loadChartDir(dir)).all.map((f) => f.name).sort();
      if (!mine.includes('Chart.yaml')) mine = 'Chart.yaml file is missing';
    } catch (e) {
      mine = e instanceof Error ? e.message : String(e);
    }
    if (r.code !== 0) {
      expect(r.stderr).toMatch(/Chart\.yaml file is missing/);
      expect(mine).toBe('Chart.yaml file is missing');
      return;
    }
    const listing = await runProgram('tar', ['tzf', path.join(out, 'tree-0.1.0.tgz')]);
    const helms = listing.stdout.split('\n').filter(Boolean).map((l) => l.replace(/^tree\//, '')).sort();
    expect(mine).toEqual(helms);
  });
});

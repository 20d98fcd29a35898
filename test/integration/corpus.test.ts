// The real-world corpus (test/fixtures/corpus): small charts and manifest sets that reproduce the
// shapes public charts and vendor manifests have (null metadata, List kinds, CRDs + CRs, hooks,
// webhooks and APIServices whose backend is down, umbrella charts, random-valued templates,
// cluster-scoped and multi-namespace objects, server-normalised fields, HPA-owned replicas).
// Every fixture goes through the same cycle against the sandbox, each step a test named after the
// fixture and the step: install → rerun (0 changed, 0 helm processes, 0 API writes) → `kplay
// drift` exits 0 → a hand edit makes `kplay drift` exit 3 naming the object and field → upgrade
// to a second version (and a rerun of that is 0 changed) → uninstall.
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { jsonEvents, kplay, repoRoot, type KplayResult } from '../helpers/cli.js';
import { helm, kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';
import { bigManifestSet } from '../fixtures/corpus/big-set.js';

const CONTEXT = 'sandbox-2';
const corpus = path.join(repoRoot, 'test/fixtures/corpus');
const suffix = Math.random().toString(16).slice(2, 8);

let env: SandboxEnv;
let tmp: string;
let inventory: string;
let helmLog: string;
let statsFile: string;

beforeAll(() => {
  env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-corpus-'));
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
    '        state: "{{ state }}"',
    '        wait: true',
    '        timeout: 120',
    '      register: rel_result',
  ].join('\n'));
  writeFileSync(path.join(tmp, 'apply.yml'), [
    '- hosts: all',
    '  tasks:',
    '    - name: namespace',
    '      k8s_apply:',
    '        definition: { apiVersion: v1, kind: Namespace, metadata: { name: "{{ ns }}" } }',
    '      when: state == "present"',
    '    - name: manifests',
    '      k8s_apply:',
    '        src: "{{ src }}"',
    '        namespace: "{{ ns }}"',
    '        state: "{{ state }}"',
    '        wait: true',
    '        wait_timeout: 120',
  ].join('\n'));
});

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

/** helm invocations and API writes of one kplay process. */
interface Counts {
  helm: string[];
  writes: number;
}

async function kp(args: string[]): Promise<KplayResult & Counts> {
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

/** Extra vars of the corpus playbooks (`state: present`, no values unless given). */
const vars = (v: Record<string, unknown>): string[] => ['-e', JSON.stringify({ state: 'present', values: {}, ...v })];

function recap(r: KplayResult): { changed: number; failed: number } {
  const ev = jsonEvents(r.stdout).find((e) => e.type === 'recap') as { clusters?: Record<string, { changed: number; failed: number }> } | undefined;
  const s = ev?.clusters?.[CONTEXT];
  return { changed: s?.changed ?? -1, failed: s?.failed ?? -1 };
}

function taskResults(r: KplayResult): { task: string; status: string; msg?: string }[] {
  return jsonEvents(r.stdout).filter((e) => e.type === 'task_result') as { task: string; status: string; msg?: string }[];
}

async function revision(rel: string, ns: string): Promise<number | undefined> {
  const r = await helm(['status', rel, '-n', ns, '-o', 'json'], { context: CONTEXT, check: false });
  return r.code === 0 ? (JSON.parse(r.stdout) as { version: number }).version : undefined;
}

/** A copy of chart `name` as version 2.0.0, with the files of `<name>.v2/` (when present) laid over it. */
function chartV2(name: string): string {
  const dir = path.join(tmp, `${name}-2.0.0`);
  rmSync(dir, { recursive: true, force: true });
  cpSync(path.join(corpus, 'charts', name), dir, { recursive: true });
  const overlay = path.join(corpus, 'charts', `${name}.v2`);
  if (existsSync(overlay)) {
    for (const f of readdirSync(overlay, { recursive: true, withFileTypes: true })) {
      if (!f.isFile() || f.name === 'README.md') continue;
      const rel = path.relative(overlay, path.join(f.parentPath, f.name));
      cpSync(path.join(overlay, rel), path.join(dir, rel));
    }
  }
  const chartYaml = path.join(dir, 'Chart.yaml');
  writeFileSync(chartYaml, readFileSync(chartYaml, 'utf8').replace(/^version: .*$/m, 'version: 2.0.0'));
  return dir;
}

/** One chart fixture of the corpus and what its cycle checks beyond the common steps. */
interface ChartCase {
  /** Directory under test/fixtures/corpus/charts. */
  fixture: string;
  /** A hand edit of a managed object (kubectl args, without --context). */
  edit: (ns: string, rel: string) => string[];
  /** What `kplay drift` must print after the edit (object and field). */
  drift: (ns: string, rel: string) => RegExp;
  /** Extra checks after the install. */
  afterInstall?: (ns: string, rel: string) => Promise<void>;
  /** Extra checks after the upgrade. */
  afterUpgrade?: (ns: string, rel: string) => Promise<void>;
  /** Extra checks after the uninstall. */
  afterUninstall?: (ns: string, rel: string) => Promise<void>;
  /** Cluster-scoped leftovers to remove at the end (kubectl delete args). */
  cleanup?: (ns: string, rel: string) => string[][];
}

async function jsonOf(args: string[]): Promise<Record<string, unknown>> {
  return JSON.parse((await kubectl([...args, '-o', 'json'], { context: CONTEXT })).stdout) as Record<string, unknown>;
}

const deleteEdit = (kind: string, name: (rel: string) => string) => (ns: string, rel: string): string[] => ['-n', ns, 'delete', kind, name(rel)];

const chartCases: ChartCase[] = [
  {
    fixture: 'null-and-empty',
    edit: (ns, rel) => ['-n', ns, 'scale', 'deployment', `${rel}-app`, '--replicas=3'],
    drift: (ns, rel) => new RegExp(`Deployment ${ns}/${rel}-app \\(\\.spec\\.replicas by kubectl[\\w-]*\\)`),
    afterInstall: async (ns, rel) => {
      const cms = (await kubectl(['-n', ns, 'get', 'configmaps', '-o', 'name'], { context: CONTEXT })).stdout;
      expect(cms).toContain(`configmap/${rel}-from-list`);
      expect(cms).toContain(`configmap/${rel}-from-typed-list`);
    },
  },
  {
    fixture: 'crds-and-crs',
    edit: (ns, rel) => ['-n', ns, 'patch', 'widgets.corpus.kplay.test', `${rel}-large`, '--type=merge', '-p', '{"spec":{"size":7}}'],
    drift: (ns, rel) => new RegExp(`Widget ${ns}/${rel}-large \\(\\.spec\\.size by kubectl[\\w-]*\\)`),
    afterInstall: async (ns, rel) => {
      const w = await jsonOf(['-n', ns, 'get', 'widgets.corpus.kplay.test', `${rel}-small`]);
      expect((w.spec as { size: number }).size).toBe(1);
    },
    afterUpgrade: async (ns, rel) => {
      // The changed CRD was applied before the upgrade: the new field is kept, not pruned.
      const w = await jsonOf(['-n', ns, 'get', 'widgets.corpus.kplay.test', `${rel}-small`]);
      expect((w.spec as { color?: string }).color).toBe('blue');
    },
    cleanup: () => [['delete', 'crd', 'widgets.corpus.kplay.test', 'gadgets.corpus.kplay.test', '--ignore-not-found']],
  },
  {
    fixture: 'hooks',
    edit: deleteEdit('configmap', (rel) => `${rel}-settings`),
    drift: (ns, rel) => new RegExp(`ConfigMap ${ns}/${rel}-settings \\(deleted\\)`),
    afterInstall: async (ns, rel) => {
      // before-hook-creation keeps the last migration Job; hook-succeeded removed the hook ConfigMap.
      const job = await jsonOf(['-n', ns, 'get', 'job', `${rel}-migrate`]);
      expect((job.status as { succeeded?: number }).succeeded).toBe(1);
      expect((await kubectl(['-n', ns, 'get', 'configmap', `${rel}-migrate-config`], { context: CONTEXT, check: false })).code).not.toBe(0);
    },
    afterUpgrade: async (ns, rel) => {
      const job = await jsonOf(['-n', ns, 'get', 'job', `${rel}-migrate`]);
      expect(JSON.stringify((job.spec as { template: unknown }).template)).toContain('"2"');
    },
  },
  {
    fixture: 'umbrella',
    edit: (ns, rel) => ['-n', ns, 'set', 'image', `deployment/${rel}-worker`, 'main=registry.k8s.io/pause:3.9'],
    drift: (ns, rel) => new RegExp(`Deployment ${ns}/${rel}-worker \\(\\.spec\\.template\\.spec\\.containers\\[0\\]\\.image by kubectl[\\w-]*\\)`),
    afterInstall: async (ns, rel) => {
      const deps = (await kubectl(['-n', ns, 'get', 'deployments', '-o', 'name'], { context: CONTEXT })).stdout;
      expect(deps).toContain(`deployment.apps/${rel}-api`);
      expect(deps).toContain(`deployment.apps/${rel}-worker`);
      expect(deps).not.toContain(`${rel}-legacy`); // condition: legacy.enabled false
      const cm = await jsonOf(['-n', ns, 'get', 'configmap', `${rel}-umbrella`]);
      expect((cm.metadata as { labels: Record<string, string> }).labels['corpus.kplay.test/environment']).toBe('corpus'); // library chart + global
    },
  },
  {
    fixture: 'random-and-lookup',
    edit: (ns, rel) => ['-n', ns, 'set', 'env', `deployment/${rel}-app`, 'GREETING=hi'],
    drift: (ns, rel) => new RegExp(`Deployment ${ns}/${rel}-app \\(\\.spec\\.template\\.spec\\.containers\\[0\\]\\.env\\[0\\]\\.value by kubectl[\\w-]*\\)`),
  },
  {
    fixture: 'scopes-and-keep',
    edit: (ns, rel) => ['-n', 'kube-public', 'patch', 'configmap', `${rel}-${ns}-public`, '--type=merge', '-p', '{"data":{"where":"edited"}}'],
    drift: (ns, rel) => new RegExp(`ConfigMap kube-public/${rel}-${ns}-public \\(\\.data\\.where by kubectl[\\w-]*\\)`),
    afterInstall: async (ns, rel) => {
      await kubectl(['get', 'clusterrole', `${rel}-${ns}-reader`], { context: CONTEXT });
      await kubectl(['-n', `${ns}-${rel}-data`, 'get', 'configmap', `${rel}-data`], { context: CONTEXT });
    },
    afterUpgrade: async (ns, rel) => {
      // version 2 drops the legacy ConfigMap: helm deleted it
      expect((await kubectl(['-n', ns, 'get', 'configmap', `${rel}-legacy`], { context: CONTEXT, check: false })).code).not.toBe(0);
    },
    afterUninstall: async (ns, rel) => {
      // helm.sh/resource-policy: keep
      await kubectl(['-n', ns, 'get', 'configmap', `${rel}-kept`], { context: CONTEXT });
      await kubectl(['get', 'namespace', `${ns}-${rel}-data`], { context: CONTEXT });
      expect((await kubectl(['get', 'clusterrole', `${rel}-${ns}-reader`], { context: CONTEXT, check: false })).code).not.toBe(0);
    },
    cleanup: (ns, rel) => [['delete', 'namespace', `${ns}-${rel}-data`, '--ignore-not-found', '--wait=false']],
  },
  {
    fixture: 'server-normalised',
    edit: (ns, rel) => ['-n', ns, 'set', 'image', `deployment/${rel}-web`, 'web=registry.k8s.io/pause:3.9'],
    drift: (ns, rel) => new RegExp(`Deployment ${ns}/${rel}-web \\(\\.spec\\.template\\.spec\\.containers\\[0\\]\\.image by kubectl[\\w-]*\\)`),
    afterInstall: async (ns, rel) => {
      // the HPA owns replicas (minReplicas 2); that is not drift (checked by the rerun and drift steps)
      const deadline = Date.now() + 60_000;
      for (;;) {
        const d = await jsonOf(['-n', ns, 'get', 'deployment', `${rel}-web`]);
        if ((d.spec as { replicas: number }).replicas === 2) break;
        if (Date.now() > deadline) throw new Error('the HPA did not scale the Deployment to minReplicas 2');
        await new Promise((r) => setTimeout(r, 1000));
      }
    },
    cleanup: (ns, rel) => [['delete', 'pv', `${ns}-${rel}-db-data`, '--ignore-not-found', '--wait=false']],
  },
  {
    fixture: 'unavailable-backends',
    edit: deleteEdit('configmap', (rel) => `${rel}-settings`),
    drift: (ns, rel) => new RegExp(`ConfigMap ${ns}/${rel}-settings \\(deleted\\)`),
    afterInstall: async (ns, rel) => {
      // Discovery is partly broken now (an APIService with no endpoints), and a webhook with no
      // endpoints guards labelled ConfigMaps: other charts and manifests still work ...
      const other = await kp(['run', path.join(tmp, 'release.yml'), '-i', inventory, '--no-lock', '-o', 'json', ...vars({ rel: 'other', ns: `${ns}-other`, chart: path.join(corpus, 'charts/null-and-empty') })]);
      expect(other.code, other.stdout.slice(-2000)).toBe(0);
      await helm(['uninstall', 'other', '-n', `${ns}-other`, '--wait'], { context: CONTEXT });
      await kubectl(['delete', 'namespace', `${ns}-other`, '--wait=false'], { context: CONTEXT });
      // ... and a write the webhook really blocks fails naming the webhook.
      const pb = path.join(tmp, 'blocked.yml');
      writeFileSync(pb, `- hosts: all\n  tasks:\n    - name: blocked\n      k8s_apply:\n        namespace: ${ns}\n        definition: { apiVersion: v1, kind: ConfigMap, metadata: { name: blocked, labels: { corpus.kplay.test/validated-by: ${rel} } }, data: { a: b } }\n    - name: allowed\n      k8s_apply:\n        namespace: ${ns}\n        definition: { apiVersion: v1, kind: ConfigMap, metadata: { name: allowed }, data: { a: b } }\n      ignore_errors: true\n`);
      const blocked = await kp(['run', pb, '-i', inventory, '--no-lock']);
      expect(blocked.code).toBe(2);
      expect(blocked.stdout).toContain(`failed calling webhook "validate.${rel}.corpus.kplay.test"`);
      expect(blocked.stdout).not.toMatch(/TypeError|failed unexpectedly/);
      await kubectl(['-n', ns, 'delete', 'configmap', 'allowed', '--ignore-not-found'], { context: CONTEXT });
    },
  },
];

describe.each(chartCases)('corpus chart $fixture', (c) => {
  const rel = 'x';
  const ns = `corpus-${c.fixture.slice(0, 24)}-${suffix}`;
  const chart = path.join(corpus, 'charts', c.fixture);
  const run = (extra: Record<string, unknown> = {}, args: string[] = []): Promise<KplayResult & Counts> =>
    kp(['run', path.join(tmp, 'release.yml'), '-i', inventory, '--no-lock', '-o', 'json', ...args, ...vars({ rel, ns, chart, ...extra })]);
  const drift = (extra: Record<string, unknown> = {}): Promise<KplayResult & Counts> => kp(['drift', path.join(tmp, 'release.yml'), '-i', inventory, ...vars({ rel, ns, chart, ...extra })]);
  let password = '';

  afterAll(async () => {
    await helm(['uninstall', rel, '-n', ns, '--ignore-not-found'], { context: CONTEXT, check: false });
    for (const args of c.cleanup?.(ns, rel) ?? []) await kubectl(args, { context: CONTEXT, check: false });
    await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  });

  it('installs', async () => {
    expect(password).toBe('');
    const r = await run();
    expect(r.code, r.stdout.slice(-3000) + r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(taskResults(r)[0]?.status).toBe('changed');
    expect(await revision(rel, ns)).toBe(1);
    await c.afterInstall?.(ns, rel);
    if (c.fixture === 'random-and-lookup') password = ((await jsonOf(['-n', ns, 'get', 'secret', `${rel}-credentials`])).data as { password: string }).password;
  });

  it('reruns with 0 changed, no helm process and no API write', async () => {
    const r = await run();
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    expect(recap(r).changed).toBe(0);
    expect(taskResults(r)[0]?.msg).toMatch(/up to date/);
    expect(r.helm).toEqual([]);
    expect(r.writes).toBe(0);
    expect(await revision(rel, ns)).toBe(1);
  });

  it('kplay drift exits 0', async () => {
    const r = await drift();
    expect(r.code, r.stdout).toBe(0);
    expect(r.helm).toEqual([]);
  });

  it('a hand edit makes kplay drift exit 3, naming the object and field', async () => {
    await kubectl(c.edit(ns, rel), { context: CONTEXT });
    const r = await drift();
    expect(r.code, r.stdout).toBe(3);
    expect(r.stdout).toMatch(c.drift(ns, rel));
    expect(r.writes).toBe(0);
  });

  it('upgrades to version 2 (which also repairs the drift), then reruns with 0 changed', async () => {
    const v2 = chartV2(c.fixture);
    const r = await run({ chart: v2 });
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    expect(taskResults(r)[0]?.status).toBe('changed');
    expect(taskResults(r)[0]?.msg).toMatch(/2\.0\.0/);
    expect(await revision(rel, ns)).toBe(2);
    await c.afterUpgrade?.(ns, rel);
    if (c.fixture === 'random-and-lookup') {
      const s = await jsonOf(['-n', ns, 'get', 'secret', `${rel}-credentials`]);
      expect((s.data as { password: string }).password).toBe(password);
    }
    const again = await run({ chart: v2 });
    expect(recap(again).changed, again.stdout.slice(-3000)).toBe(0);
    expect(again.helm).toEqual([]);
    const d = await drift({ chart: v2 });
    expect(d.code, d.stdout).toBe(0);
  });

  it('uninstalls', async () => {
    const r = await run({ state: 'absent' });
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    expect(taskResults(r)[0]?.status).toBe('changed');
    expect(await revision(rel, ns)).toBeUndefined();
    await c.afterUninstall?.(ns, rel);
    const again = await run({ state: 'absent' });
    expect(recap(again).changed).toBe(0);
    expect(again.helm).toEqual([]);
  });
});

describe('corpus chart umbrella: values.schema.json', () => {
  const ns = `corpus-schema-${suffix}`;
  afterAll(async () => {
    await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  });

  it('a bad value is a clear error naming the value path, and nothing is written', async () => {
    const r = await kp(['run', path.join(tmp, 'release.yml'), '-i', inventory, '--no-lock', ...vars({ rel: 'bad', ns, chart: path.join(corpus, 'charts/umbrella'), values: { replicaCount: 'three' } })]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/replicaCount/);
    expect(r.stdout).toMatch(/want integer/);
    expect(r.stdout).not.toMatch(/TypeError|failed unexpectedly/);
    expect(await revision('bad', ns)).toBeUndefined();
  });
});

/** One manifest-set fixture (k8s_apply) and its cycle's specifics. */
interface ManifestCase {
  fixture: string;
  edit: (ns: string) => string[];
  drift: (ns: string) => RegExp;
  /** The second version: a text replacement in the file. */
  upgrade: [string, string];
  cleanup?: string[][];
}

const manifestCases: ManifestCase[] = [
  {
    fixture: 'null-and-empty.yaml',
    edit: (ns) => ['-n', ns, 'scale', 'deployment', 'corpus-app', '--replicas=4'],
    drift: (ns) => new RegExp(`Deployment ${ns}/corpus-app \\(spec\\.replicas\\)`),
    upgrade: ['value: standard', 'value: upgraded'],
  },
  {
    fixture: 'server-normalised.yaml',
    edit: (ns) => ['-n', ns, 'delete', 'poddisruptionbudget', 'corpus-web'],
    drift: (ns) => new RegExp(`PodDisruptionBudget ${ns}/corpus-web`),
    upgrade: ['maxUnavailable: 50%', 'maxUnavailable: 1'],
  },
  {
    fixture: 'crds-with-crs.yaml',
    edit: (ns) => ['-n', ns, 'patch', 'sprockets.corpus.kplay.test', 'corpus-sprocket', '--type=merge', '-p', '{"spec":{"teeth":13}}'],
    drift: (ns) => new RegExp(`Sprocket ${ns}/corpus-sprocket \\(spec\\.teeth\\)`),
    upgrade: ['teeth: 12', 'teeth: 16'],
    cleanup: [['delete', 'crd', 'sprockets.corpus.kplay.test', '--ignore-not-found']],
  },
];

describe.each(manifestCases)('corpus manifests $fixture', (c) => {
  const ns = `corpus-m-${c.fixture.replace(/\.yaml$/, '').slice(0, 20)}-${suffix}`;
  const src = path.join(corpus, 'manifests', c.fixture);
  const run = (extra: Record<string, unknown> = {}): Promise<KplayResult & Counts> => kp(['run', path.join(tmp, 'apply.yml'), '-i', inventory, '--no-lock', '-o', 'json', ...vars({ ns, src, ...extra })]);
  const drift = (extra: Record<string, unknown> = {}): Promise<KplayResult & Counts> => kp(['drift', path.join(tmp, 'apply.yml'), '-i', inventory, ...vars({ ns, src, ...extra })]);

  afterAll(async () => {
    await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
    for (const args of c.cleanup ?? []) await kubectl(args, { context: CONTEXT, check: false });
  });

  it('applies', async () => {
    const r = await run();
    expect(r.code, r.stdout.slice(-3000) + r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(recap(r).changed).toBeGreaterThan(0);
  });

  it('reapplies with 0 changed and no API write', async () => {
    const r = await run();
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    expect(recap(r).changed).toBe(0);
    expect(r.writes).toBe(0);
  });

  it('kplay drift exits 0, then 3 after a hand edit, naming the object and field', async () => {
    const clean = await drift();
    expect(clean.code, clean.stdout).toBe(0);
    await kubectl(c.edit(ns), { context: CONTEXT });
    const r = await drift();
    expect(r.code, r.stdout).toBe(3);
    expect(r.stdout).toMatch(c.drift(ns));
  });

  it('applies a second version (repairing the drift), then reapplies with 0 changed', async () => {
    const v2 = path.join(tmp, `v2-${c.fixture}`);
    writeFileSync(v2, readFileSync(src, 'utf8').replace(c.upgrade[0], c.upgrade[1]));
    const r = await run({ src: v2 });
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    expect(recap(r).changed).toBeGreaterThan(0);
    const again = await run({ src: v2 });
    expect(recap(again).changed, again.stdout.slice(-3000)).toBe(0);
    expect(again.writes).toBe(0);
    const d = await drift({ src: v2 });
    expect(d.code, d.stdout).toBe(0);
  });

  it('removes the set (state: absent)', async () => {
    const r = await run({ state: 'absent' });
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    const again = await run({ state: 'absent' });
    expect(recap(again).changed).toBe(0);
  });
});

describe('corpus: a big manifest set (10 large CRDs, their CRs, RBAC, workloads, an APIService) in one k8s_apply task', () => {
  const ns = `corpus-big-${suffix}`;
  let file: string;
  let count = 0;
  beforeAll(() => {
    const set = bigManifestSet(ns, suffix);
    file = path.join(tmp, 'big-set.yaml');
    writeFileSync(file, set.text);
    count = set.count;
  });
  afterAll(async () => {
    await kp(['run', path.join(tmp, 'apply.yml'), '-i', inventory, '--no-lock', ...vars({ ns, src: file, state: 'absent' })]);
    await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  });

  it('applies cleanly, then no-ops with 0 changed and 0 writes, without Node warnings', async () => {
    expect(count).toBeGreaterThanOrEqual(100);
    const r = await kp(['run', path.join(tmp, 'apply.yml'), '-i', inventory, '--no-lock', '-o', 'json', ...vars({ ns, src: file })]);
    expect(r.code, r.stdout.slice(-3000) + r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const manifests = taskResults(r).find((t) => t.task === 'manifests');
    expect(manifests?.msg).toMatch(new RegExp(`^${count} created`));
    const again = await kp(['run', path.join(tmp, 'apply.yml'), '-i', inventory, '--no-lock', '-o', 'json', ...vars({ ns, src: file })]);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe('');
    expect(recap(again).changed).toBe(0);
    expect(again.writes).toBe(0);
    const d = await kp(['drift', path.join(tmp, 'apply.yml'), '-i', inventory, ...vars({ ns, src: file })]);
    expect(d.code, d.stdout).toBe(0);
    expect(d.stderr).toBe('');
  });
});

// The shapes of public vendor sets (test/fixtures/corpus/vendor-shapes.ts: controller-gen CRDs
// with very large schemas and the old empty `status.acceptedNames` stub, many small CRDs, custom
// resources with large specs, aggregated ClusterRoles — one with Knative's `rules: []` — RBAC
// subjects with `apiGroup: ""`, webhooks) applied by one k8s_apply task, and a chart shaped after
// ingress-nginx (test/fixtures/corpus/charts/ingress-controller: hook Jobs, IngressClass,
// webhook, `minReadySeconds: 0`) installed by helm_release: both apply cleanly, then a rerun
// changes nothing and sends no write, no dry-run and, for the chart, reads no discovery.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { jsonEvents, kplay, repoRoot, type KplayResult } from '../helpers/cli.js';
import { kubectl, sandboxEnv } from '../sandbox/env.js';
import { vendorManifestSet } from '../fixtures/corpus/vendor-shapes.js';

const CONTEXT = 'sandbox-3';
const suffix = `vendorperf-${Math.random().toString(16).slice(2, 8)}`;
let tmp: string;
let inventory: string;
let helmBin: string;

interface Stats {
  writes: number;
  byVerb: Record<string, number>;
}

/** A kplay run with its request counts (KPLAY_STATS_FILE). */
async function kp(args: string[]): Promise<KplayResult & Stats> {
  const statsFile = path.join(tmp, `stats-${Math.random().toString(16).slice(2)}.jsonl`);
  const env = { KPLAY_STATS_FILE: statsFile, KPLAY_RECORD_DIR: path.join(tmp, 'records'), KPLAY_HELM: helmBin, HELM_CACHE_HOME: path.join(tmp, 'helm/cache'), HELM_CONFIG_HOME: path.join(tmp, 'helm/config'), HELM_DATA_HOME: path.join(tmp, 'helm/data') };
  const r = await kplay(args, { env, timeoutMs: 300_000 });
  const lines = readFileSync(statsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Partial<Stats>).filter((s) => s.byVerb);
  const byVerb: Record<string, number> = {};
  for (const l of lines) for (const [k, v] of Object.entries(l.byVerb ?? {})) byVerb[k] = (byVerb[k] ?? 0) + v;
  return { ...r, writes: lines.reduce((n, s) => n + (s.writes ?? 0), 0), byVerb };
}

function result(r: KplayResult): { status: string; msg?: string } | undefined {
  return jsonEvents(r.stdout).find((e) => e.type === 'task_result') as { status: string; msg?: string } | undefined;
}

beforeAll(() => {
  const env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-vendor-'));
  helmBin = path.join(env.binDir, 'helm');
  inventory = path.join(tmp, 'inventory.yml');
  writeFileSync(inventory, YAML.stringify({ all: { clusters: { [CONTEXT]: { context: CONTEXT, kubeconfig: env.kubeconfig } } } }));
});

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

describe('vendor set shapes in one k8s_apply task', () => {
  const ns = `${suffix}-set`;
  const set = vendorManifestSet(ns, suffix, { largeCrds: 3, smallCrds: 6, crs: 24, clusterRoles: 8, deployments: 2, emptyAggregatedRules: true });
  let play: string;
  beforeAll(async () => {
    const file = path.join(tmp, 'set.yaml');
    writeFileSync(file, set.text);
    play = path.join(tmp, 'apply.yml');
    writeFileSync(play, YAML.stringify([{ hosts: 'all', tasks: [{ name: 'set', k8s_apply: { src: file, namespace: ns, state: '{{ state | default("present") }}' } }] }]));
    await kubectl(['create', 'namespace', ns], { context: CONTEXT });
  });
  afterAll(async () => {
    await kp(['run', play, '-i', inventory, '--no-lock', '-e', 'state=absent']);
    await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  });

  it('creates every object (custom resources of CRDs carrying the empty status stub wait for them), then a rerun changes nothing with no write and no dry-run', async () => {
    const r = await kp(['run', play, '-i', inventory, '--no-lock', '-o', 'json']);
    expect(r.code, r.stdout.slice(-3000) + r.stderr).toBe(0);
    expect(result(r)?.msg).toMatch(new RegExp(`^${set.count} created`));
    // the aggregation controller fills in the rules of the aggregated ClusterRole shipped with rules: []
    const role = `vendor-${suffix}-role-0`;
    // polled until the controller has filled them (the test's timeout bounds the wait): the rerun must meet that state
    for (;;) {
      const rules = JSON.parse((await kubectl(['get', 'clusterrole', role, '-o', 'jsonpath={.rules}'], { context: CONTEXT })).stdout || '[]') as unknown[];
      if (rules.length) break;
      await new Promise((res) => setTimeout(res, 500));
    }
    const again = await kp(['run', play, '-i', inventory, '--no-lock', '-o', 'json']);
    expect(again.code, again.stdout.slice(-3000) + again.stderr).toBe(0);
    expect(result(again)?.status).toBe('ok');
    expect(result(again)?.msg).toMatch(new RegExp(`^${set.count} unchanged`));
    expect(again.writes).toBe(0);
    expect(again.byVerb.dryrun ?? 0).toBe(0);
    const d = await kp(['drift', play, '-i', inventory]);
    expect(d.code, d.stdout + d.stderr).toBe(0);
  });
});

describe('an ingress controller chart (ingress-nginx shape) with helm_release', () => {
  const ns = `${suffix}-ing`;
  let play: string;
  beforeAll(() => {
    play = path.join(tmp, 'release.yml');
    writeFileSync(play, YAML.stringify([{ hosts: 'all', tasks: [{ name: 'ingress', helm_release: { name: 'ingress', namespace: ns, create_namespace: true, chart: path.join(repoRoot, 'test/fixtures/corpus/charts/ingress-controller'), wait: true, timeout: 180, state: '{{ state | default("present") }}' } }] }]));
  });
  afterAll(async () => {
    await kp(['run', play, '-i', inventory, '--no-lock', '-e', 'state=absent']);
    await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  });

  it('installs (hook Jobs run), then a rerun is up to date with no write, no dry-run and no discovery', async () => {
    const r = await kp(['run', play, '-i', inventory, '--no-lock', '-o', 'json']);
    expect(r.code, r.stdout.slice(-3000) + r.stderr).toBe(0);
    expect(result(r)?.msg).toMatch(/^installed .*to revision 1/);
    const again = await kp(['run', play, '-i', inventory, '--no-lock', '-o', 'json']);
    expect(again.code, again.stdout.slice(-3000) + again.stderr).toBe(0);
    expect(result(again)?.msg).toMatch(/up to date/);
    expect(again.writes).toBe(0);
    expect(again.byVerb.dryrun ?? 0).toBe(0);
    // only GET /version: every kind of the chart is known without /api and /apis
    expect(again.byVerb.discovery ?? 0).toBeLessThanOrEqual(1);
  });
});

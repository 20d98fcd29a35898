// The analysis gate in a real rollout: `serial: 1` over the three sandbox clusters, a release
// (a ConfigMap standing in for it) applied in a block, gated on a REAL Prometheus scraping one
// stand-in exporter per cluster. A bad error ratio on the first cluster fails the gate there:
// rescue rolls that cluster back, and `any_errors_fatal` stops the rollout before the others.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kplay } from '../helpers/cli.js';
import { startExporter, startPrometheus, waitForQuery, type Exporter, type PrometheusInstance } from '../helpers/prometheus.js';
import { kubectl, sandboxEnv } from '../sandbox/env.js';

const CLUSTERS = ['sandbox-1', 'sandbox-2', 'sandbox-3'];
const ns = `analysis-${Math.random().toString(16).slice(2, 8)}`;
let tmp: string;
let inventory: string;
let playbook: string;
const exporters: Record<string, Exporter> = {};
let prom: PrometheusInstance;

beforeAll(async () => {
  const env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-analysis-'));
  for (const c of CLUSTERS) exporters[c] = await startExporter(0.001);
  prom = await startPrometheus(Object.fromEntries(CLUSTERS.map((c) => [c, new URL(exporters[c]!.server.url).host])));
  await waitForQuery(prom.url, 'app_error_ratio', (v) => v.length === 3);
  inventory = path.join(tmp, 'inventory.yml');
  writeFileSync(
    inventory,
    ['all:', '  vars:', `    prometheus_url: ${prom.url}`, '  children:', '    fleet:', '      clusters:', ...CLUSTERS.map((c) => `        ${c}: { context: ${c}, kubeconfig: ${env.kubeconfig} }`)].join('\n'),
  );
  playbook = path.join(tmp, 'rollout.yml');
  writeFileSync(
    playbook,
    [
      '- hosts: fleet',
      '  serial: 1',
      '  any_errors_fatal: true',
      '  tasks:',
      '    - block:',
      '        - name: release',
      '          k8s_apply:',
      '            definition:',
      `              - { apiVersion: v1, kind: Namespace, metadata: { name: ${ns} } }`,
      `              - { apiVersion: v1, kind: ConfigMap, metadata: { name: web, namespace: ${ns} }, data: { version: "{{ version }}" } }`,
      '        - name: gate',
      '          analysis:',
      '            interval: 0.3',
      '            count: 4',
      '            failure_limit: 1',
      '            metrics:',
      '              - name: error-ratio',
      '                prometheus:',
      '                  address: "{{ prometheus_url }}"',
      '                  query: app_error_ratio{cluster="{{ inventory_hostname }}"}',
      '                success_condition: result < 0.01',
      '      rescue:',
      '        - name: roll back',
      '          k8s_apply:',
      `            definition: { apiVersion: v1, kind: ConfigMap, metadata: { name: web, namespace: ${ns} }, data: { version: rolled-back } }`,
      '        - fail: { msg: "gate failed on {{ inventory_hostname }}" }',
    ].join('\n'),
  );
}, 180_000);

afterAll(async () => {
  await prom?.stop();
  for (const e of Object.values(exporters)) await e.server.close();
  for (const c of CLUSTERS) await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: c, check: false });
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function version(cluster: string): Promise<string> {
  const r = await kubectl(['get', 'configmap', 'web', '-n', ns, '-o', 'jsonpath={.data.version}'], { context: cluster, check: false });
  return r.code === 0 ? r.stdout : '<none>';
}

describe('analysis gate between batches', () => {
  it('a bad release fails the gate on the first cluster: rescue rolls it back, no other cluster is touched', async () => {
    exporters['sandbox-1']!.ratios.set('a', 0.5);
    await waitForQuery(prom.url, 'app_error_ratio{cluster="sandbox-1"}', (v) => v[0] === 0.5);
    const r = await kplay(['run', playbook, '-i', inventory, '--no-lock', '-e', 'version=v2'], { timeoutMs: 200_000 });
    const out = r.stdout + r.stderr;
    expect(r.code, out.slice(-3000)).not.toBe(0);
    expect(out).toContain('analysis failed after 2 measurement(s)');
    expect(out).toContain('gate failed on sandbox-1');
    expect(await version('sandbox-1')).toBe('rolled-back');
    expect(await version('sandbox-2')).toBe('<none>');
    expect(await version('sandbox-3')).toBe('<none>');
  });

  it('a good release passes the gate on every cluster', async () => {
    exporters['sandbox-1']!.ratios.set('a', 0.001);
    await waitForQuery(prom.url, 'app_error_ratio{cluster="sandbox-1"}', (v) => v[0] === 0.001);
    const r = await kplay(['run', playbook, '-i', inventory, '--no-lock', '-e', 'version=v3'], { timeoutMs: 200_000 });
    expect(r.code, (r.stdout + r.stderr).slice(-3000)).toBe(0);
    for (const c of CLUSTERS) expect(await version(c)).toBe('v3');
  });
});

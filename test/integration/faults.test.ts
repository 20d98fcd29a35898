// Faults injected in front of a real sandbox apiserver (test/faults/): the endpoint goes away for
// some seconds between two tasks, as during a control-plane restart. kplay rides out an outage up
// to its bound (reads and idempotent writes; a refused connection sent nothing) with a progress
// line, and past the bound exits 4 naming the cluster, the endpoint and how long it tried.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { kplay, type KplayResult } from '../helpers/cli.js';
import { startTcpProxy, type TcpProxy } from '../faults/tcp-proxy.js';
import { kubectl, sandboxEnv } from '../sandbox/env.js';

const CONTEXT = 'sandbox-3';
const suffix = Math.random().toString(16).slice(2, 8);
const ns = `faults-${suffix}`;
let tmp: string;
let proxy: TcpProxy;
let inventory: string;
let playbook: string;

beforeAll(async () => {
  const env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-faults-'));
  const kc = YAML.parse(readFileSync(env.kubeconfig, 'utf8')) as { contexts: { name: string; context: { cluster: string } }[]; clusters: { name: string; cluster: { server: string } }[] };
  const clusterName = kc.contexts.find((c) => c.name === CONTEXT)?.context.cluster;
  const cluster = kc.clusters.find((c) => c.name === clusterName);
  if (!cluster) throw new Error(`no cluster for context ${CONTEXT} in ${env.kubeconfig}`);
  const upstream = new URL(cluster.cluster.server);
  proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port) });
  cluster.cluster.server = `https://127.0.0.1:${proxy.port}`;
  const kubeconfig = path.join(tmp, 'kubeconfig');
  writeFileSync(kubeconfig, YAML.stringify(kc));
  inventory = path.join(tmp, 'inventory.yml');
  writeFileSync(inventory, YAML.stringify({ all: { clusters: { [CONTEXT]: { context: CONTEXT, kubeconfig } } } }));
  playbook = path.join(tmp, 'outage.yml');
  writeFileSync(playbook, [
    '- hosts: all',
    '  tasks:',
    '    - name: before',
    `      k8s_apply: { definition: [{ apiVersion: v1, kind: Namespace, metadata: { name: ${ns} } }, { apiVersion: v1, kind: ConfigMap, metadata: { name: "before-{{ tag }}", namespace: ${ns} }, data: { a: "1" } }] }`,
    // The test takes the endpoint down while this task runs, then creates the marker: the next
    // task starts only once the apiserver is unreachable, however slow or busy the machine is.
    '    - name: outage',
    `      command: { argv: [sh, -c, "while [ ! -e '${path.join(tmp, 'outage-{{ tag }}')}' ]; do sleep 0.1; done"] }`,
    '    - name: after',
    `      k8s_apply: { definition: { apiVersion: v1, kind: ConfigMap, metadata: { name: "after-{{ tag }}", namespace: ${ns} }, data: { a: "1" } } }`,
  ].join('\n'));
});

afterAll(async () => {
  await proxy?.close();
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  rmSync(tmp, { recursive: true, force: true });
});

/** Run the playbook; when the `outage` task starts, take the endpoint down for `downMs`. */
function runWithOutage(tag: string, downMs: number, env: Record<string, string> = {}): Promise<KplayResult> {
  return kplay(['run', playbook, '-i', inventory, '-e', `tag=${tag}`], {
    env,
    timeoutMs: 150_000,
    onSpawn: (child) => {
      let seen = '';
      let done = false;
      child.stdout?.on('data', (d: Buffer) => {
        seen += d.toString();
        if (!done && seen.includes('TASK [outage]')) {
          done = true;
          void proxy.down().then(() => {
            writeFileSync(path.join(tmp, `outage-${tag}`), '');
            setTimeout(() => void proxy.up(), downMs);
          });
        }
      });
    },
  });
}

describe('apiserver outage between two tasks (endpoint down, then back)', () => {
  it('a 30 s outage is ridden out: the next task waits for the apiserver and succeeds', async () => {
    const started = Date.now();
    const r = await runWithOutage('short', 30_000);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`cluster ${CONTEXT}: apiserver https://127\\.0\\.0\\.1:${proxy.port} unreachable .*retrying for \\d+ s more`));
    await kubectl(['-n', ns, 'get', 'configmap', 'after-short'], { context: CONTEXT });
    expect(Date.now() - started).toBeLessThan(60_000); // the run went on as soon as the apiserver was back
  });

  it('past the bound (KPLAY_OUTAGE_SECONDS=3, 12 s down) the cluster is unreachable: exit 4 naming cluster, endpoint and how long', async () => {
    const r = await runWithOutage('long', 12_000, { KPLAY_OUTAGE_SECONDS: '3' });
    expect(r.code, r.stdout + r.stderr).toBe(4);
    const m = new RegExp(`cluster ${CONTEXT} unreachable at https://127\\.0\\.0\\.1:${proxy.port}: .*ECONNREFUSED.*kept trying for (\\d+) s`).exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    // it gave up at its bound (plus the transport's own few seconds of retries), before the endpoint came back
    expect(Number(m?.[1])).toBeGreaterThanOrEqual(3);
    expect(Number(m?.[1])).toBeLessThan(12);
    await proxy.up().catch(() => undefined); // already back, or bring it back now
  });
});

// k8s_qps / k8s_burst hold for a run that takes the cluster's lock (issue 32 item 9): the lock is
// taken before the first change, and its client — made first — was made without the variables,
// so the run's requests went unthrottled. A rate limit gives a lower bound on the time the
// requests take, whatever the machine's speed: that is what is asserted (never an upper bound).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { jsonEvents, kplay } from '../helpers/cli.js';
import { kubectl, sandboxEnv } from '../sandbox/env.js';

const CONTEXT = 'sandbox-3';
const suffix = Math.random().toString(16).slice(2, 8);
const ns = `qps-${suffix}`;
let tmp: string;

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-qps-'));
});
afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  rmSync(tmp, { recursive: true, force: true });
});

describe('k8s_qps under the cluster lock', () => {
  it('throttles the requests of a run whose first task changes the cluster', async () => {
    const inventory = path.join(tmp, 'inventory.yml');
    writeFileSync(inventory, YAML.stringify({ all: { clusters: { [CONTEXT]: { context: CONTEXT, kubeconfig: sandboxEnv().kubeconfig } } } }));
    const objects = [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, ...Array.from({ length: 20 }, (_, i) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: ns }, data: { i: String(i) } }))];
    const pb = path.join(tmp, 'pb.yml');
    writeFileSync(pb, YAML.stringify([{ hosts: 'all', vars: { k8s_qps: 10, k8s_burst: 1 }, tasks: [{ name: 'apply', k8s_apply: { definition: objects } }] }]));
    const r = await kplay(['run', pb, '-i', inventory, '--record-dir', path.join(tmp, 'records'), '-o', 'json'], { timeoutMs: 180_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const result = jsonEvents(r.stdout).find((e) => e.type === 'task_result' && e.task === 'apply');
    // 21 objects: at least 21 writes (plus reads) at 10 per second after a burst of 1: ≥ 2 s
    expect(Number(result?.duration_ms)).toBeGreaterThanOrEqual(2000);
  });
});

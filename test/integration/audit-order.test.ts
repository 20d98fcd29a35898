// Runs that start in one order and take a cluster's lock in the other (issue 32 item 3): the run
// that started first waits (here: for a ConfigMap the test creates once the second run is done),
// so the second run writes its record first. Each record must link to the record written before
// it — the chain is the write order under the lock, not the run ids' order — and the trail must
// verify. Before the fix the late writer linked past the other run's record (a fork: REORDERED).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { readLocalRecords } from '../../src/audit/record.js';
import { kplay } from '../helpers/cli.js';
import { kubectl, sandboxEnv } from '../sandbox/env.js';

const CONTEXT = 'sandbox-2';
const suffix = Math.random().toString(16).slice(2, 8);
const ns = `audit-order-${suffix}`;
let tmp: string;
let inventory: string;

beforeAll(async () => {
  const env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-audit-order-'));
  inventory = path.join(tmp, 'inventory.yml');
  writeFileSync(inventory, YAML.stringify({ all: { clusters: { [CONTEXT]: { context: CONTEXT, kubeconfig: env.kubeconfig } } } }));
  await kubectl(['create', 'namespace', ns], { context: CONTEXT });
});

afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  rmSync(tmp, { recursive: true, force: true });
});

const cm = (name: string): unknown => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { by: name } });

interface StoredRecord {
  run: { run_id: string; playbook: string };
  prev: { run_id: string } | null;
}

describe('records of runs that take the lock in another order than they started', () => {
  it('link in the order they were written, and the trail verifies', async () => {
    const first = path.join(tmp, `first-${suffix}.yml`);
    writeFileSync(first, YAML.stringify([{ hosts: 'all', tasks: [
      // read-only: this run does not take the lock until the next task
      { name: 'wait for go', wait_for: { kind: 'ConfigMap', name: 'go', namespace: ns, timeout: 180 } },
      { name: 'change', k8s_apply: { definition: cm('first') } },
    ] }]));
    const second = path.join(tmp, `second-${suffix}.yml`);
    writeFileSync(second, YAML.stringify([{ hosts: 'all', tasks: [{ name: 'change', k8s_apply: { definition: cm('second') } }] }]));
    const env = { KPLAY_RECORD_DIR: path.join(tmp, 'records') };

    let started!: () => void;
    const waiting = new Promise<void>((r) => (started = r));
    const a = kplay(['run', first, '-i', inventory], {
      env,
      timeoutMs: 200_000,
      onSpawn: (child) => {
        let seen = '';
        child.stdout?.on('data', (d: Buffer) => {
          seen += d.toString();
          if (seen.includes('TASK [wait for go]')) started();
        });
      },
    });
    await waiting;
    const b = await kplay(['run', second, '-i', inventory], { env, timeoutMs: 120_000 });
    expect(b.code, b.stdout + b.stderr).toBe(0);
    await kubectl(['-n', ns, 'create', 'configmap', 'go'], { context: CONTEXT });
    const ra = await a;
    expect(ra.code, ra.stdout + ra.stderr).toBe(0);

    // local records: the first run's record links to the second's, and the chain verifies
    const local = await readLocalRecords(env.KPLAY_RECORD_DIR);
    const la = local.find((r) => String(r.run.playbook).endsWith(path.basename(first)));
    const lb = local.find((r) => String(r.run.playbook).endsWith(path.basename(second)));
    expect(la && lb && la.run_id < lb.run_id).toBe(true); // the first run started first
    expect(la?.chain?.[CONTEXT]?.run_id).toBe(lb?.run_id);
    const v = await kplay(['history', 'verify', '--record-dir', env.KPLAY_RECORD_DIR]);
    expect(v.code, v.stdout + v.stderr).toBe(0);

    // in-cluster records: the same links
    const list = JSON.parse((await kubectl(['-n', 'kplay-system', 'get', 'configmaps', '-l', 'kplay.dev/record=run', '-o', 'json'], { context: CONTEXT })).stdout) as { items: { data?: Record<string, string> }[] };
    const stored = list.items.flatMap((i) => (i.data?.['record.json'] ? [JSON.parse(i.data['record.json']) as StoredRecord] : []));
    const ca = stored.find((r) => r.run.playbook.endsWith(path.basename(first)));
    const cb = stored.find((r) => r.run.playbook.endsWith(path.basename(second)));
    expect(ca?.run.run_id).toBe(la?.run_id);
    expect(ca?.prev?.run_id).toBe(cb?.run.run_id);
    expect(cb?.prev?.run_id).not.toBe(ca?.run.run_id);
  });
});

describe('records of runs without the lock that end at the same moment', () => {
  it('form one chain: no two link to the same record, and the trail verifies', async () => {
    // Six --no-lock runs wait for one ConfigMap, then each changes the cluster and writes its
    // record: they end within milliseconds of each other. Before the chain's head (a
    // compare-and-swap), runs that listed the records at once linked to the same one (REORDERED).
    const n = 6;
    const runs: Promise<Awaited<ReturnType<typeof kplay>>>[] = [];
    const waiting: Promise<void>[] = [];
    for (let i = 0; i < n; i++) {
      const pb = path.join(tmp, `together-${i}-${suffix}.yml`);
      writeFileSync(pb, YAML.stringify([{ hosts: 'all', tasks: [
        { name: 'wait for go', wait_for: { kind: 'ConfigMap', name: 'go-together', namespace: ns, timeout: 300 } },
        { name: 'change', k8s_apply: { definition: cm(`together-${i}`) } },
      ] }]));
      let started!: () => void;
      waiting.push(new Promise<void>((r) => (started = r)));
      runs.push(kplay(['run', pb, '-i', inventory, '--no-lock', '-o', 'json'], {
        // each its own local records: this checks the in-cluster chain
        env: { KPLAY_RECORD_DIR: path.join(tmp, `together-${i}`) },
        timeoutMs: 320_000,
        onSpawn: (child) => {
          let seen = '';
          child.stdout?.on('data', (d: Buffer) => {
            seen += d.toString();
            if (seen.includes('"task":"wait for go"')) started();
          });
        },
      }));
    }
    await Promise.all(waiting);
    await kubectl(['-n', ns, 'create', 'configmap', 'go-together'], { context: CONTEXT });
    const done = await Promise.all(runs);
    const runIds = done.map((r) => {
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const start = r.stdout.split('\n').find((l) => l.includes('"type":"run_start"'));
      return String((JSON.parse(start ?? '{}') as { run_id?: string }).run_id);
    });
    const list = JSON.parse((await kubectl(['-n', 'kplay-system', 'get', 'configmaps', '-l', 'kplay.dev/record=run', '-o', 'json'], { context: CONTEXT })).stdout) as { items: { data?: Record<string, string> }[] };
    const stored = list.items.flatMap((i) => (i.data?.['record.json'] ? [JSON.parse(i.data['record.json']) as StoredRecord] : []));
    const ours = stored.filter((r) => runIds.includes(r.run.run_id));
    expect(ours).toHaveLength(n);
    // every record links to a different one (other test files' runs may sit between ours)
    const prevs = stored.map((r) => r.prev?.run_id).filter((p): p is string => p !== undefined);
    expect(new Set(prevs).size, JSON.stringify(ours.map((r) => [r.run.run_id, r.prev?.run_id]))).toBe(prevs.length);
    const v = await kplay(['history', 'verify', '-i', inventory, '--record-dir', path.join(tmp, 'none')]);
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });
});

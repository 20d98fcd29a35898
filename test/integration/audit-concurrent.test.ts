// Many runs at once on a cluster kplay never touched, sharing one --record-dir (issue 50 item 4):
// they take the cluster's lock in turn, and one is killed (-9) while it holds it. Exactly one
// record per completed run (none for the killed one), in the cluster and locally; both chains
// link in the order the runs held the lock; `kplay history verify` exits 0. Before the fix, four
// runs that took the lock in another order than they started forked the local chain (REORDERED).
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import YAML from 'yaml';
import { chainOrder } from '../../src/audit/chain.js';
import { localChainEntries, readLocalRecords } from '../../src/audit/record.js';
import { kplay, type KplayResult } from '../helpers/cli.js';
import { kubectl, sandboxEnv } from '../sandbox/env.js';

const CONTEXT = 'sandbox-2';
const suffix = Math.random().toString(16).slice(2, 8);
const ns = `audit-conc-${suffix}`;
let tmp: string;
let inventory: string;

beforeAll(async () => {
  const env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-audit-conc-'));
  inventory = path.join(tmp, 'inventory.yml');
  writeFileSync(inventory, YAML.stringify({ all: { clusters: { [CONTEXT]: { context: CONTEXT, kubeconfig: env.kubeconfig } } } }));
  await kubectl(['create', 'namespace', ns], { context: CONTEXT });
  // a cluster kplay never touched: no kplay-system (once no run holds its lock), gone for good
  await vi.waitFor(async () => {
    const lease = await kubectl(['-n', 'kplay-system', 'get', 'lease', 'kplay-lock', '-o', 'json'], { context: CONTEXT, check: false });
    if (lease.code !== 0) return;
    const spec = ((JSON.parse(lease.stdout) as { spec?: LeaseSpec }).spec ?? {});
    // held: a holder that renewed within the lease's duration (a killed run's lease expires)
    const renewed = Date.parse(spec.renewTime ?? '');
    if (spec.holderIdentity && renewed + (spec.leaseDurationSeconds ?? 60) * 1000 > Date.now()) throw new Error(`the cluster lock of ${CONTEXT} is held by ${spec.holderIdentity}`);
  }, { timeout: 240_000, interval: 1000 });
  await kubectl(['delete', 'namespace', 'kplay-system', '--ignore-not-found', '--wait=true', '--timeout=120s'], { context: CONTEXT });
  const gone = await kubectl(['get', 'namespace', 'kplay-system'], { context: CONTEXT, check: false });
  expect(gone.code).not.toBe(0);
}, 400_000);

afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  rmSync(tmp, { recursive: true, force: true });
});

const cm = (name: string): unknown => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { by: name } });

interface LeaseSpec {
  holderIdentity?: string;
  renewTime?: string;
  leaseDurationSeconds?: number;
}

interface StoredRecord {
  run: { run_id: string; playbook: string };
  prev: { run_id: string; sha256: string } | null;
}

interface Started {
  done: Promise<KplayResult>;
  runId: string;
  child: ChildProcess;
  /** What it printed so far. */
  output: () => string;
}

/** Start run `i` (waiting on ConfigMap `gate`; `hold`: then, holding the lock, on one never made) and wait until it waits. */
async function start(i: number, gate: string, recordDir: string, hold = false): Promise<Started> {
  const pb = path.join(tmp, `conc-${i}-${suffix}.yml`);
  writeFileSync(pb, YAML.stringify([{ hosts: 'all', tasks: [
    { name: 'wait for go', wait_for: { kind: 'ConfigMap', name: gate, namespace: ns, timeout: 300 } },
    { name: 'change', k8s_apply: { definition: cm(`conc-${i}`) } },
    ...(hold ? [{ name: 'hold', wait_for: { kind: 'ConfigMap', name: 'never', namespace: ns, timeout: 300 } }] : []),
  ] }]));
  let seen = '';
  let ready!: (v: { runId: string; child: ChildProcess }) => void;
  const waiting = new Promise<{ runId: string; child: ChildProcess }>((r) => (ready = r));
  const done = kplay(['run', pb, '-i', inventory, '-o', 'json'], {
    env: { KPLAY_RECORD_DIR: recordDir },
    timeoutMs: 360_000,
    onSpawn: (child) => {
      child.stdout?.on('data', (d: Buffer) => {
        seen += d.toString();
        if (seen.includes('"task":"wait for go"')) {
          const line = seen.split('\n').find((l) => l.includes('"type":"run_start"'));
          ready({ runId: String((JSON.parse(line ?? '{}') as { run_id?: string }).run_id), child });
        }
      });
    },
  });
  const { runId, child } = await waiting;
  return { done, runId, child, output: () => seen };
}

describe('runs at once on a never-touched cluster, one killed (-9) holding the lock', () => {
  it('leave one record per completed run, both chains in lock order, and the trail verifies', async () => {
    const recordDir = path.join(tmp, 'records');
    // started one after another (run ids in start order); the first four take the lock in
    // another order (4, 1, 3, 2), the rest all at once
    const ordered = [3, 0, 2, 1];
    const runs: Started[] = [];
    for (let i = 0; i < 4; i++) runs.push(await start(i, `go-${i}`, recordDir));
    for (let i = 4; i < 7; i++) runs.push(await start(i, 'go-rest', recordDir));
    const victim = await start(7, 'go-victim', recordDir, true);
    for (const i of ordered) {
      await kubectl(['-n', ns, 'create', 'configmap', `go-${i}`], { context: CONTEXT });
      const r = await runs[i]?.done;
      expect(r?.code, r ? r.stdout + r.stderr : 'no run').toBe(0);
    }
    // the victim takes the lock and holds it; the rest, released at once, wait for it; the victim
    // is killed (-9) and they take the lock over from it
    await kubectl(['-n', ns, 'create', 'configmap', 'go-victim'], { context: CONTEXT });
    await vi.waitFor(() => {
      if (!victim.output().includes('"task":"hold"')) throw new Error('the victim does not hold the lock yet');
    }, { timeout: 120_000, interval: 200 });
    await kubectl(['-n', ns, 'create', 'configmap', 'go-rest'], { context: CONTEXT });
    await vi.waitFor(() => {
      const idle = runs.slice(4).filter((r) => !r.output().includes(`waiting for the cluster lock held by run ${victim.runId}`));
      if (idle.length) throw new Error(`${idle.length} run(s) not yet waiting for the victim's lock`);
    }, { timeout: 120_000, interval: 200 });
    victim.child.kill('SIGKILL');
    expect((await victim.done).signal).toBe('SIGKILL');
    for (const run of runs.slice(4)) {
      const r = await run.done;
      expect(r.code, r.stdout + r.stderr).toBe(0);
    }
    const completed = runs.map((r) => r.runId);

    // exactly one local record per completed run, none for the killed one
    const local = await readLocalRecords(recordDir);
    expect(local.map((r) => r.run_id).sort()).toEqual([...completed].sort());
    expect(readdirSync(recordDir).filter((f) => f.endsWith('.jsonl'))).toHaveLength(completed.length);
    // exactly one in-cluster record per completed run (other test files' runs may add theirs)
    const list = JSON.parse((await kubectl(['-n', 'kplay-system', 'get', 'configmaps', '-l', 'kplay.dev/record=run', '-o', 'json'], { context: CONTEXT })).stdout) as { items: { data?: Record<string, string> }[] };
    const stored = list.items.flatMap((i) => (i.data?.['record.json'] ? [JSON.parse(i.data['record.json']) as StoredRecord] : []));
    const ours = stored.filter((r) => r.run.playbook.includes(suffix));
    expect(ours.map((r) => r.run.run_id).sort()).toEqual([...completed].sort());

    // both chains link in lock order: the same order, starting with the four released in turn
    const localOrder = chainOrder(localChainEntries(local, CONTEXT)).map((e) => e.run_id);
    const clusterOrder = chainOrder(stored.map((r) => ({ run_id: r.run.run_id, prev: r.prev }))).map((e) => e.run_id).filter((id) => completed.includes(id));
    expect(localOrder.slice(0, 4)).toEqual(ordered.map((i) => completed[i]));
    expect(clusterOrder).toEqual(localOrder);
    const links = local.map((r) => r.chain?.[CONTEXT]?.run_id ?? null);
    expect(new Set(links).size, JSON.stringify(links)).toBe(links.length); // no two link to one record

    const v = await kplay(['history', 'verify', '-i', inventory, '--record-dir', recordDir]);
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });
});

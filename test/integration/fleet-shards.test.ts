// A fleet window run as shards (issue #36), against the real sandbox: N local kplay processes with
// the environment an Indexed Job pod gets (JOB_COMPLETION_INDEX + KPLAY_SHARDS + KPLAY_FLEET_*),
// 24 inventory entries spread over the 3 sandbox apiservers, the coordination ConfigMap in
// sandbox-1. Ordering is made deterministic by the fleet's own barrier (a batch starts only when
// every shard finished the previous one) and by gates the test creates (wait_for on a ConfigMap),
// never by sleeps.
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay, type KplayResult } from '../helpers/cli.js';
import { kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';
import { shardOf } from '../../src/fleet/partition.js';

const tag = randomBytes(3).toString('hex');
const ns = `shard-${tag}`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-shard-'));
const CONTEXTS = ['sandbox-1', 'sandbox-2', 'sandbox-3'];
const N = 3;
const ENTRIES = Array.from({ length: 24 }, (_, i) => `s${String(i).padStart(2, '0')}`);
let env: SandboxEnv;

type Ev = { type: string; task?: string; cluster?: string; status?: string; msg?: string; reason?: string; run_id?: string };

/** Shard `i` as an Indexed Job pod runs it: the index and the fleet from the environment. */
function shard(i: number, fleetRun: string, args: string[], onSpawn?: (c: ChildProcess) => void): Promise<KplayResult> {
  const records = path.join(dir, `records-${fleetRun}-${i}`);
  mkdirSync(records, { recursive: true });
  return kplay(['run', ...args, '--no-lock', '-o', 'json'], {
    cwd: dir,
    timeoutMs: 240_000,
    env: {
      KPLAY_RECORD_DIR: records,
      JOB_COMPLETION_INDEX: String(i),
      KPLAY_SHARDS: String(N),
      KPLAY_FLEET_RUN: fleetRun,
      KPLAY_FLEET_NAMESPACE: ns,
      KPLAY_FLEET_CONTEXT: 'sandbox-1',
      KPLAY_FLEET_KUBECONFIG: env.kubeconfig,
    },
    ...(onSpawn ? { onSpawn } : {}),
  });
}

/** The fleet run's ConfigMap data. */
async function fleetData(fleetRun: string): Promise<Record<string, string>> {
  const r = await kubectl(['-n', ns, 'get', 'configmap', `kplay-fleet-${fleetRun}`, '-o', 'json'], { check: false });
  if (r.code !== 0) return {};
  return ((JSON.parse(r.stdout) as { data?: Record<string, string> }).data ?? {});
}

/** Poll the fleet object until `pred` holds (the test's condition, not a fixed sleep). */
async function until(fleetRun: string, pred: (d: Record<string, string>) => boolean): Promise<Record<string, string>> {
  for (let i = 0; i < 600; i++) {
    const d = await fleetData(fleetRun);
    if (pred(d)) return d;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`fleet ${fleetRun}: condition not reached`);
}

const resultsOf = (r: KplayResult, task: string): Ev[] => (jsonEvents(r.stdout) as Ev[]).filter((e) => e.type === 'task_result' && e.task === task);

beforeAll(async () => {
  env = sandboxEnv();
  for (const context of CONTEXTS) await kubectl(['create', 'namespace', ns], { context });
  const clusters = ENTRIES.map((n, i) => `        ${n}: { context: ${CONTEXTS[i % 3]}, kubeconfig: ${env.kubeconfig} }`).join('\n');
  writeFileSync(path.join(dir, 'inventory.yml'), `all:\n  children:\n    stores:\n      clusters:\n${clusters}\n`);
  writeFileSync(
    path.join(dir, 'budget.yml'),
    `- hosts: stores
  serial: 8
  max_fail_percentage: 25
  vars:
    broken: [s01, s02, s08, s09, s10]
  tasks:
    - name: upgrade
      fail: { msg: "upgrade failed on {{ inventory_hostname }}" }
      when: inventory_hostname in broken
    - name: after
      debug: { msg: "{{ inventory_hostname }} upgraded" }
`,
  );
  writeFileSync(
    path.join(dir, 'fatal.yml'),
    `- hosts: stores
  any_errors_fatal: true
  tasks:
    - name: upgrade
      fail: { msg: broken }
      when: inventory_hostname == 's05'
    - name: hold
      wait_for: { kind: ConfigMap, name: gate-fatal, namespace: ${ns}, timeout: 200 }
    - name: after
      debug: { msg: "{{ inventory_hostname }} after" }
`,
  );
});

afterAll(async () => {
  for (const context of CONTEXTS) await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found'], { context, check: false });
  rmSync(dir, { recursive: true, force: true });
});

describe('a fleet run in shards', () => {
  it('shares one max_fail_percentage budget per fleet batch: batch 2 over budget stops every shard before batch 3', async () => {
    const fleet = `budget-${tag}`;
    const runs = await Promise.all([0, 1, 2].map((i) => shard(i, fleet, ['budget.yml', '-i', 'inventory.yml'])));
    for (const r of runs) expect(r.code, r.stderr + r.stdout.slice(-1500)).toBe(2);
    // every shard ran only its own clusters, and together all of batches 1 and 2
    const ran = runs.map((r) => new Set(resultsOf(r, 'upgrade').map((e) => e.cluster)));
    ran.forEach((set, i) => expect([...set].every((c) => shardOf(String(c), N) === i)).toBe(true));
    expect(new Set(ran.flatMap((s) => [...s])).size).toBe(16);
    // batch 3 (s16..s23) started nowhere
    for (const r of runs) expect(resultsOf(r, 'upgrade').some((e) => Number(String(e.cluster).slice(1)) >= 16)).toBe(false);
    // batch 1 (2 of 8 failed: 25% is within budget) went on: its 6 good clusters ran `after`
    const after = runs.flatMap((r) => resultsOf(r, 'after').map((e) => String(e.cluster)));
    for (const c of ['s00', 's03', 's04', 's05', 's06', 's07']) expect(after).toContain(c);
    const data = await fleetData(fleet);
    expect(JSON.parse(data['p0.b1.failed'] ?? '[]')).toEqual(['s01', 's02']);
    expect(JSON.parse(data['p0.b2.failed'] ?? '[]')).toEqual(['s08', 's09', 's10']);
    expect(JSON.parse(data.stop ?? '{}')).toMatchObject({ play: 0, batch: 2 });
    expect(JSON.parse(data.stop ?? '{}').reason).toMatch(/max_fail_percentage 25% exceeded: 3 of 8/);
    for (const r of runs) expect((jsonEvents(r.stdout) as Ev[]).some((e) => e.type === 'play_aborted' && /max_fail_percentage 25% exceeded/.test(String(e.reason)))).toBe(true);

    // the merged view: every shard stopped, the failures per batch, a recap for the 16 clusters run
    const st = await kplay(['fleet', 'status', fleet, '--fleet-namespace', ns, '--fleet-context', 'sandbox-1', '--fleet-kubeconfig', env.kubeconfig, '-o', 'json'], { cwd: dir });
    expect(st.code, st.stderr).toBe(2);
    const status = JSON.parse(st.stdout) as { complete: boolean; shard_states: { state: string }[]; recap: Record<string, { failed: number }>; failed_total: number };
    expect(status.complete).toBe(true);
    expect(status.shard_states.map((s) => s.state)).toEqual(['stopped', 'stopped', 'stopped']);
    expect(Object.keys(status.recap).length).toBe(16);
    expect(status.failed_total).toBe(5);
    expect(Object.entries(status.recap).filter(([, r]) => r.failed > 0).map(([n]) => n).sort()).toEqual(['s01', 's02', 's08', 's09', 's10']);
  });

  it('any_errors_fatal on one cluster stops every shard, also the ones blocked mid-task', async () => {
    const fleet = `fatal-${tag}`;
    const all = Promise.all([0, 1, 2].map((i) => shard(i, fleet, ['fatal.yml', '-i', 'inventory.yml'])));
    // the stop is in the fleet object: only then may the other shards leave their `hold` task
    const d = await until(fleet, (x) => x.stop !== undefined);
    expect(JSON.parse(d.stop ?? '{}')).toMatchObject({ shard: shardOf('s05', N), play: 0, batch: 1 });
    for (const context of CONTEXTS) await kubectl(['-n', ns, 'create', 'configmap', 'gate-fatal'], { context });
    const runs = await all;
    for (const r of runs) expect(r.code, r.stderr + r.stdout.slice(-1500)).toBe(2);
    for (const r of runs) expect(resultsOf(r, 'after')).toEqual([]);
    expect(runs.flatMap((r) => resultsOf(r, 'upgrade')).filter((e) => e.status === 'failed').map((e) => e.cluster)).toEqual(['s05']);
    for (const r of runs) expect((jsonEvents(r.stdout) as Ev[]).some((e) => e.type === 'play_aborted' && /any_errors_fatal/.test(String(e.reason)))).toBe(true);
  });

  it('a shard killed mid-run resumes and finishes exactly its unfinished clusters; the other shards wait for it at the batch barrier', async () => {
    const fleet = `resume-${tag}`;
    const batches = [ENTRIES.slice(0, 8), ENTRIES.slice(8, 16), ENTRIES.slice(16)];
    // the gated cluster: the first of batch 2; its shard must own clusters in batches 1 and 3 too
    const gated = batches[1]?.[0] ?? '';
    const k = shardOf(gated, N);
    const own = batches.map((b) => b.filter((n) => shardOf(n, N) === k));
    expect(own[0]?.length).toBeGreaterThan(0);
    expect(own[2]?.length).toBeGreaterThan(0);
    writeFileSync(
      path.join(dir, 'rollout.yml'),
      `- hosts: stores
  serial: 8
  tasks:
    - name: work
      k8s_apply:
        definition: { apiVersion: v1, kind: ConfigMap, metadata: { name: "work-${tag}-{{ inventory_hostname }}", namespace: ${ns} }, data: { v: "1" } }
    - name: hold
      wait_for: { kind: ConfigMap, name: gate-resume, namespace: ${ns}, timeout: 200 }
      when: inventory_hostname == '${gated}'
`,
    );
    let victim: ChildProcess | undefined;
    let out = '';
    let blockedNow: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (blockedNow = resolve));
    const first = shard(k, fleet, ['rollout.yml', '-i', 'inventory.yml'], (c) => {
      victim = c;
      c.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        // in batch 2, the hold task has started on shard k (its `work` is journaled by then)
        if (/"batch":2[\s\S]*"type":"task_start"[^\n]*"task":"hold"/.test(out)) blockedNow();
      });
    });
    const others = [0, 1, 2].filter((i) => i !== k).map((i) => shard(i, fleet, ['rollout.yml', '-i', 'inventory.yml']));
    // wait until shard k is in batch 2's hold task and the other shards finished batch 2 (they wait at the barrier)
    await blocked;
    await until(fleet, (d) => JSON.parse(d['p0.b2.done'] ?? '[]').length === N - 1);
    // batch 2 still holds on shard k: the others must not have started batch 3
    expect(JSON.parse((await fleetData(fleet))['p0.b3.done'] ?? '[]')).toEqual([]);
    victim?.kill('SIGKILL');
    const killed = await first;
    expect(killed.signal).toBe('SIGKILL');
    const runId = /"run_id":"([^"]+)"/.exec(out)?.[1] ?? '';
    expect(runId).not.toBe('');
    await kubectl(['-n', ns, 'create', 'configmap', 'gate-resume'], { context: CONTEXTS[ENTRIES.indexOf(gated) % 3] ?? 'sandbox-1' });

    // resume shard k: same pod environment, --resume with its run id
    const resumed = await shard(k, fleet, ['--resume', runId]);
    expect(resumed.code, resumed.stderr + resumed.stdout.slice(-2000)).toBe(0);
    const ev = jsonEvents(resumed.stdout) as Ev[];
    // batch 1's clusters finished the play in the killed run: not run again
    const notAgain = ev.find((e) => e.type === 'warning' && /finished it in the interrupted run/.test(String(e.msg)));
    expect(notAgain?.msg).toContain((own[0] ?? []).join(', '));
    const work = resultsOf(resumed, 'work');
    // batch 2's `work` was done: restored, not run again; batch 3's ran now; nothing else
    expect(work.filter((e) => e.status !== 'skipped').map((e) => e.cluster).sort()).toEqual([...(own[2] ?? [])].sort());
    expect(work.filter((e) => e.status === 'skipped').map((e) => e.cluster).sort()).toEqual([...(own[1] ?? [])].sort());
    expect(resultsOf(resumed, 'hold').filter((e) => e.status === 'ok').map((e) => e.cluster)).toEqual([gated]);

    const rest = await Promise.all(others);
    for (const r of rest) expect(r.code, r.stderr + r.stdout.slice(-1500)).toBe(0);
    // every entry's object exists: the whole window was carried out
    for (const [i, n] of ENTRIES.entries()) {
      const got = await kubectl(['-n', ns, 'get', 'configmap', `work-${tag}-${n}`, '-o', 'name'], { context: CONTEXTS[i % 3] ?? 'sandbox-1', check: false });
      expect(got.stdout.trim(), n).toBe(`configmap/work-${tag}-${n}`);
    }
    const st = await kplay(['fleet', 'status', fleet, '--fleet-namespace', ns, '--fleet-context', 'sandbox-1', '--fleet-kubeconfig', env.kubeconfig, '-o', 'json'], { cwd: dir });
    expect(st.code, st.stdout + st.stderr).toBe(0);
    const status = JSON.parse(st.stdout) as { complete: boolean; shard_states: { shard: number; state: string; resumed_from?: string }[]; recap: Record<string, unknown> };
    expect(status.complete).toBe(true);
    expect(status.shard_states.every((s) => s.state === 'finished')).toBe(true);
    expect(status.shard_states.find((s) => s.shard === k)?.resumed_from).toBe(runId);
    expect(Object.keys(status.recap).sort()).toEqual([...ENTRIES].sort());

    // the shards' run records, read back from the clusters, list as one window (`history --fleet-run`):
    // each cluster under the shard that owns it; the killed run wrote no record, the resumed run's
    // record holds the clusters it changed (batch 3's of shard k)
    const hist = await kplay(['history', '-i', 'inventory.yml', '--fleet-run', fleet, '-o', 'json'], { cwd: dir });
    expect(hist.code, hist.stderr).toBe(0);
    const rows = JSON.parse(hist.stdout) as { cluster: string; run_id: string; fleet_run?: string; shard?: number }[];
    const resumedId = /"run_id":"([^"]+)"/.exec(resumed.stdout)?.[1] ?? '';
    expect(resumedId).not.toBe(runId);
    for (const r of rows) {
      expect(r.fleet_run, r.cluster).toBe(fleet);
      expect(r.shard, r.cluster).toBe(shardOf(r.cluster, N));
    }
    const listed = new Set(rows.map((r) => r.cluster));
    for (const n of ENTRIES.filter((e) => shardOf(e, N) !== k)) expect(listed.has(n), n).toBe(true);
    for (const n of own[2] ?? []) expect(rows.filter((r) => r.cluster === n).map((r) => r.run_id), n).toContain(resumedId);
    expect(rows.some((r) => r.run_id === runId)).toBe(false);
    // another fleet run's shards are not listed
    const none = await kplay(['history', '-i', 'inventory.yml', '--fleet-run', `other-${tag}`, '-o', 'json'], { cwd: dir });
    expect(JSON.parse(none.stdout)).toEqual([]);
  });
});

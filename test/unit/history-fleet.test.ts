// `kplay history --fleet-run ID`: the shards' runs of one fleet run, listed together with their
// shard, and a summary of the clusters by their latest run (a resumed shard counts by its resume).
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunRecorder } from '../../src/audit/record.js';
import { historyCommand } from '../../src/cli/history.js';
import { emptyStats } from '../../src/report/events.js';

async function record(dir: string, runId: string, fleet: { run: string; shard: number } | undefined, clusters: Record<string, { changed?: number; failed?: number }>): Promise<void> {
  const rec = new RunRecorder({ run_id: runId, user: 'ops', host: 'h', started: new Date().toISOString(), playbook: 'window.yml', inventory: 'stores', tags: [], skip_tags: [], extra_var_names: [], check: false, lock: true, ...(fleet ? { fleet: { ...fleet, shards: 2 } } : {}) });
  for (const c of Object.keys(clusters)) rec.onEvent({ type: 'task_result', task: 'work', module: 'k8s_apply', cluster: c, status: clusters[c]?.failed ? 'failed' : 'ok', duration_ms: 1 });
  rec.onEvent({ type: 'recap', clusters: Object.fromEntries(Object.entries(clusters).map(([c, s]) => [c, { ...emptyStats(), ok: 1, ...s }])), elapsed_ms: 5, exit_code: Object.values(clusters).some((s) => s.failed) ? 2 : 0, interrupted: false });
  await rec.writeLocal(dir);
}

describe('kplay history --fleet-run', () => {
  afterEach(() => vi.restoreAllMocks());

  it('lists the shards of one fleet run with their shard, and the clusters by their latest run', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'kplay-hist-fleet-'));
    await record(dir, '20261127T100000000-aaaaaa', { run: 'window-42', shard: 0 }, { s1: { changed: 1 }, s3: { failed: 1 } });
    await record(dir, '20261127T100000100-bbbbbb', { run: 'window-42', shard: 1 }, { s2: {} });
    // shard 0 resumed: s3 finished in the resume
    await record(dir, '20261127T100500000-cccccc', { run: 'window-42', shard: 0 }, { s3: { changed: 1 } });
    await record(dir, '20261127T100600000-dddddd', { run: 'window-43', shard: 0 }, { s1: {} });
    await record(dir, '20261127T100700000-eeeeee', undefined, { s2: {} });

    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    expect(await historyCommand(undefined, undefined, { recordDir: dir, output: 'json', fleetRun: 'window-42' })).toBe(0);
    const rows = JSON.parse(out.join('')) as { run_id: string; cluster: string; fleet_run: string; shard: number }[];
    expect(rows.map((r) => [r.run_id.slice(-6), r.cluster, r.shard]).sort()).toEqual([['aaaaaa', 's1', 0], ['aaaaaa', 's3', 0], ['bbbbbb', 's2', 1], ['cccccc', 's3', 0]]);
    expect(new Set(rows.map((r) => r.fleet_run))).toEqual(new Set(['window-42']));

    out.length = 0;
    expect(await historyCommand(undefined, undefined, { recordDir: dir, output: 'text', fleetRun: 'window-42' })).toBe(0);
    const text = out.join('');
    expect(text).toMatch(/RUN ID\s+FLEET RUN\s+SHARD\s+CLUSTER/);
    // s3 counts by the resume (changed), not by the failed first run
    expect(text).toContain('3 cluster(s) by their latest run: 0 failed, 2 changed, 1 unchanged');

    out.length = 0;
    expect(await historyCommand(undefined, undefined, { recordDir: dir, output: 'text' })).toBe(0);
    expect(out.join('')).toContain('FLEET RUN'); // runs of shards show their fleet run in the plain listing too
  });
});

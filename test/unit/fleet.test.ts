import { describe, expect, it } from 'vitest';
import { shardClusters, shardOf } from '../../src/fleet/partition.js';
import { batchVerdict, budgetLeft, doneIn, failedIn, markDone, markStop, reportFailures, stopOf, stopsBatch } from '../../src/fleet/budget.js';
import { parseShard, resumeShard, shardSpec } from '../../src/fleet/spec.js';
import { fleetStatus } from '../../src/fleet/status.js';
import { InputError } from '../../src/load/errors.js';

const names = (n: number, prefix = 'c'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('shard partition', () => {
  it('puts every cluster in exactly one shard, spread evenly enough', () => {
    const all = names(1000);
    const parts = [0, 1, 2, 3].map((i) => shardClusters(all, i, 4));
    expect(parts.flat().sort()).toEqual([...all].sort());
    for (const p of parts) expect(p.length).toBeGreaterThan(180);
  });

  it('is stable: adding a cluster moves no other cluster', () => {
    const all = names(200);
    const before = new Map(all.map((n) => [n, shardOf(n, 7)]));
    const after = [...all, 'new-store-0042'];
    for (const n of all) expect(shardOf(n, 7)).toBe(before.get(n));
    expect(shardClusters(after, shardOf('new-store-0042', 7), 7)).toContain('new-store-0042');
  });

  it('moves only the clusters the new shard takes when N grows', () => {
    const all = names(1000);
    const moved = all.filter((n) => shardOf(n, 10) !== shardOf(n, 11));
    expect(moved.every((n) => shardOf(n, 11) === 10)).toBe(true);
    expect(moved.length).toBeLessThan(150);
  });

  it('keeps the given order within a shard', () => {
    const all = names(50);
    const mine = shardClusters(all, 1, 3);
    expect(mine).toEqual(all.filter((n) => mine.includes(n)));
  });
});

describe('fleet budget arithmetic', () => {
  it('applies max_fail_percentage to the fleet batch (more than the percentage stops)', () => {
    const rule = { batchSize: 10, anyErrorsFatal: false, maxFailPercentage: 20 };
    expect(batchVerdict(0, rule)).toBeUndefined();
    expect(batchVerdict(2, rule)).toBeUndefined();
    expect(batchVerdict(3, rule)).toMatch(/max_fail_percentage 20% exceeded: 3 of 10/);
    expect(budgetLeft(0, rule)).toBe(2);
    expect(budgetLeft(2, rule)).toBe(0);
  });

  it('stops on the first failure with any_errors_fatal, and when the whole batch failed', () => {
    expect(batchVerdict(1, { batchSize: 30, anyErrorsFatal: true })).toMatch(/any_errors_fatal/);
    expect(budgetLeft(0, { batchSize: 30, anyErrorsFatal: true })).toBe(0);
    expect(batchVerdict(5, { batchSize: 5, anyErrorsFatal: false })).toMatch(/every cluster/);
    expect(batchVerdict(4, { batchSize: 5, anyErrorsFatal: false })).toBeUndefined();
    expect(budgetLeft(0, { batchSize: 5, anyErrorsFatal: false })).toBe(4);
  });

  it('counts each failed cluster once across shards and reports (a set), and stops once', () => {
    const rule = { batchSize: 10, anyErrorsFatal: false, maxFailPercentage: 20 };
    let d: Record<string, string> = { shards: '3' };
    d = reportFailures(d, 0, 0, 1, ['a', 'b'], rule) ?? d;
    expect(failedIn(d, 0, 1)).toEqual(['a', 'b']);
    expect(reportFailures(d, 0, 0, 1, ['b', 'a'], rule)).toBeUndefined();
    expect(stopOf(d)).toBeUndefined();
    const e = reportFailures(d, 2, 0, 1, ['c'], rule);
    expect(e).toBeDefined();
    expect(failedIn(e ?? {}, 0, 1)).toEqual(['a', 'b', 'c']);
    expect(stopOf(e ?? {})).toMatchObject({ shard: 2, play: 0, batch: 1 });
    // another shard's later failure keeps the first stop
    const f = reportFailures(e ?? {}, 1, 0, 1, ['d'], rule) ?? {};
    expect(stopOf(f)?.shard).toBe(2);
    expect(markStop(f, { reason: 'x', shard: 1, play: 0, batch: 2 })).toBeUndefined();
    // another batch has its own budget
    expect(stopOf(reportFailures({}, 0, 0, 2, ['a', 'b'], rule) ?? {})).toBeUndefined();
  });

  it('a stop keeps shards from starting later batches, not the batch it happened in', () => {
    const stop = { reason: 'x', shard: 1, play: 0, batch: 2 };
    expect(stopsBatch(undefined, 0, 3)).toBe(false);
    expect(stopsBatch(stop, 0, 2)).toBe(false);
    expect(stopsBatch(stop, 0, 3)).toBe(true);
    expect(stopsBatch(stop, 1, 1)).toBe(true);
  });

  it('marks batches done per shard once', () => {
    let d: Record<string, string> = {};
    d = markDone(d, 2, 0, 1) ?? d;
    d = markDone(d, 0, 0, 1) ?? d;
    expect(markDone(d, 2, 0, 1)).toBeUndefined();
    expect(doneIn(d, 0, 1)).toEqual([0, 2]);
    expect(doneIn(d, 0, 2)).toEqual([]);
  });
});

describe('shard spec', () => {
  const noPod = '/nonexistent/namespace';
  it('reads --shard, KPLAY_SHARD, and JOB_COMPLETION_INDEX with --shards / KPLAY_SHARDS', () => {
    expect(parseShard('2/5')).toEqual({ index: 2, shards: 5 });
    expect(shardSpec({ shard: '1/3', fleetRun: 'w1' }, {}, noPod)).toMatchObject({ index: 1, shards: 3, fleetRun: 'w1', namespace: 'kplay-system', context: '' });
    expect(shardSpec({}, { KPLAY_SHARD: '0/2' }, noPod)).toMatchObject({ index: 0, shards: 2 });
    expect(shardSpec({ shards: '4' }, { JOB_COMPLETION_INDEX: '3', KPLAY_FLEET_RUN: 'win', KPLAY_FLEET_NAMESPACE: 'ops' }, noPod)).toMatchObject({ index: 3, shards: 4, fleetRun: 'win', namespace: 'ops' });
    expect(shardSpec({}, { JOB_COMPLETION_INDEX: '3', KPLAY_SHARDS: '4' }, noPod)).toMatchObject({ index: 3, shards: 4 });
    expect(shardSpec({}, { JOB_COMPLETION_INDEX: '3' }, noPod)).toBeUndefined();
    expect(shardSpec({ shard: '1/3' }, { KPLAY_SHARD: '0/2' }, noPod)).toMatchObject({ index: 1, shards: 3 });
  });

  it('refuses bad values with a hint', () => {
    for (const bad of ['3/3', '1', 'a/2', '-1/2', '0/0', '1/2/3']) expect(() => parseShard(bad)).toThrow(InputError);
    expect(() => shardSpec({ shards: '4' }, {}, noPod)).toThrow(/JOB_COMPLETION_INDEX is not set/);
    expect(() => shardSpec({ shard: '0/2', fleetRun: 'Bad_ID' }, {}, noPod)).toThrow(/not valid/);
    expect(() => shardSpec({ shard: '0/2', shards: '3' }, {}, noPod)).toThrow(/disagree/);
    expect(() => shardSpec({ fleetRun: 'w' }, {}, noPod)).toThrow(/needs a shard/);
  });

  it('resumes as the shard the journal recorded, refusing another', () => {
    const rec = { index: 1, shards: 3, fleet_run: 'w1', namespace: 'ops', context: 'mgmt' };
    expect(resumeShard(rec, 'r1', {}, {})).toEqual({ index: 1, shards: 3, fleetRun: 'w1', namespace: 'ops', context: 'mgmt' });
    expect(() => resumeShard(rec, 'r1', { shard: '2/3', fleetRun: 'w1' }, {})).toThrow(/was shard 1\/3/);
    expect(() => resumeShard(undefined, 'r1', { shard: '0/3' }, {})).toThrow(/was not a shard/);
    expect(resumeShard(undefined, 'r1', {}, {})).toBeUndefined();
  });
});

describe('fleet status', () => {
  it('merges shard reports, failures and the stop', () => {
    const recap = (failed: number) => ({ ok: 2, changed: 1, failed, skipped: 0, unreachable: 0, rescued: 0, ignored: 0 });
    const data = {
      shards: '3',
      'p0.b1.failed': '["b"]',
      stop: JSON.stringify({ reason: 'any_errors_fatal: a cluster failed', shard: 1, play: 0, batch: 1 }),
      'shard.0': JSON.stringify({ shard: 0, shards: 3, run_id: 'r0', state: 'stopped', started: 't', clusters: ['a'], recap: { a: recap(0) } }),
      'shard.1': JSON.stringify({ shard: 1, shards: 3, run_id: 'r1', state: 'failed', started: 't', clusters: ['b'], recap: { b: recap(1) } }),
    };
    const s = fleetStatus('w1', data);
    expect(s.complete).toBe(false);
    expect(s.shard_states.map((x) => x.state)).toEqual(['stopped', 'failed', 'missing']);
    expect(s.recap).toMatchObject({ a: { shard: 0, failed: 0 }, b: { shard: 1, failed: 1 } });
    expect(s.failures).toEqual([{ play: 0, batch: 1, clusters: ['b'] }]);
    expect(s.failed_total).toBe(1);
    expect(s.stop?.shard).toBe(1);
  });
});

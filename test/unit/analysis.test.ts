import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import analysis, { judge, kubeSignals, p95, promReading, runAnalysis, type AnalysisDeps, type AnalysisPlan, type Reading } from '../../modules/analysis.js';
import { compileSchema } from '../../src/load/schema.js';
import { makeCtx, runModule } from '../helpers/ctx.js';
import { startHttp } from '../helpers/http.js';

const ctx = makeCtx();
const condition: AnalysisDeps['condition'] = (expr, value) => ctx.evalCondition(expr, { result: value });

/** Deps that hand out the given readings in order and never really sleep. */
function deps(readings: Reading[]): AnalysisDeps & { waits: number[] } {
  const waits: number[] = [];
  let i = 0;
  return {
    waits,
    read: () => Promise.resolve(readings[i++] ?? { kind: 'inconclusive', reason: 'test ran out of readings' }),
    condition,
    wait: (ms) => {
      waits.push(ms);
      return Promise.resolve(true);
    },
    now: () => new Date('2026-01-01T00:00:00Z'),
  };
}

const plan = (over: Partial<AnalysisPlan> = {}): AnalysisPlan => ({
  metrics: [{ name: 'errors', success_condition: 'result < 0.01' }],
  intervalMs: 1000,
  count: 3,
  failureLimit: 0,
  inconclusiveLimit: 0,
  ...over,
});
const v = (value: unknown): Reading => ({ kind: 'value', value });

describe('analysis conditions (kplay expression engine)', () => {
  it('one series is a number, several a list (use a filter), NaN fails, no data is inconclusive', async () => {
    expect((await judge(v(0.001), 'result < 0.01', undefined, condition)).verdict).toBe('successful');
    expect((await judge(v(0.5), 'result < 0.01', undefined, condition)).verdict).toBe('failed');
    expect((await judge(v([0.001, 0.002]), 'result | max < 0.01', undefined, condition)).verdict).toBe('successful');
    expect((await judge(v([0.001, 0.2]), 'result | max < 0.01', undefined, condition)).verdict).toBe('failed');
    expect((await judge(v(Number.NaN), 'result < 0.01', undefined, condition)).verdict).toBe('failed');
    expect((await judge({ kind: 'inconclusive', reason: 'no data' }, 'result < 0.01', undefined, condition)).verdict).toBe('inconclusive');
  });
  it('failure_condition: failed when it holds, inconclusive when neither holds', async () => {
    expect((await judge(v(0.5), 'result < 0.01', 'result > 0.1', condition)).verdict).toBe('failed');
    expect((await judge(v(0.05), 'result < 0.01', 'result > 0.1', condition)).verdict).toBe('inconclusive');
    expect((await judge(v(0.001), 'result < 0.01', 'result > 0.1', condition)).verdict).toBe('successful');
  });
  it('an expression error is inconclusive, with the reason', async () => {
    const j = await judge(v(1), 'result <', undefined, condition);
    expect(j.verdict).toBe('inconclusive');
    expect(j.reason).toMatch(/could not be evaluated/);
  });
});

describe('promReading', () => {
  it('maps Prometheus answers', () => {
    expect(promReading({ status: 'success', data: { resultType: 'vector', result: [] } })).toEqual({ kind: 'inconclusive', reason: 'no data: the query returned no series' });
    expect(promReading({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [1, '0.25'] }] } })).toEqual(v(0.25));
    expect(promReading({ status: 'success', data: { resultType: 'vector', result: [{ value: [1, '1'] }, { value: [1, '2'] }] } })).toEqual(v([1, 2]));
    expect(promReading({ status: 'success', data: { resultType: 'scalar', result: [1, 'NaN'] } })).toEqual(v(Number.NaN));
    expect(promReading({ status: 'error', error: 'parse error' }).kind).toBe('inconclusive');
    expect(promReading({ status: 'success', data: { resultType: 'matrix', result: [] } }).kind).toBe('inconclusive');
  });
});

describe('runAnalysis verdicts', () => {
  it('successful after count measurements, waiting interval between them', async () => {
    const d = deps([v(0), v(0), v(0)]);
    const r = await runAnalysis(plan(), d);
    expect(r.verdict).toBe('successful');
    expect(r.measurements.map((m) => m.verdict)).toEqual(['successful', 'successful', 'successful']);
    expect(d.waits).toEqual([1000, 1000]);
    expect(r.measurements[0]).toEqual({ at: '2026-01-01T00:00:00.000Z', metric: 'errors', value: 0, verdict: 'successful' });
  });
  it('failed after failure_limit + 1 failed measurements, stopping at once', async () => {
    const r = await runAnalysis(plan({ count: 10, failureLimit: 2 }), deps([v(1), v(0), v(1), v(1), v(0)]));
    expect(r.verdict).toBe('failed');
    expect(r.measurements).toHaveLength(4);
  });
  it('failures within failure_limit still pass', async () => {
    const r = await runAnalysis(plan({ count: 3, failureLimit: 1 }), deps([v(1), v(0), v(0)]));
    expect(r.verdict).toBe('successful');
  });
  it('inconclusive after inconclusive_limit + 1 no-data measurements, never successful', async () => {
    const none: Reading = { kind: 'inconclusive', reason: 'no data' };
    const r = await runAnalysis(plan({ count: 5, inconclusiveLimit: 1 }), deps([none, v(0), none]));
    expect(r.verdict).toBe('inconclusive');
    expect(r.measurements).toHaveLength(3);
    expect(r.measurements[2]).toMatchObject({ value: null, verdict: 'inconclusive', reason: 'no data' });
  });
  it('limits count per metric', async () => {
    const p = plan({ count: 2, failureLimit: 1, metrics: [{ name: 'a', success_condition: 'result < 1' }, { name: 'b', success_condition: 'result < 1' }] });
    // a fails once, b fails once: each within its own limit.
    expect((await runAnalysis(p, deps([v(5), v(0), v(0), v(5)]))).verdict).toBe('successful');
    expect((await runAnalysis(p, deps([v(5), v(0), v(5), v(0)]))).verdict).toBe('failed');
  });
  it('an aborted wait is inconclusive', async () => {
    const d = deps([v(0), v(0)]);
    d.wait = () => Promise.resolve(false);
    expect((await runAnalysis(plan(), d)).verdict).toBe('inconclusive');
  });
  it('p95 is the nearest-rank percentile', () => {
    expect(p95([5, 1, 3, 2, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100])).toBe(19);
    expect(p95([7])).toBe(7);
  });
});

describe('analysis module', () => {
  it('schema compiles and every example is valid', () => {
    const val = compileSchema(analysis.schema);
    for (const ex of analysis.examples) {
      const [task] = parseYaml(ex.yaml) as Record<string, unknown>[];
      expect(val(task?.analysis), `${ex.title}: ${JSON.stringify(val.errors)}`).toBe(true);
    }
    expect(val({ metrics: [{ name: 'x', success_condition: 'true', nope: 1 }] })).toBe(false);
  });
  it('Prometheus down is inconclusive and fails the task; check mode does not fail; on_inconclusive: pass passes', async () => {
    const srv = await startHttp((_req, res) => res.end());
    const address = srv.url.replace(/\/$/, '');
    await srv.close();
    const args = { interval: 0.01, count: 2, metrics: [{ name: 'err', prometheus: { address, query: 'up', token: 's3cr3t-token' }, success_condition: 'result < 1' }] };
    const c = makeCtx();
    const r = await runModule(analysis, args, c);
    expect(r.status).toBe('failed');
    expect(r.msg).toMatch(/inconclusive/);
    expect(JSON.stringify(r)).not.toContain('s3cr3t-token');
    expect(((r as { data: { verdict: string } }).data).verdict).toBe('inconclusive');
    expect((await runModule(analysis, args, makeCtx({ checkMode: true }))).status).toBe('ok');
    expect((await runModule(analysis, { ...args, on_inconclusive: 'pass' }, makeCtx())).status).toBe('ok');
  });
  it('a fake Prometheus answer drives the verdict; the query is sent templated as given', async () => {
    const queries: string[] = [];
    let rate = '0.001';
    const srv = await startHttp((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      queries.push(`${u.pathname} ${u.searchParams.get('query') ?? ''} ${req.headers.authorization ?? ''}`);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [0, rate] }] } }));
    });
    try {
      const args = { interval: 0.01, count: 2, metrics: [{ name: 'err', prometheus: { address: srv.url, query: 'rate(x[1m])', token: 'tok' }, success_condition: 'result < 0.01' }] };
      const ok = await runModule(analysis, args, makeCtx());
      expect(ok.status).toBe('ok');
      expect(queries[0]).toBe('/api/v1/query rate(x[1m]) Bearer tok');
      rate = '0.5';
      const bad = await runModule(analysis, args, makeCtx());
      expect(bad.status).toBe('failed');
      expect(((bad as { data: { measurements: unknown[] } }).data).measurements).toHaveLength(1);
    } finally {
      await srv.close();
    }
  });
  it('a metric needs exactly one provider', async () => {
    const r = await runModule(analysis, { metrics: [{ name: 'x', success_condition: 'true' }] }, makeCtx());
    expect(r.status).toBe('failed');
    expect(r.msg).toMatch(/exactly one provider/);
  });
});

describe('analysis input errors', () => {
  it('a provider address that is not an http(s) URL fails with a hint', async () => {
    const r = await runModule(analysis, { metrics: [{ name: 'x', prometheus: { address: '', query: 'up' }, success_condition: 'true' }] }, makeCtx());
    expect(r.status).toBe('failed');
    expect(r.msg).toMatch(/not an http:\/\/ or https:\/\/ URL.*inventory variable/);
  });
});

describe('kubeSignals', () => {
  const since = new Date('2026-01-01T10:00:00.500Z');
  const pod = (name: string, restarts: number, opts: { ready?: boolean; waiting?: string } = {}) => ({
    metadata: { name, uid: `uid-${name}`, ownerReferences: [{ kind: 'ReplicaSet', name: 'web-abc' }] },
    status: {
      conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }],
      containerStatuses: [{ name: 'app', restartCount: restarts, state: opts.waiting ? { waiting: { reason: opts.waiting } } : {} }],
    },
  });
  it('counts restarts since the first sight, crash loops, readiness and recent Warning events of the pods or owners', () => {
    const baseline = new Map<string, number>();
    expect(kubeSignals([pod('a', 3), pod('b', 0)], [], baseline, since)).toEqual({ pods: 2, ready: 2, restarts: 0, crash_looping: 0, warning_events: 0 });
    const events = [
      { type: 'Warning', involvedObject: { kind: 'Pod', name: 'a' }, lastTimestamp: '2026-01-01T10:00:00Z' }, // same second as the start: counted
      { type: 'Warning', involvedObject: { kind: 'ReplicaSet', name: 'web-abc' }, eventTime: '2026-01-01T10:05:00.000000Z', lastTimestamp: null },
      { type: 'Warning', involvedObject: { kind: 'Pod', name: 'a' }, lastTimestamp: '2026-01-01T09:59:59Z' }, // before: not counted
      { type: 'Warning', involvedObject: { kind: 'Pod', name: 'other' }, lastTimestamp: '2026-01-01T10:01:00Z' }, // another object
      { type: 'Normal', involvedObject: { kind: 'Pod', name: 'a' }, lastTimestamp: '2026-01-01T10:01:00Z' },
    ];
    expect(kubeSignals([pod('a', 5, { waiting: 'CrashLoopBackOff', ready: false }), pod('b', 0), pod('c', 1)], events, baseline, since)).toEqual({
      pods: 3,
      ready: 2,
      restarts: 2, // a: 3 → 5; c is first seen now
      crash_looping: 1,
      warning_events: 2,
    });
  });
  it('tolerates pods without status', () => {
    expect(kubeSignals([{ metadata: { name: 'x' } }, {}], [{}], new Map(), since)).toEqual({ pods: 2, ready: 0, restarts: 0, crash_looping: 0, warning_events: 0 });
  });
});

describe('analysis http metric against a real HTTP server', () => {
  it('measures the success rate and p95 latency of N requests', async () => {
    let n = 0;
    const srv = await startHttp((_req, res) => {
      n++;
      res.statusCode = n % 4 === 0 ? 503 : 200; // every 4th request fails: 75 %
      res.end('x');
    });
    try {
      const args = { interval: 0.01, count: 1, metrics: [{ name: 'traffic', http: { url: srv.url, requests: 8 }, success_condition: 'result.success_rate >= 99' }] };
      const r = await runModule(analysis, args, makeCtx());
      expect(r.status).toBe('failed');
      const m = (r as { data: { measurements: { value: { success_rate: number; requests: number; p95_ms: number } }[] } }).data.measurements[0]!;
      expect(m.value.success_rate).toBe(75);
      expect(m.value.requests).toBe(8);
      expect(m.value.p95_ms).toBeGreaterThanOrEqual(0);
      const ok = await runModule(analysis, { ...args, metrics: [{ ...args.metrics[0]!, success_condition: 'result.success_rate >= 75 and result.p95_ms <= 5000' }] }, makeCtx());
      expect(ok.status).toBe('ok');
    } finally {
      await srv.close();
    }
  });
});

import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import analysis from '../../modules/analysis.js';
import { judge, jsonSafe, kubeSignals, kubeState, p95, labelKey, promDurationMs, promNumber, promReading, runAnalysis, scrapeTargets, storedScrapes, type AnalysisDeps, type AnalysisPlan, type Reading } from '../../src/analysis/index.js';
import { compileSchema } from '../../src/load/schema.js';
import { makeCtx, runModule } from '../helpers/ctx.js';
import { startHttp } from '../helpers/http.js';

const ctx = makeCtx();
const condition: AnalysisDeps['condition'] = (expr, value) => ctx.evalCondition(expr, { result: value });

/** Deps that hand out the given readings in order and never really sleep; the clock moves `step` ms per reading. */
function deps(readings: Reading[], step = 0): AnalysisDeps & { waits: number[] } {
  const waits: number[] = [];
  let i = 0;
  let t = Date.parse('2026-01-01T00:00:00Z');
  return {
    waits,
    read: () => {
      t += step;
      return Promise.resolve(readings[i++] ?? { kind: 'error', reason: 'test ran out of readings' });
    },
    condition,
    wait: (ms) => {
      waits.push(ms);
      t += ms;
      return Promise.resolve(true);
    },
    now: () => new Date(t),
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
const noData: Reading = { kind: 'no_data', reason: 'no data' };
const err: Reading = { kind: 'error', reason: 'prometheus unreachable' };

describe('analysis conditions (kplay expression engine)', () => {
  it('one series is a number, several a list (use a filter), NaN fails, no data is inconclusive', async () => {
    expect((await judge(v(0.001), 'result < 0.01', undefined, condition)).verdict).toBe('successful');
    expect((await judge(v(0.5), 'result < 0.01', undefined, condition)).verdict).toBe('failed');
    expect((await judge(v([0.001, 0.002]), 'result | max < 0.01', undefined, condition)).verdict).toBe('successful');
    expect((await judge(v([0.001, 0.2]), 'result | max < 0.01', undefined, condition)).verdict).toBe('failed');
    expect((await judge(v(Number.NaN), 'result < 0.01', undefined, condition)).verdict).toBe('failed');
    expect((await judge(noData, 'result < 0.01', undefined, condition)).verdict).toBe('inconclusive');
  });
  it('NaN among several series: `| max` can hide it (as in Python), the documented select idiom does not', async () => {
    // Python's max() skips a NaN after a number: why the README recommends the select form
    expect((await judge(v([0.001, Number.NaN]), 'result | max < 0.01', undefined, condition)).verdict).toBe('successful');
    const every = "result | select('lt', 0.01) | list | length == result | length";
    expect((await judge(v([0.001, Number.NaN]), every, undefined, condition)).verdict).toBe('failed');
    expect((await judge(v([Number.NaN, 0.001]), every, undefined, condition)).verdict).toBe('failed');
    expect((await judge(v([0.001, 0.002]), every, undefined, condition)).verdict).toBe('successful');
  });
  it('±Inf compare as infinities; NaN is unequal to itself', async () => {
    expect((await judge(v(Number.POSITIVE_INFINITY), 'result < 0.01', undefined, condition)).verdict).toBe('failed');
    expect((await judge(v(Number.NEGATIVE_INFINITY), 'result < 0.01', undefined, condition)).verdict).toBe('successful');
    expect((await judge(v(Number.NaN), 'result == result', undefined, condition)).verdict).toBe('failed');
  });
  it('failure_condition: failed when it holds, inconclusive when neither holds (NaN included)', async () => {
    expect((await judge(v(0.5), 'result < 0.01', 'result > 0.1', condition)).verdict).toBe('failed');
    expect((await judge(v(0.05), 'result < 0.01', 'result > 0.1', condition)).verdict).toBe('inconclusive');
    expect((await judge(v(0.001), 'result < 0.01', 'result > 0.1', condition)).verdict).toBe('successful');
    expect((await judge(v(Number.NaN), 'result < 0.01', 'result > 0.1', condition)).verdict).toBe('inconclusive');
  });
  it('a condition that cannot be evaluated is an error (as in Argo), with the reason', async () => {
    const j = await judge(v(1), 'result <', undefined, condition);
    expect(j.verdict).toBe('error');
    expect(j.reason).toMatch(/could not be evaluated/);
    expect((await judge(v({}), 'result.nope.deeper > 1', undefined, condition)).verdict).toBe('error');
  });
  it('no_data decides what a reading without data is', async () => {
    expect((await judge(noData, 'result < 1', undefined, condition, 'failed')).verdict).toBe('failed');
    const ok = await judge(noData, 'result < 1', undefined, condition, 'successful');
    expect(ok).toEqual({ verdict: 'successful', reason: 'no data (no_data: successful)' });
    expect((await judge(err, 'result < 1', undefined, condition, 'successful')).verdict).toBe('error');
  });
});

describe('scrape targets (when a query\'s data can exist)', () => {
  it('reads Prometheus durations', () => {
    expect(promDurationMs('1s')).toBe(1000);
    expect(promDurationMs('1m30s')).toBe(90_000);
    expect(promDurationMs('500ms')).toBe(500);
    expect(promDurationMs('1h')).toBe(3_600_000);
    expect(promDurationMs('soon')).toBeUndefined();
    expect(promDurationMs(15)).toBeUndefined();
  });
  it('takes lastScrape and scrapeInterval of the active targets; a never-scraped target is 0; a non-Prometheus answer says so', () => {
    const body = {
      status: 'success',
      data: {
        activeTargets: [
          { scrapeUrl: 'http://a/metrics', lastScrape: '2026-12-01T10:00:01.5Z', scrapeInterval: '1s' },
          { scrapeUrl: 'http://b/metrics', lastScrape: '0001-01-01T00:00:00Z', scrapeInterval: '1m' },
          'junk',
        ],
      },
    };
    expect(scrapeTargets(body)).toEqual([
      { url: 'http://a/metrics', lastScrapeMs: Date.parse('2026-12-01T10:00:01.5Z'), intervalMs: 1000, key: '' },
      { url: 'http://b/metrics', lastScrapeMs: 0, intervalMs: 60_000, key: '' },
    ]);
    expect(scrapeTargets({ status: 'success', data: { activeTargets: [] } })).toEqual([]);
    expect(scrapeTargets({ hello: 1 })).toMatch(/no active targets list/);
    expect(scrapeTargets(null)).toMatch(/no active targets list/);
  });
  it('matches a target to its stored `up` sample (timestamp(up)) by its labels', () => {
    const key = labelKey({ job: 'app', instance: '127.0.0.1:9' });
    expect(key).toBe(labelKey({ instance: '127.0.0.1:9', job: 'app', __name__: 'up' }));
    const stored = storedScrapes({ status: 'success', data: { resultType: 'vector', result: [{ metric: { instance: '127.0.0.1:9', job: 'app' }, value: [1796168470.1, '1796168469.595'] }] } });
    expect(stored?.get(key)).toBe(1796168469595);
    expect(storedScrapes({ status: 'error' })).toBeUndefined();
  });
});

describe('promReading', () => {
  it('maps Prometheus answers: no series is no data, errors and range results are errors', () => {
    expect(promReading({ status: 'success', data: { resultType: 'vector', result: [] } })).toEqual({ kind: 'no_data', reason: 'no data: the query returned no series' });
    expect(promReading({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [1, '0.25'] }] } })).toEqual(v(0.25));
    expect(promReading({ status: 'success', data: { resultType: 'vector', result: [{ value: [1, '1'] }, { value: [1, '2'] }] } })).toEqual(v([1, 2]));
    expect(promReading({ status: 'success', data: { resultType: 'scalar', result: [1, 'NaN'] } })).toEqual(v(Number.NaN));
    expect(promReading({ status: 'success', data: { resultType: 'vector', result: [{ value: [1, '+Inf'] }, { value: [1, '-Inf'] }] } })).toEqual(v([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]));
    expect(promReading({ status: 'error', errorType: 'bad_data', error: 'parse error' })).toEqual({ kind: 'error', reason: 'prometheus: bad_data: parse error' });
    const range = promReading({ status: 'success', data: { resultType: 'matrix', result: [] } });
    expect(range.kind).toBe('error');
    expect(range.kind === 'error' && range.reason).toMatch(/instant vector or a scalar/);
    expect(promReading({}).kind).toBe('error');
  });
  it('parses Prometheus sample spellings', () => {
    expect(promNumber('0.5')).toBe(0.5);
    expect(promNumber('+Inf')).toBe(Number.POSITIVE_INFINITY);
    expect(promNumber('-Inf')).toBe(Number.NEGATIVE_INFINITY);
    expect(promNumber('NaN')).toBeNaN();
    expect(promNumber(undefined)).toBeNaN();
  });
  it('values are recorded JSON-safe', () => {
    expect(jsonSafe([1, Number.NaN, Number.POSITIVE_INFINITY, { x: Number.NEGATIVE_INFINITY }])).toEqual([1, 'NaN', '+Inf', { x: '-Inf' }]);
    expect(JSON.parse(JSON.stringify(jsonSafe({ a: Number.NaN })))).toEqual({ a: 'NaN' });
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
    expect(r.metrics).toEqual([{ name: 'errors', verdict: 'successful', count: 3, successful: 3, failed: 0, inconclusive: 0, error: 0, consecutive_errors: 0 }]);
    expect(r.reason).toBeUndefined();
  });
  it('interval runs from the start of one round to the start of the next', async () => {
    const d = deps([v(0), v(0), v(0)], 300);
    await runAnalysis(plan(), d);
    expect(d.waits).toEqual([700, 700]);
    const slow = deps([v(0), v(0)], 2500);
    await runAnalysis(plan({ count: 2 }), slow);
    expect(slow.waits).toEqual([0]);
  });
  it('initial_delay waits before the first measurement', async () => {
    const d = deps([v(0)]);
    await runAnalysis(plan({ count: 1, initialDelayMs: 5000 }), d);
    expect(d.waits).toEqual([5000]);
  });
  it('failed after failure_limit + 1 failed measurements, stopping at once', async () => {
    const r = await runAnalysis(plan({ count: 10, failureLimit: 2 }), deps([v(1), v(0), v(1), v(1), v(0)]));
    expect(r.verdict).toBe('failed');
    expect(r.measurements).toHaveLength(4);
    expect(r.reason).toBe('errors: 3 failed measurement(s) exceed failure_limit 2');
  });
  it('failures within failure_limit still pass', async () => {
    const r = await runAnalysis(plan({ count: 3, failureLimit: 1 }), deps([v(1), v(0), v(0)]));
    expect(r.verdict).toBe('successful');
  });
  it('inconclusive after inconclusive_limit + 1 no-data measurements, never successful', async () => {
    const r = await runAnalysis(plan({ count: 5, inconclusiveLimit: 1 }), deps([noData, v(0), noData]));
    expect(r.verdict).toBe('inconclusive');
    expect(r.measurements).toHaveLength(3);
    expect(r.measurements[2]).toMatchObject({ value: null, verdict: 'inconclusive', reason: 'no data' });
  });
  it('no data counts as failed with no_data: failed', async () => {
    const r = await runAnalysis(plan({ metrics: [{ name: 'e', success_condition: 'result < 1', no_data: 'failed' }] }), deps([noData]));
    expect(r.verdict).toBe('failed');
  });
  it('errors: do not count towards count; consecutive_error_limit + 1 in a row end the gate in error', async () => {
    // 4 errors (the default limit) are tolerated, a good reading resets the run
    const ok = await runAnalysis(plan({ count: 2 }), deps([err, err, err, err, v(0), err, v(0)]));
    expect(ok.verdict).toBe('successful');
    expect(ok.measurements).toHaveLength(7);
    expect(ok.metrics[0]).toMatchObject({ count: 2, successful: 2, error: 5, consecutive_errors: 0 });
    const bad = await runAnalysis(plan({ count: 10 }), deps([v(0), err, err, err, err, err, v(0)]));
    expect(bad.verdict).toBe('error');
    expect(bad.measurements).toHaveLength(6);
    expect(bad.reason).toBe('errors: 5 errors in a row exceed consecutive_error_limit 4');
    expect(bad.measurements[5]).toMatchObject({ verdict: 'error', reason: 'prometheus unreachable', value: null });
    const strict = await runAnalysis(plan({ consecutiveErrorLimit: 0 }), deps([err]));
    expect(strict.verdict).toBe('error');
    expect(strict.measurements).toHaveLength(1);
  });
  it('errors alone never pass: a provider that stays down ends in error', async () => {
    const d = deps([]);
    const r = await runAnalysis(plan({ count: 1 }), d);
    expect(r.verdict).toBe('error');
    expect(r.measurements).toHaveLength(5);
    expect(d.waits).toEqual([1000, 1000, 1000, 1000]);
  });
  it('limits count per metric; a metric that is done stops being measured', async () => {
    const p = plan({ count: 2, failureLimit: 1, metrics: [{ name: 'a', success_condition: 'result < 1' }, { name: 'b', success_condition: 'result < 1' }] });
    // a fails once, b fails once: each within its own limit.
    expect((await runAnalysis(p, deps([v(5), v(0), v(0), v(5)]))).verdict).toBe('successful');
    const r = await runAnalysis(p, deps([v(5), v(0), v(5), v(0)]));
    expect(r.verdict).toBe('failed');
    expect(r.metrics.map((m) => m.verdict)).toEqual(['failed', 'running']);
    // b errs once, so it needs a third round; a (done) is not measured again
    const extra = await runAnalysis(p, deps([v(0), err, v(0), v(0), v(0)]));
    expect(extra.verdict).toBe('successful');
    expect(extra.measurements.map((m) => m.metric)).toEqual(['a', 'b', 'a', 'b', 'b']);
  });
  it('an aborted wait is inconclusive', async () => {
    const d = deps([v(0), v(0)]);
    d.wait = () => Promise.resolve(false);
    const r = await runAnalysis(plan(), d);
    expect(r.verdict).toBe('inconclusive');
    expect(r.reason).toMatch(/interrupted/);
  });
  it('p95 is the nearest-rank percentile', () => {
    expect(p95([5, 1, 3, 2, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100])).toBe(19);
    expect(p95([7])).toBe(7);
    expect(p95([])).toBe(0);
  });
});

describe('analysis module', () => {
  it('schema compiles and every example is valid', () => {
    const val = compileSchema(analysis.schema);
    for (const ex of analysis.examples) {
      const tasks = parseYaml(ex.yaml) as Record<string, unknown>[];
      const task = tasks.find((t) => 'analysis' in t);
      expect(val(task?.analysis), `${ex.title}: ${JSON.stringify(val.errors)}`).toBe(true);
    }
    expect(val({ metrics: [{ name: 'x', success_condition: 'true', nope: 1 }] })).toBe(false);
    expect(val({ metrics: [{ name: 'x', success_condition: 'true', no_data: 'maybe' }] })).toBe(false);
  });
  it('Prometheus down is an error that fails the task, even with on_inconclusive: pass; check mode does not fail', async () => {
    const srv = await startHttp((_req, res) => res.end());
    const address = srv.url.replace(/\/$/, '');
    await srv.close();
    const args = { interval: 0.01, count: 2, consecutive_error_limit: 1, metrics: [{ name: 'err', prometheus: { address, query: 'up', token: 's3cr3t-token' }, success_condition: 'result < 1' }] };
    const c = makeCtx();
    const r = await runModule(analysis, args, c);
    expect(r.status).toBe('failed');
    expect(r.msg).toMatch(/^analysis error after 2 measurement\(s\) \(err: 2 errors in a row exceed consecutive_error_limit 1; last: prometheus unreachable/);
    expect(JSON.stringify(r)).not.toContain('s3cr3t-token');
    expect(((r as { data: { verdict: string } }).data).verdict).toBe('error');
    expect((await runModule(analysis, args, makeCtx({ checkMode: true }))).status).toBe('ok');
    expect((await runModule(analysis, { ...args, on_inconclusive: 'pass' }, makeCtx())).status).toBe('failed');
  });
  it('a fake Prometheus answer drives the verdict; the query is sent templated as given; the result has started/since', async () => {
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
      const batchStarted = new Date('2026-01-01T00:00:00Z');
      const ok = await runModule(analysis, args, { ...makeCtx(), batchStarted });
      expect(ok.status).toBe('ok');
      // the gate first asks for the scrape targets (this fake has none to offer: no wait), with the token too
      expect(queries[0]).toBe('/api/v1/targets  Bearer tok');
      expect(queries.find((q) => q.startsWith('/api/v1/query'))).toBe('/api/v1/query rate(x[1m]) Bearer tok');
      const okData = (ok as { data: { since: string; started: string; metrics: unknown[] } }).data;
      expect(okData.since).toBe('2026-01-01T00:00:00.000Z');
      expect(Date.parse(okData.started)).toBeGreaterThan(batchStarted.getTime());
      rate = '0.5';
      const bad = await runModule(analysis, args, makeCtx());
      expect(bad.status).toBe('failed');
      expect(((bad as { data: { measurements: unknown[] } }).data).measurements).toHaveLength(1);
      rate = 'NaN';
      const nan = await runModule(analysis, { ...args, count: 1 }, makeCtx());
      expect(nan.status).toBe('failed');
      expect(((nan as { data: { measurements: { value: unknown }[] } }).data).measurements[0]?.value).toBe('NaN');
    } finally {
      await srv.close();
    }
  });
  it('a Prometheus that answers without JSON is an error measurement', async () => {
    const srv = await startHttp((_req, res) => res.end('<html>login</html>'));
    try {
      const r = await runModule(analysis, { interval: 0.01, count: 1, consecutive_error_limit: 0, metrics: [{ name: 'e', prometheus: { address: srv.url, query: 'up' }, success_condition: 'result == 1' }] }, makeCtx());
      expect(r.status).toBe('failed');
      expect(r.msg).toMatch(/without JSON/);
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
  const one = (kubernetes: Record<string, unknown>) => ({ metrics: [{ name: 'k', kubernetes, success_condition: 'result.healthy' }] });
  it('a provider address that is not an http(s) URL fails with a hint', async () => {
    const r = await runModule(analysis, { metrics: [{ name: 'x', prometheus: { address: '', query: 'up' }, success_condition: 'true' }] }, makeCtx());
    expect(r.status).toBe('failed');
    expect(r.msg).toMatch(/not an http:\/\/ or https:\/\/ URL.*inventory variable/);
  });
  it('kubernetes without anything to follow, a selector without namespace, an object without namespace', async () => {
    expect((await runModule(analysis, one({}), makeCtx())).msg).toMatch(/kubernetes needs what to follow: `from`/);
    expect((await runModule(analysis, one({ label_selector: 'app=web' }), makeCtx())).msg).toMatch(/label_selector needs kubernetes.namespace/);
    expect((await runModule(analysis, one({ objects: [{ kind: 'Deployment', name: 'web' }] }), makeCtx())).msg).toMatch(/Deployment web has no namespace; set its namespace or kubernetes.namespace/);
  });
  it('kubernetes.from that names no objects (an unregistered or odd value) says what it got', async () => {
    for (const [from, shape] of [
      [null, 'null'],
      ['', 'a string'],
      [[], 'an empty list'],
      [{ changed: false, msg: 'x' }, 'a map with keys changed, msg'],
      [{ results: [{ skipped: true }] }, 'a map with keys results'],
    ] as [unknown, string][]) {
      const r = await runModule(analysis, one({ from }), makeCtx());
      expect(r.status).toBe('failed');
      expect(r.msg).toContain(`kubernetes.from names no Kubernetes objects (it is ${shape})`);
    }
  });
});

describe('kubeSignals', () => {
  const since = new Date('2026-01-01T10:00:00.500Z');
  const pod = (name: string, restarts: number, opts: { ready?: boolean; waiting?: string; created?: string; lastEnd?: string; readySince?: string; deleting?: boolean } = {}) => ({
    metadata: {
      name,
      namespace: 'web',
      uid: `uid-${name}`,
      ownerReferences: [{ kind: 'ReplicaSet', name: 'web-abc' }],
      ...(opts.created ? { creationTimestamp: opts.created } : {}),
      ...(opts.deleting ? { deletionTimestamp: '2026-01-01T10:00:09Z' } : {}),
    },
    status: {
      conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True', lastTransitionTime: opts.readySince ?? '2026-01-01T09:00:00Z' }],
      containerStatuses: [
        {
          name: 'app',
          restartCount: restarts,
          state: opts.waiting ? { waiting: { reason: opts.waiting } } : {},
          lastState: opts.lastEnd ? { terminated: { finishedAt: opts.lastEnd } } : {},
        },
      ],
    },
  });
  const warning = (kind: string, name: string, when: Record<string, unknown>, reason = 'BackOff') => ({ type: 'Warning', reason, message: 'boom', involvedObject: { kind, name, namespace: 'web' }, ...when });
  it('counts restarts since the first sight, crash loops, readiness and recent Warning events of the pods or owners', () => {
    const state = kubeState();
    expect(kubeSignals({ pods: [pod('a', 3), pod('b', 0)], events: [] }, state, since)).toMatchObject({ pods: 2, ready: 2, restarts: 0, crash_looping: 0, warning_events: 0, healthy: true, details: [] });
    const events = [
      warning('Pod', 'a', { lastTimestamp: '2026-01-01T10:00:00Z' }), // same second as the start: counted
      warning('ReplicaSet', 'web-abc', { eventTime: '2026-01-01T10:05:00.000000Z', lastTimestamp: null }),
      warning('Pod', 'a', { lastTimestamp: '2026-01-01T09:59:59Z' }), // before: not counted
      warning('Pod', 'other', { lastTimestamp: '2026-01-01T10:01:00Z' }), // another object
      { ...warning('Pod', 'a', { lastTimestamp: '2026-01-01T10:01:00Z' }), type: 'Normal' },
      { ...warning('Pod', 'a', { lastTimestamp: '2026-01-01T10:01:00Z' }), involvedObject: { kind: 'Pod', name: 'a', namespace: 'other-ns' } }, // same name elsewhere
    ];
    const s = kubeSignals({ pods: [pod('a', 5, { waiting: 'CrashLoopBackOff', ready: false }), pod('b', 0), pod('c', 1)], events }, state, since);
    expect(s).toMatchObject({ pods: 3, ready: 2, restarts: 2, crash_looping: 1, warning_events: 2, healthy: false }); // a: 3 → 5; c is first seen now
    expect(s.details).toEqual([
      'Pod web/a: not ready',
      'Pod web/a: container app restarted 2 time(s)',
      'Pod web/a: container app in CrashLoopBackOff',
      'Warning BackOff on Pod a: boom',
      'Warning BackOff on ReplicaSet web-abc: boom',
    ]);
  });
  it('since the batch started: a pod created since counts all its restarts; an older one that restarted since counts one', () => {
    const s = kubeSignals(
      { pods: [pod('new', 2, { created: '2026-01-01T10:00:03Z' }), pod('old', 4, { created: '2026-01-01T09:00:00Z', lastEnd: '2026-01-01T10:00:02Z' }), pod('calm', 4, { created: '2026-01-01T09:00:00Z', lastEnd: '2026-01-01T09:30:00Z' })], events: [] },
      kubeState(),
      since,
    );
    expect(s.restarts).toBe(3);
  });
  it('readiness must hold between measurements: a new Ready transition is a flap', () => {
    const state = kubeState();
    expect(kubeSignals({ pods: [pod('a', 0)], events: [] }, state, since).ready_flapped).toBe(0);
    const again = kubeSignals({ pods: [pod('a', 0, { readySince: '2026-01-01T10:00:07Z' })], events: [] }, state, since);
    expect(again).toMatchObject({ ready: 1, ready_flapped: 1, healthy: false });
    expect(again.details[0]).toMatch(/lost readiness between measurements/);
    expect(kubeSignals({ pods: [pod('a', 0, { readySince: '2026-01-01T10:00:07Z' })], events: [] }, state, since).ready_flapped).toBe(0);
  });
  it('terminating pods are not counted; ignored reasons and missing objects', () => {
    const s = kubeSignals(
      {
        pods: [pod('old', 0, { deleting: true, ready: false }), pod('a', 0)],
        events: [warning('Pod', 'a', { lastTimestamp: '2026-01-01T10:00:05Z' }, 'Unhealthy'), warning('Deployment', 'api', { lastTimestamp: '2026-01-01T10:00:05Z' }, 'FailedCreate')],
        objects: [{ kind: 'Deployment', name: 'api', namespace: 'web' }],
        missing: ['Deployment web/gone'],
        ignoreReasons: ['Unhealthy'],
      },
      kubeState(),
      since,
    );
    expect(s).toMatchObject({ objects: 1, missing: 1, pods: 1, ready: 1, warning_events: 1, healthy: false });
    expect(s.details).toEqual(['Deployment web/gone: not found', 'Warning FailedCreate on Deployment api: boom']);
  });
  it('Warning events of pods already replaced count, known by their owner\'s name', () => {
    const s = kubeSignals(
      {
        pods: [pod('web-abc-x1y2z', 0)],
        events: [
          warning('Pod', 'web-abc-q9w8e', { lastTimestamp: '2026-01-01T10:00:05Z' }, 'Evicted'), // a replaced pod of ReplicaSet web-abc
          warning('Pod', 'db-0', { lastTimestamp: '2026-01-01T10:00:05Z' }), // StatefulSet db is followed
          warning('Pod', 'other-abc-q9w8e', { lastTimestamp: '2026-01-01T10:00:05Z' }), // not ours
          warning('Pod', 'web-abc-toolongname', { lastTimestamp: '2026-01-01T10:00:05Z' }), // not a generated suffix
        ],
        objects: [{ kind: 'StatefulSet', name: 'db', namespace: 'web' }],
      },
      kubeState(),
      since,
    );
    expect(s.warning_events).toBe(2);
  });
  it('tolerates pods without status and events without fields', () => {
    expect(kubeSignals({ pods: [{ metadata: { name: 'x' } }, {}], events: [{}] }, kubeState(), since)).toMatchObject({ pods: 2, ready: 0, restarts: 0, crash_looping: 0, warning_events: 0 });
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
      const m = (r as { data: { measurements: { value: { success_rate: number; requests: number; p95_ms: number; failed: number; status_codes: Record<string, number>; errors: string[] } }[] } }).data.measurements[0]!;
      expect(m.value).toMatchObject({ success_rate: 75, requests: 8, failed: 2, status_codes: { 200: 6, 503: 2 }, errors: ['HTTP 503'] });
      expect(m.value.p95_ms).toBeGreaterThanOrEqual(0);
      const ok = await runModule(analysis, { ...args, metrics: [{ ...args.metrics[0]!, success_condition: 'result.success_rate >= 75 and result.p95_ms <= 5000' }] }, makeCtx());
      expect(ok.status).toBe('ok');
    } finally {
      await srv.close();
    }
  });
});

describe('the loop as the module exports it (callers of the first version)', () => {
  it('runAnalysis and the inconclusive reading still work from modules/analysis; measured() sees every measurement', async () => {
    const { runAnalysis: fromModule } = await import('../../modules/analysis.js');
    const seen: number[] = [];
    const d = deps([{ kind: 'inconclusive', reason: 'no data' }, v(0), v(0)]);
    d.measured = (all) => seen.push(all.length);
    const r = await fromModule(plan({ inconclusiveLimit: 1, metrics: [{ name: 'e', success_condition: 'result < 1', no_data: 'successful' }] }), d);
    expect(r.verdict).toBe('successful');
    expect(r.measurements.map((m) => m.verdict)).toEqual(['inconclusive', 'successful', 'successful']);
    expect(seen).toEqual([1, 2, 3]);
  });
});

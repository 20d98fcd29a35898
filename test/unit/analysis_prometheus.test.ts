/**
 * The analysis gate against a REAL Prometheus (Debian's package; fails, never skips, when missing)
 * scraping a stand-in exporter whose error ratio the test sets. Waits on Prometheus' own answers,
 * never on fixed sleeps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import analysis, { type AnalysisResult } from '../../modules/analysis.js';
import type { ModuleResult } from '../../src/core/module.js';
import { makeCtx, runModule } from '../helpers/ctx.js';
import { startExporter, startPrometheus, waitForQuery, type Exporter, type PrometheusInstance } from '../helpers/prometheus.mjs';

let exporter: Exporter;
let prom: PrometheusInstance;

beforeAll(async () => {
  exporter = await startExporter(0.001);
  prom = await startPrometheus(new URL(exporter.server.url).host);
  await waitForQuery(prom.url, 'app_error_ratio', (v) => v.length === 1 && v[0] === 0.001);
}, 120_000);
afterAll(async () => {
  await prom?.stop();
  await exporter?.server.close();
});

function gate(over: Record<string, unknown> = {}, query = 'app_error_ratio', condition = 'result < 0.01'): Promise<ModuleResult<AnalysisResult>> {
  return runModule(analysis, { interval: 0.2, count: 3, metrics: [{ name: 'error-ratio', prometheus: { address: prom.url, query }, success_condition: condition }], ...over }, makeCtx());
}
const data = (r: ModuleResult<AnalysisResult>): AnalysisResult => (r as { data: AnalysisResult }).data;

describe('analysis against a real Prometheus', () => {
  it('a good release passes: every measurement successful', async () => {
    const r = await gate();
    expect(r.status).toBe('ok');
    expect(data(r).verdict).toBe('successful');
    expect(data(r).measurements.map((m) => [m.value, m.verdict])).toEqual([
      [0.001, 'successful'],
      [0.001, 'successful'],
      [0.001, 'successful'],
    ]);
  });

  it('a bad release fails after failure_limit + 1 measurements', async () => {
    exporter.ratios.set('a', 0.5);
    await waitForQuery(prom.url, 'app_error_ratio', (v) => v[0] === 0.5);
    const r = await gate({ count: 10, failure_limit: 2 });
    expect(r.status).toBe('failed');
    expect(data(r).verdict).toBe('failed');
    expect(data(r).measurements).toHaveLength(3);
    expect(data(r).measurements.every((m) => m.verdict === 'failed' && m.value === 0.5)).toBe(true);
  });

  it('several series: result is a list, bounded with `result | max`', async () => {
    exporter.ratios.set('a', 0.001);
    exporter.ratios.set('b', 0.2);
    await waitForQuery(prom.url, 'app_error_ratio', (v) => v.length === 2 && v.includes(0.001) && v.includes(0.2));
    const r = await gate({ count: 1 }, 'app_error_ratio', 'result | max < 0.01');
    expect(data(r).verdict).toBe('failed');
    expect(data(r).measurements[0]?.value).toEqual(expect.arrayContaining([0.001, 0.2]));
    exporter.ratios.delete('b');
    await waitForQuery(prom.url, 'app_error_ratio', (v) => v.length === 1 && v[0] === 0.001);
  });

  it('a query without series is inconclusive (no data), not passed', async () => {
    const r = await gate({ count: 1 }, 'app_error_ratio{series="nope"}');
    expect(r.status).toBe('failed');
    expect(data(r).verdict).toBe('inconclusive');
    expect(data(r).measurements[0]?.reason).toMatch(/no data/);
  });

  it('Prometheus down: error measurements, the gate ends in error after consecutive_error_limit + 1, not passed (not even with on_inconclusive: pass)', async () => {
    await prom.stop();
    const r = await gate({ count: 3, consecutive_error_limit: 1, on_inconclusive: 'pass' });
    expect(r.status).toBe('failed');
    expect(data(r).verdict).toBe('error');
    expect(data(r).measurements).toHaveLength(2);
    expect(data(r).measurements.map((m) => m.verdict)).toEqual(['error', 'error']);
    expect(data(r).measurements[0]?.reason).toMatch(/unreachable/);
    expect(data(r).reason).toMatch(/2 errors in a row exceed consecutive_error_limit 1/);
  });
});

// Analysis gates in the reports: the progress line a running gate sends (the real analysis loop
// → the board), the copy of its measurements the run record keeps, and the run report's table.
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runAnalysis, type AnalysisDeps, type Reading } from '../../modules/analysis.js';
import { RunRecorder } from '../../src/audit/record.js';
import { reportCommand } from '../../src/cli/report.js';
import { layoutBoard } from '../../src/report/board-layout.js';
import { applyEvent, newBoard } from '../../src/report/board-state.js';
import { emptyStats } from '../../src/report/events.js';
import { GATE_CLUSTER_MEASUREMENTS_CAP, GATE_MEASUREMENTS_CAP, asGateRecord, gateProgress, gateRecordOf, gateValueText } from '../../src/report/gate.js';
import { Masker } from '../../src/core/mask.js';

/** Deps replaying `values` for metric 0 (null = no data), `result < 0.01` as the condition, a fixed clock. */
function deps(values: (number | null)[], progress: string[]): AnalysisDeps {
  let n = 0;
  let t = Date.parse('2026-11-27T10:00:00.000Z');
  return {
    read: (): Promise<Reading> => {
      const v = values[n++];
      return Promise.resolve(v === null || v === undefined ? { kind: 'inconclusive', reason: 'no data: the query returned no series' } : { kind: 'value', value: v });
    },
    condition: (_expr, value) => Promise.resolve(typeof value === 'number' && value < 0.01),
    wait: () => Promise.resolve(true),
    now: () => new Date((t += 1000)),
    measured: (all) => progress.push(gateProgress(all, 4)),
  };
}
const plan = { metrics: [{ name: 'error-ratio', success_condition: 'result < 0.01' }], intervalMs: 1000, count: 4, failureLimit: 1, inconclusiveLimit: 1 };

describe('gate progress', () => {
  it('the analysis loop reports after each measurement; the board shows it as what the cluster waits on', async () => {
    const progress: string[] = [];
    const out = await runAnalysis(plan, deps([0.004, 0.0041234, 0.5, 0.7], progress));
    expect(out.verdict).toBe('failed');
    expect(progress).toEqual([
      'analysis error-ratio: 1/4 measured, 0 failed, last 0.004',
      'analysis error-ratio: 2/4 measured, 0 failed, last 0.004123',
      'analysis error-ratio: 3/4 measured, 1 failed, last 0.5',
      'analysis error-ratio: 4/4 measured, 2 failed, last 0.7',
    ]);
    const b = newBoard(0);
    applyEvent(b, { type: 'play_start', play: 'roll', hosts: 'fleet', clusters: ['eu-1'], batch: 1, batches: 3, play_clusters: ['eu-1', 'eu-2', 'us-1'] }, 1);
    applyEvent(b, { type: 'task_start', play: 'roll', task: 'gate', module: 'analysis', where: 'p.yml:9', handler: false }, 2);
    applyEvent(b, { type: 'progress', cluster: 'eu-1', task: 'gate', msg: progress[1] ?? '' }, 3);
    const text = layoutBoard(b, { width: 100, height: 20, color: false, now: 4 }).join('\n');
    expect(text).toMatch(/eu-1 .*waiting.*gate › analysis error-ratio: 2\/4 measured, 0 failed, last 0\.004123/);
    // the result ends the wait
    applyEvent(b, { type: 'task_result', task: 'gate', module: 'analysis', cluster: 'eu-1', status: 'ok', duration_ms: 3 }, 5);
    expect(layoutBoard(b, { width: 100, height: 20, color: false, now: 6 }).join('\n')).not.toContain('measured');
  });

  it('counts inconclusive measurements and shows no data, lists and objects compactly', async () => {
    const progress: string[] = [];
    const out = await runAnalysis(plan, deps([null, 0.001, null], progress));
    expect(out.verdict).toBe('inconclusive');
    expect(progress.at(-1)).toBe('analysis error-ratio: 3/4 measured, 0 failed, 2 inconclusive, last no data');
    expect(gateValueText([0.123456, Number.NaN])).toBe('[0.1235,"NaN"]');
    expect(gateValueText({ success_rate: 99.5, p95_ms: 12.345678 })).toBe('{"success_rate":99.5,"p95_ms":12.35}');
    expect(gateValueText('x'.repeat(500))).toHaveLength(120);
    expect(gateProgress([], 5)).toBe('analysis: 0/5 measured');
  });
});

describe('gate record', () => {
  it('keeps verdict and measurements of a gate result only; values as text; the newest measurements beyond the cap', () => {
    expect(gateRecordOf(undefined)).toBeUndefined();
    expect(gateRecordOf({ changed: false })).toBeUndefined();
    expect(gateRecordOf({ verdict: 'maybe', measurements: [] })).toBeUndefined();
    expect(gateRecordOf({ verdict: 'failed', measurements: null })).toBeUndefined();
    const g = gateRecordOf({ verdict: 'failed', measurements: [{ at: 'a', metric: 'm', value: 0.5, verdict: 'failed', reason: 'success_condition "result < 0.01" is false' }, null, 'odd', { metric: 7 }] });
    expect(g).toEqual({
      verdict: 'failed',
      measurements: [
        { at: 'a', metric: 'm', value: '0.5', verdict: 'failed', reason: 'success_condition "result < 0.01" is false' },
        { at: '', metric: '', value: 'no data', verdict: 'inconclusive' },
      ],
    });
    const many = Array.from({ length: GATE_MEASUREMENTS_CAP + 5 }, (_, i) => ({ at: String(i), metric: 'm', value: i, verdict: 'successful' }));
    const capped = gateRecordOf({ verdict: 'successful', measurements: many });
    expect(capped?.measurements).toHaveLength(GATE_MEASUREMENTS_CAP);
    expect(capped?.measurements[0]?.at).toBe('5');
    expect(capped?.omitted).toBe(5);
    // read back: an edited line with a bad measurement drops it, a bad gate is no gate
    expect(asGateRecord({ verdict: 'successful', measurements: [{ at: 'a', metric: 'm', value: '1', verdict: 'successful' }, { at: 1 }] })?.measurements).toHaveLength(1);
    expect(asGateRecord({ verdict: 'ok', measurements: [] })).toBeUndefined();
    expect(asGateRecord('x')).toBeUndefined();
  });
});

describe('gate in the run report', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'kplay-gate-report-'));
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterEach(() => vi.restoreAllMocks());

  it('each cluster\'s gate: verdict and a table of time, metric, value, verdict; masked; none under no_log', async () => {
    const m = new Masker();
    m.add('tok-s3cr3t');
    const rec = new RunRecorder({ run_id: '20261127T100000000-gggggg', user: 'ops', host: 'h', started: new Date().toISOString(), playbook: 'gate.yml', inventory: 'inv', tags: [], skip_tags: [], extra_var_names: [], check: false, lock: true });
    rec.onEvent({ type: 'play_start', play: 'roll', hosts: 'fleet', clusters: ['eu-1'], batch: 1, batches: 2 });
    // the executor masks every event before the recorder sees it: as here
    const data = { verdict: 'failed', measurements: [
      { at: '2026-11-27T10:00:01.250Z', metric: 'error-ratio', value: 0.004, verdict: 'successful' },
      { at: '2026-11-27T10:00:02.500Z', metric: 'error-ratio', value: null, verdict: 'inconclusive', reason: m.mask('prometheus unreachable: Bearer tok-s3cr3t refused') },
      { at: '2026-11-27T10:00:03.750Z', metric: 'error-ratio', value: 0.5, verdict: 'failed', reason: 'success_condition "result < 0.01" is false' },
    ] };
    rec.onEvent({ type: 'task_result', task: 'gate', module: 'analysis', cluster: 'eu-1', status: 'failed', msg: 'analysis failed after 3 measurement(s)', data, duration_ms: 2600 });
    rec.onEvent({ type: 'task_result', task: 'quiet gate', module: 'analysis', cluster: 'eu-1', status: 'ok', duration_ms: 1 }); // no_log: no data
    rec.onEvent({ type: 'play_start', play: 'roll', hosts: 'fleet', clusters: ['eu-2'], batch: 2, batches: 2 });
    rec.onEvent({ type: 'task_result', task: 'gate', module: 'analysis', cluster: 'eu-2', status: 'ok', data: { verdict: 'successful', measurements: [{ at: '2026-11-27T10:00:09.000Z', metric: 'error-ratio', value: [0.001, 0.002], verdict: 'successful' }] }, duration_ms: 5 });
    rec.onEvent({ type: 'recap', clusters: { 'eu-1': { ...emptyStats(), failed: 1, ok: 1 }, 'eu-2': { ...emptyStats(), ok: 1 } }, elapsed_ms: 9000, exit_code: 2, interrupted: false });
    expect(rec.record(['eu-1']).tasks[0]?.gate?.measurements).toHaveLength(3); // the cluster's record keeps it too ...
    const other = new RunRecorder({ run_id: '20261127T100000000-hhhhhh', user: 'ops', host: 'h', started: new Date().toISOString(), playbook: 'gate.yml', inventory: 'inv', tags: [], skip_tags: [], extra_var_names: [], check: false, lock: true });
    // ... but only the newest measurements of a long gate (records there share a ConfigMap's 1 MiB)
    const long = Array.from({ length: 50 }, (_, i) => ({ at: String(i), metric: 'm', value: i, verdict: 'successful' }));
    other.onEvent({ type: 'task_result', task: 'long gate', module: 'analysis', cluster: 'eu-2', status: 'ok', data: { verdict: 'successful', measurements: long }, duration_ms: 5 });
    const inCluster = other.record(['eu-2']).tasks.find((t) => t.task === 'long gate')?.gate;
    expect(inCluster?.measurements.map((x) => x.at)).toEqual(Array.from({ length: GATE_CLUSTER_MEASUREMENTS_CAP }, (_, i) => String(50 - GATE_CLUSTER_MEASUREMENTS_CAP + i)));
    expect(inCluster?.omitted).toBe(50 - GATE_CLUSTER_MEASUREMENTS_CAP);
    expect(other.tasks.find((t) => t.task === 'long gate')?.gate?.measurements).toHaveLength(50); // the local record keeps all
    await rec.writeLocal(dir);
    const out = path.join(dir, 'r.html');
    expect(await reportCommand('last', { recordDir: dir, out })).toBe(0);
    const page = await readFile(out, 'utf8');
    expect(page).not.toContain('tok-s3cr3t');
    const gates = /<div id="gates">([\s\S]*?)<\/div>\s*<h2>/.exec(page)?.[1] ?? '';
    const blocks = [...gates.matchAll(/<div class="gate" data-cluster="([^"]+)" data-task="([^"]+)" data-verdict="([^"]+)">([\s\S]*?)<\/table><\/div>/g)];
    expect(blocks.map((b) => [b[1], b[2], b[3]])).toEqual([
      ['eu-1', 'gate', 'failed'],
      ['eu-2', 'gate', 'successful'],
    ]);
    const rows = (html: string): string[][] => [...html.matchAll(/<tr class="m-[a-z]+">([\s\S]*?)<\/tr>/g)].map((r) => [...(r[1] ?? '').matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) => (c[1] ?? '').replace(/<[^>]+>/g, '')));
    expect(rows(blocks[0]?.[4] ?? '')).toEqual([
      ['10:00:01.250Z', 'error-ratio', '0.004', 'successful', ''],
      ['10:00:02.500Z', 'error-ratio', 'no data', 'inconclusive', 'prometheus unreachable: Bearer ******** refused'],
      ['10:00:03.750Z', 'error-ratio', '0.5', 'failed', 'success_condition &quot;result &lt; 0.01&quot; is false'],
    ]);
    expect(rows(blocks[1]?.[4] ?? '')).toEqual([['10:00:09.000Z', 'error-ratio', '[0.001,0.002]', 'successful', '']]);
    // the detail panel of the result carries the same table (built with textContent by the page's script)
    const embedded = JSON.parse(/<script type="application\/json" id="kplay-data">([\s\S]*?)<\/script>/.exec(page)?.[1] ?? '{}') as { details: { title: string; entries: { lines: [string, string][]; table?: { head: string[]; rows: string[][] } }[] }[] };
    const detail = embedded.details.find((d) => d.title === 'eu-1 — gate')?.entries[0];
    expect(detail?.lines).toContainEqual(['gate', 'failed after 3 measurement(s)']);
    expect(detail?.table?.head).toEqual(['time', 'metric', 'value', 'verdict', 'why']);
    expect(detail?.table?.rows[2]).toEqual(['10:00:03.750Z', 'error-ratio', '0.5', 'failed', 'success_condition "result < 0.01" is false']);
    expect(embedded.details.find((d) => d.title === 'eu-1 — quiet gate')?.entries[0]?.table).toBeUndefined();
  });
});

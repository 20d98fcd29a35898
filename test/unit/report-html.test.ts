// The run report and drift report pages (pure rendering), the record fields they read, and that a
// record written before those fields existed still verifies and still makes a report.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sha256 } from '../../src/audit/chain.js';
import { RunRecorder, type TaskRecord } from '../../src/audit/record.js';
import { historyCommand } from '../../src/cli/history.js';
import { reportCommand } from '../../src/cli/report.js';
import type { ClusterReport } from '../../src/report/drift-report.js';
import { emptyStats, type ClusterStats } from '../../src/report/events.js';
import { renderDriftReport } from '../../src/report/html/drift.js';
import { renderRunReport, type RunReportInput } from '../../src/report/html/run.js';

/** The JSON embedded in a page. */
function embedded(html: string): Record<string, unknown> {
  const m = /<script type="application\/json" id="kplay-data">([\s\S]*?)<\/script>/.exec(html);
  if (!m?.[1]) throw new Error('no embedded data');
  return JSON.parse(m[1]) as Record<string, unknown>;
}

/** A run over `n` clusters, serial 10, 12 tasks each, one failure rescued per batch. */
function bigRun(n: number): RunReportInput {
  const tasks: TaskRecord[] = [];
  const recap: Record<string, ClusterStats> = {};
  const clusters = Array.from({ length: n }, (_, i) => `prod-eu-${String(i).padStart(3, '0')}`);
  clusters.forEach((c, i) => {
    const batch = Math.floor(i / 10) + 1;
    let t = (batch - 1) * 60_000;
    recap[c] = { ...emptyStats(), ok: 8, changed: 3 };
    for (let k = 0; k < 12; k++) {
      const failed = i % 10 === 0 && k === 5;
      tasks.push({
        cluster: c,
        task: `step ${k}: apply the webapp manifests`,
        status: failed ? 'failed' : k % 4 === 0 ? 'changed' : 'ok',
        changed: k % 4 === 0,
        msg: failed ? 'Deployment webapp: 2/3 updated, 1 unavailable (timed out after 300 s)' : 'configured: Deployment web/webapp',
        duration_ms: 3000,
        start_ms: t,
        play: 'upgrade',
        batch,
        module: 'k8s_apply',
        ...(k % 4 === 0 ? { diff: ['Deployment web/webapp'], diff_text: `--- before: Deployment web/webapp\n+++ after: Deployment web/webapp\n@@ -1,3 +1,3 @@\n spec:\n-  replicas: 2\n+  replicas: 3\n` } : {}),
      });
      t += 3000;
    }
    if (i % 10 === 0) recap[c] = { ...emptyStats(), ok: 8, changed: 3, rescued: 1 };
  });
  return {
    run: { run_id: '20261126T100000000-abcdef', user: 'ops', host: 'bastion', started: '2026-11-26T10:00:00.000Z', finished: '2026-11-26T10:10:00.000Z', playbook: 'playbooks/upgrade.yml', inventory: 'inv/prod.yml', tags: [], skip_tags: [], extra_var_names: ['db_password'], check: false, lock: true },
    tasks,
    recap,
    exit_code: 0,
    interrupted: false,
    elapsed_ms: 600_000,
    batches: Array.from({ length: Math.ceil(n / 10) }, (_, b) => ({ play: 'upgrade', batch: b + 1, batches: Math.ceil(n / 10), clusters: clusters.slice(b * 10, b * 10 + 10), start_ms: b * 60_000 })),
    warnings: [],
    chain: { verified: true, checked: 'local records', problems: [] },
    source: '.kplay/runs/x.jsonl',
    related: [],
  };
}

describe('renderRunReport', () => {
  it('a 100-cluster run: every cluster in the timeline, grid and recap; under 2 MB', () => {
    const html = renderRunReport(bigRun(100));
    expect(Buffer.byteLength(html)).toBeLessThan(2 * 1024 * 1024);
    expect(html.match(/class="tl-row"/g)).toHaveLength(100);
    expect(html.match(/<tr data-cluster="prod-eu-/g)).toHaveLength(200); // results grid + recap
    expect(html.match(/class="batch-mark"/g)).toHaveLength(10);
    expect(html.match(/class="failure rescued"/g)).toHaveLength(10);
    expect(html).not.toMatch(/<script src|<link |https?:\/\//);
    const data = embedded(html);
    expect((data.diffs as string[]).length).toBe(1); // the same diff on 300 results is embedded once
  });

  it('100 clusters with a distinct 20 KB diff per task stay under 2 MB: diffs beyond the budget are named, not embedded', () => {
    const run = bigRun(100);
    run.tasks = run.tasks.map((t, i) => (t.diff_text ? { ...t, diff_text: `--- before: ConfigMap a/b${i}\n+++ after: ConfigMap a/b${i}\n${'+x: y\n'.repeat(3400)}` } : t));
    const html = renderRunReport(run);
    expect(Buffer.byteLength(html)).toBeLessThan(2 * 1024 * 1024);
    const diffs = embedded(html).diffs as string[];
    expect(diffs.length).toBeGreaterThan(30);
    expect(diffs.length).toBeLessThan(300);
    expect(html).toContain('not embedded (a report keeps at most 1 MB of diffs): kplay history show 20261126T100000000-abcdef has it');
  });

  it('escapes every text: a task name or message cannot end the data block or add markup', () => {
    const run = bigRun(1);
    const evil = '</script><img src=x onerror=alert(1)>&"\'';
    run.tasks[0] = { ...(run.tasks[0] as TaskRecord), task: evil, msg: evil, diff_text: `+${evil}` };
    run.run.playbook = evil;
    const html = renderRunReport(run);
    expect(html).not.toContain('<img src=x');
    expect(html.match(/<\/script>/g)).toHaveLength(2); // the data block and the script: nothing else ends a script
    const data = embedded(html);
    const details = data.details as { entries: { head: string }[] }[];
    expect(details[0]?.entries[0]?.head).toBe(evil); // the data is intact once parsed
    expect((data.diffs as string[])[0]).toBe(`+${evil}`);
  });

  it('places the tasks of an old record (no start times) one after the other and says so', () => {
    const run = bigRun(2);
    run.tasks = run.tasks.map(({ start_ms: _s, ...t }) => t);
    const html = renderRunReport(run);
    expect(html).toContain('holds no start times');
    const starts = [...html.matchAll(/data-start="(\d+)"/g)].map((m) => Number(m[1])).slice(0, 12);
    expect(starts).toEqual(Array.from({ length: 12 }, (_, k) => k * 3000));
  });
});

describe('renderDriftReport', () => {
  it('the fleet table and each cluster, the diff kept for on-demand display', () => {
    const drifted: ClusterReport = {
      state: 'drifted',
      objects: 4,
      drifted_objects: 1,
      drift: [{ object: 'Deployment shop/web', kind: 'Deployment', name: 'web', namespace: 'shop', action: 'update', fields: [{ path: '.spec.replicas', change: 'changed', manager: 'kubectl-scale', operation: 'Update', kplay_owns: false }], tasks: [{ task: 'deploy <web>', msg: 'would configure' }], diff: [{ label: 'Deployment shop/web', before: 'replicas: 3\n', after: 'replicas: 5\n' }] }],
      hidden: [],
      errors: [],
    };
    const ok: ClusterReport = { state: 'in sync', objects: 4, drifted_objects: 0, drift: [], hidden: [], errors: [] };
    const html = renderDriftReport(new Map([['sandbox-1', drifted], ['sandbox-2', ok]]), { playbook: 'up.yml', inventory: 'inv', time: '2026-11-26T10:00:00Z', exit_code: 3 });
    expect(html.match(/<tr data-cluster=/g)).toHaveLength(2);
    expect(html).toContain('deploy &lt;web&gt;');
    expect(html).toContain('kubectl-scale');
    expect(html).toContain('drift on 1 of 2 cluster(s) (exit 3)');
    expect((embedded(html).diffs as string[])[0]).toContain('+replicas: 5');
  });
});

describe('records before the run report', () => {
  let dir: string;
  let out: string[];
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'kplay-report-'));
    out = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
      out.push(String(s));
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterEach(() => vi.restoreAllMocks());

  it('a record as kplay wrote it before still verifies after a new record links to it, and still makes a report', async () => {
    // exactly the lines the previous writer produced (no start_ms, play, batches, warnings, elapsed)
    const oldId = '20261125T090000000-aaaaaa';
    const lines = [
      JSON.stringify({ type: 'run', run_id: oldId, user: 'ops', host: 'h', started: '2026-11-25T09:00:00.000Z', finished: '2026-11-25T09:01:00.000Z', playbook: 'up.yml', inventory: 'inv', tags: [], skip_tags: [], extra_var_names: [], check: false, lock: true, chain: { c1: null } }),
      JSON.stringify({ type: 'task', cluster: 'c1', task: 'deploy', status: 'changed', changed: true, msg: 'configured', diff: ['Deployment a/b'], duration_ms: 1200 }),
      JSON.stringify({ type: 'task', cluster: 'c1', task: 'check', status: 'ok', changed: false, duration_ms: 300 }),
      JSON.stringify({ type: 'recap', clusters: { c1: { ...emptyStats(), ok: 1, changed: 1 } }, exit_code: 0, interrupted: false }),
    ];
    const body = `${lines.join('\n')}\n`;
    await writeFile(path.join(dir, `${oldId}.jsonl`), `${body}${JSON.stringify({ type: 'digest', sha256: sha256(body) })}\n`);

    const rec = new RunRecorder({ run_id: '20261126T090000000-bbbbbb', user: 'ops', host: 'h', started: new Date().toISOString(), playbook: 'up.yml', inventory: 'inv', tags: [], skip_tags: [], extra_var_names: [], check: false, lock: true });
    rec.onEvent({ type: 'play_start', play: 'p', hosts: 'all', clusters: ['c1'], batch: 1, batches: 1 });
    rec.onEvent({ type: 'retry', task: 'wait', cluster: 'c1', attempt: 1, retries: 2 });
    rec.onEvent({ type: 'progress', task: 'wait', cluster: 'c1', msg: 'Deployment a/b: 1/2 updated' });
    rec.onEvent({ type: 'task_result', task: 'wait', module: 'k8s_apply', cluster: 'c1', status: 'changed', duration_ms: 5, diff: [{ label: 'Deployment a/b', before: 'x: 1\n', after: 'x: 2\n' }] });
    rec.onEvent({ type: 'recap', clusters: { c1: { ...emptyStats(), changed: 1 } }, elapsed_ms: 9, exit_code: 0, interrupted: false });
    const file = await rec.writeLocal(dir);
    const written = (await readFile(file, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(written[1]).toMatchObject({ type: 'task', play: 'p', batch: 1, retries: 1, waited_on: 'Deployment a/b: 1/2 updated', module: 'k8s_apply' });
    expect(written[1]?.diff_text).toContain('+x: 2');
    expect(written[2]).toMatchObject({ type: 'recap', elapsed_ms: 9, batches: [{ play: 'p', batch: 1, clusters: ['c1'] }] });
    // the in-cluster record keeps the diff labels, not the diff
    expect(rec.record(['c1']).tasks[0]).not.toHaveProperty('diff_text');

    expect(await historyCommand('verify', undefined, { recordDir: dir, output: 'json' })).toBe(0);
    expect(JSON.parse(out.join('')) as unknown).toMatchObject({ intact: true, checked: [{ cluster: 'c1', records: 2 }] });

    const html = path.join(dir, 'old.html');
    expect(await reportCommand(oldId, { recordDir: dir, out: html })).toBe(0);
    const page = await readFile(html, 'utf8');
    expect(page).toContain('holds no start times');
    expect(page).toContain('>verifies<');
    expect(page).toContain('kplay-report-20261126T090000000-bbbbbb.html'); // the other run of up.yml

    // an edited record: the report is written, says so, exit 3
    const text = await readFile(path.join(dir, `${oldId}.jsonl`), 'utf8');
    await writeFile(path.join(dir, `${oldId}.jsonl`), text.replace('configured', 'CONFIGURED'));
    expect(await reportCommand(oldId, { recordDir: dir, out: html })).toBe(3);
    expect(await readFile(html, 'utf8')).toContain('DOES NOT VERIFY');
    expect(await readFile(html, 'utf8')).toContain(`record of run ${oldId} was edited`);
    // the newer run's own record is intact: its report says so, and counts the other problem
    expect(await reportCommand('last', { recordDir: dir, out: html })).toBe(0);
    expect((await readFile(html, 'utf8')).match(/id="chain".{0,400}/)?.[0]).toContain('2 problem(s) with other records of these clusters');
  });

  it('no such run, or an ambiguous prefix: exit 1 with what to do', async () => {
    const err: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
      err.push(String(s));
      return true;
    });
    expect(await reportCommand('nope', { recordDir: dir, out: path.join(dir, 'x.html') })).toBe(1);
    expect(err.join('')).toContain(`no local record of run nope in ${dir}`);
    for (const id of ['20261126T090000000-aaaaaa', '20261126T090000000-bbbbbb']) {
      const rec = new RunRecorder({ run_id: id, user: 'ops', host: 'h', started: new Date().toISOString(), playbook: 'up.yml', inventory: 'inv', tags: [], skip_tags: [], extra_var_names: [], check: false, lock: true });
      rec.onEvent({ type: 'recap', clusters: { c1: emptyStats() }, elapsed_ms: 1, exit_code: 0, interrupted: false });
      await rec.writeLocal(dir);
    }
    expect(await reportCommand('20261126T09', { recordDir: dir, out: path.join(dir, 'x.html') })).toBe(1);
    expect(err.join('')).toContain("run id '20261126T09' matches 2 runs");
    expect(await reportCommand('20261126T090000000-b', { recordDir: dir, out: path.join(dir, 'x.html') })).toBe(0);
    expect(out.join('')).toContain(`run report of 20261126T090000000-bbbbbb written to ${path.join(dir, 'x.html')}`);
  });
});

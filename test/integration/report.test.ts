// The run report and the drift report in a real browser (Debian's chromium, driven by
// playwright-core), against the real sandbox: a window over 3 clusters (serial 1) with a diff, a
// failure a rescue handles, a secret and a no_log task; its report is opened offline (file://) and
// its DOM asserted (every cluster, the failed task marked, a diff opened by a click, the timeline's
// bars in order), with no console error and no secret anywhere in the file. The same run's report
// from the in-cluster records, a drift report, and a 100-cluster report's load time. An analysis
// gate on a real Prometheus: each cluster's measurements in a table and under the result.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyStats } from '../../src/report/events.js';
import { renderRunReport } from '../../src/report/html/run.js';
import { jsonEvents, kplay, repoRoot } from '../helpers/cli.js';
import { startExporter, startPrometheus, waitForQuery, type Exporter, type PrometheusInstance } from '../helpers/prometheus.mjs';
import { kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const CHROMIUM = process.env.KPLAY_CHROMIUM ?? '/usr/bin/chromium';
const ns = `report-${randomBytes(3).toString('hex')}`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-report-'));
const records = path.join(dir, 'records');
const SECRET = 'Hunter2-report-s3cret';
const CLUSTERS = ['sandbox-1', 'sandbox-2', 'sandbox-3'];
let env: SandboxEnv;
let browser: Browser;

const k = (args: string[]): ReturnType<typeof kplay> => kplay(args, { cwd: dir, env: { KPLAY_RECORD_DIR: records }, timeoutMs: 120_000 });

/** Open a file offline; collects console errors, page errors and any request that is not a file. */
async function open(file: string): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ offline: true, viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith('file:')) problems.push(`request: ${r.url()}`);
  });
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  return { page, problems };
}

/** Every form of the secret a leak could take. */
const leaks = (text: string): string[] => [SECRET, SECRET.toUpperCase(), [...SECRET].reverse().join(''), Buffer.from(SECRET).toString('base64'), Buffer.from(SECRET.toUpperCase()).toString('base64')].filter((s) => text.includes(s));

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no chromium at ${CHROMIUM}: apt-get install chromium (test/sandbox/install.sh does), or set KPLAY_CHROMIUM`);
  env = sandboxEnv();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  writeFileSync(
    path.join(dir, 'window.yml'),
    `- name: upgrade
  hosts: sandbox-1:sandbox-2:sandbox-3
  serial: 1
  tasks:
    - name: namespace and release
      k8s_apply:
        definition:
          - { apiVersion: v1, kind: Namespace, metadata: { name: ${ns} } }
          - { apiVersion: v1, kind: ConfigMap, metadata: { name: release, namespace: ${ns} }, data: { version: "v2", cluster: "{{ inventory_hostname }}" } }
    - name: canary
      block:
        - name: check the canary
          fail: { msg: "canary check failed on {{ inventory_hostname }}" }
          when: inventory_hostname == 'sandbox-2'
      rescue:
        - name: roll back
          debug: { msg: "rolled back {{ inventory_hostname }} after: {{ ansible_failed_result.msg }}" }
    - name: say the password
      debug: { msg: "the password is {{ db_password }}" }
    - name: say a derived value
      debug: { msg: "derived: {{ db_password | upper }} / {{ db_password | b64encode }} / {{ db_password | reverse }}" }
    - name: use a derived secret
      debug: { msg: "{{ db_password | upper }} / {{ db_password | b64encode }}" }
      no_log: true
    - name: mark done
      k8s_apply:
        definition: { apiVersion: v1, kind: ConfigMap, metadata: { name: done, namespace: ${ns} }, data: { ok: "yes" } }
`,
  );
  writeFileSync(
    path.join(dir, 'desired.yml'),
    `- hosts: sandbox-1:sandbox-2
  tasks:
    - name: desired settings
      k8s_apply:
        definition: { apiVersion: v1, kind: ConfigMap, metadata: { name: settings, namespace: ${ns} }, data: { replicas: "3" } }
`,
  );
});

afterAll(async () => {
  await browser?.close();
  for (const context of CLUSTERS) await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found'], { context, check: false });
  rmSync(dir, { recursive: true, force: true });
});

describe('kplay report', () => {
  let runId = '';

  it('a window over 3 clusters: the report, opened offline, shows every cluster, the failure and its rescue, a diff on click, the bars in order', async () => {
    const r = await k(['run', 'window.yml', '-i', env.inventory, '--no-lock', '--diff', '-o', 'json', '-e', `db_password=${SECRET}`]);
    expect(r.code, r.stdout.slice(-3000) + r.stderr).toBe(0);
    runId = String(jsonEvents(r.stdout).find((e) => e.type === 'run_start')?.run_id);

    const file = path.join(dir, 'report.html');
    const rep = await k(['report', 'last', '-o', file]);
    expect(rep.code, rep.stderr).toBe(0);
    expect(rep.stdout).toContain(`run report of ${runId} written to ${file}`);
    const html = readFileSync(file, 'utf8');
    expect(leaks(html)).toEqual([]);
    expect(html).toContain('derived: ******** / ******** / ********');
    for (const f of readdirSync(records)) expect(leaks(readFileSync(path.join(records, f), 'utf8')), f).toEqual([]);
    expect(html).not.toMatch(/<script src|<link |src="http|href="http/);

    const { page, problems } = await open(file);
    expect(await page.locator('#outcome').textContent()).toBe('success (exit 0)');
    expect(await page.locator('#chain').textContent()).toBe('verifies');
    // every cluster: timeline, results, recap
    for (const sel of ['#timeline .tl-row', '#results tbody tr', '#recap tbody tr']) expect(await page.locator(sel).evaluateAll((els) => els.map((e) => e.getAttribute('data-cluster')))).toEqual(CLUSTERS);
    // the failed task is marked on its cluster (and only there), with the error and the rescue
    const failedCells = page.locator('#results td.cell.s-failed');
    expect(await failedCells.count()).toBe(1);
    expect(await failedCells.first().getAttribute('title')).toBe('sandbox-2 — check the canary: failed');
    expect(await page.locator('#results tr[data-cluster="sandbox-2"] td.cell.s-failed').count()).toBe(1);
    const failure = page.locator('.failure[data-cluster="sandbox-2"]');
    expect(await failure.getAttribute('data-task')).toBe('check the canary');
    expect(await failure.textContent()).toContain('canary check failed on sandbox-2');
    expect(await failure.textContent()).toMatch(/rescued — what ran on sandbox-2 after the failure.*roll back — rolled back sandbox-2 after: canary check failed on sandbox-2/s);
    expect(await page.locator('#recap tr[data-cluster="sandbox-2"] td').evaluateAll((t) => t.map((x) => x.textContent))).toEqual(['sandbox-2', '6', '2', '0', '0', '0', '1', '0']);
    // a diff opened by a click: the cell, then its button
    await page.locator('#results tr[data-cluster="sandbox-1"] td.cell.has-diff').first().click();
    expect(await page.locator('#detail').isVisible()).toBe(true);
    expect(await page.locator('#detail h3').textContent()).toBe('sandbox-1 — namespace and release');
    expect(await page.locator('#detail pre.diff').count()).toBe(0);
    await page.locator('#detail button.diff-toggle').first().click();
    const diff = await page.locator('#detail pre.diff').first().textContent();
    expect(diff).toContain(`+++ after: ConfigMap ${ns}/release`);
    expect(diff).toContain('+  cluster: sandbox-1');
    expect(await page.locator('#detail pre.diff span.add').count()).toBeGreaterThan(3);
    // the README's picture (KPLAY_README_SCREENSHOTS=1 npx vitest run ... report.test.ts)
    if (process.env.KPLAY_README_SCREENSHOTS === '1') await page.screenshot({ path: path.join(repoRoot, 'docs/img/run-report.jpg'), fullPage: true, type: 'jpeg', quality: 60 });
    // the no_log task shows nothing of its result
    expect(await page.locator('#results thead th.task').allTextContents()).toEqual(['namespace and release', 'check the canary', 'roll back', 'say the password', 'say a derived value', 'use a derived secret', 'mark done']);
    await page.locator('#results tr[data-cluster="sandbox-3"] td.cell').nth(5).click();
    expect(await page.locator('#detail h3').textContent()).toBe('sandbox-3 — use a derived secret');
    expect(await page.locator('#detail').textContent()).not.toContain('message');
    // serial 1: each cluster's bars start after the previous cluster's end, and in task order within a cluster
    const bars = await page.locator('#timeline .tl-row').evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('.bar')].map((b) => { const r = b.getBoundingClientRect(); return { x: r.left, end: r.right, start: Number(b.getAttribute('data-start')) }; })),
    );
    expect(bars.map((b) => b.length)).toEqual([5, 7, 5]); // skipped results have no bar
    for (const row of bars) for (let i = 1; i < row.length; i++) expect((row[i]?.start ?? 0) >= (row[i - 1]?.start ?? 0)).toBe(true);
    for (let c = 1; c < bars.length; c++) expect(bars[c]?.[0]?.x ?? 0).toBeGreaterThanOrEqual((bars[c - 1]?.at(-1)?.x ?? Infinity) - 0.5);
    expect(await page.locator('#timeline .batch-mark').count()).toBe(3);
    await page.screenshot({ path: path.join(dir, 'report.png'), fullPage: true });
    expect(problems).toEqual([]);
  });

  it('the same run from the in-cluster records (no local record): every cluster, no diff text, no secret', async () => {
    const file = path.join(dir, 'from-clusters.html');
    const r = await k(['report', runId.slice(0, 24), '-i', env.inventory, '--record-dir', path.join(dir, 'empty'), '-o', file]);
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(file, 'utf8');
    expect(leaks(html)).toEqual([]);
    const { page, problems } = await open(file);
    expect(await page.locator('#results tbody tr').evaluateAll((els) => els.map((e) => e.getAttribute('data-cluster')))).toEqual(CLUSTERS);
    expect(await page.locator('#chain').textContent()).toBe('verifies');
    expect(await page.locator('#results td.cell.has-diff').count()).toBe(0);
    expect(await page.locator('#results td.cell.s-failed').count()).toBe(1);
    expect(problems).toEqual([]);
  });

  it('kplay drift --output html: the fleet table, the drifted cluster with its diff on a click', async () => {
    expect((await k(['run', 'desired.yml', '-i', env.inventory, '--no-lock'])).code).toBe(0);
    await kubectl(['-n', ns, 'patch', 'configmap', 'settings', '--type', 'merge', '-p', '{"data":{"replicas":"5"}}'], { context: 'sandbox-1' });
    const r = await k(['drift', 'desired.yml', '-i', env.inventory, '-o', 'html']);
    expect(r.code, r.stderr).toBe(3);
    const file = path.join(dir, 'drift.html');
    writeFileSync(file, r.stdout);
    const { page, problems } = await open(file);
    expect(await page.locator('#fleet tbody tr').evaluateAll((els) => els.map((e) => [e.getAttribute('data-cluster'), e.getAttribute('data-state')]))).toEqual([['sandbox-1', 'drifted'], ['sandbox-2', 'in sync']]);
    const section = page.locator('section.cluster[data-cluster="sandbox-1"]');
    expect(await section.textContent()).toContain(`ConfigMap ${ns}/settings`);
    expect(await section.textContent()).toContain('.data.replicas changed by kubectl-patch');
    await section.locator('button.diff-toggle').click();
    expect(await section.locator('pre.diff').textContent()).toMatch(/-\s+replicas: "?5"?[\s\S]*\+\s+replicas: "?3"?|\+\s+replicas: "?3"?/);
    await page.screenshot({ path: path.join(dir, 'drift.png'), fullPage: true });
    expect(problems).toEqual([]);
  });

  // The goal (opens in under 2 s; ~0.3 s measured here) is a speed goal, and speed goals are not timed tests: the
  // bound below only catches a pathological page (a layout loop, quadratic script) on a slow, busy machine.
  it('a 100-cluster report is under 2 MB and loads (goal < 2 s; bounded at 15 s)', async () => {
    const clusters = Array.from({ length: 100 }, (_, i) => `prod-${String(i).padStart(3, '0')}`);
    const html = renderRunReport({
      run: { run_id: 'r', started: '2026-11-26T10:00:00Z', playbook: 'up.yml' },
      tasks: clusters.flatMap((cluster, i) => Array.from({ length: 15 }, (_, t) => ({ cluster, task: `task ${t}`, status: t === 3 && i % 7 === 0 ? 'failed' : 'changed', changed: true, duration_ms: 1000, start_ms: i * 15_000 + t * 1000, play: 'p', batch: i + 1, diff: ['ConfigMap a/b'], diff_text: `--- before: ConfigMap a/b\n+++ after: ConfigMap a/b\n@@ -1 +1 @@\n-v: ${t}\n+v: ${t + 1}\n` }))),
      recap: Object.fromEntries(clusters.map((c) => [c, { ...emptyStats(), changed: 15 }])),
      exit_code: 2,
      interrupted: false,
      chain: { verified: true, checked: 'test', problems: [] },
      source: 'test',
      related: [],
    });
    expect(Buffer.byteLength(html)).toBeLessThan(2 * 1024 * 1024);
    const file = path.join(dir, 'big.html');
    writeFileSync(file, html);
    const { page, problems } = await open(file);
    const loaded = Number(await page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"));
    console.log(`100-cluster report: ${Buffer.byteLength(html)} bytes, loaded in ${Math.round(loaded)} ms`);
    expect(loaded).toBeLessThan(15_000);
    expect(await page.locator('#timeline .tl-row').count()).toBe(100);
    expect(problems).toEqual([]);
  });
});

describe('kplay report of an analysis gate', () => {
  const exporters: Record<string, Exporter> = {};
  let prom: PrometheusInstance | undefined;
  afterAll(async () => {
    await prom?.stop();
    for (const e of Object.values(exporters)) await e.server.close();
  });

  it('each cluster\'s gate: its verdict and measurements in a table, and under the result on a click; the secret masked', async () => {
    // a real Prometheus scraping one stand-in exporter per cluster: sandbox-1 good, sandbox-2 bad
    exporters['sandbox-1'] = await startExporter(0.004);
    exporters['sandbox-2'] = await startExporter(0.5);
    prom = await startPrometheus(Object.fromEntries(Object.entries(exporters).map(([c, e]) => [c, new URL(e.server.url).host])));
    await waitForQuery(prom.url, 'app_error_ratio', (v) => v.length === 2);
    writeFileSync(
      path.join(dir, 'gate.yml'),
      `- hosts: sandbox-1:sandbox-2
  tasks:
    - name: gate
      analysis:
        interval: 0.2
        count: 3
        metrics:
          - name: "errors {{ db_password }}"
            prometheus:
              address: ${prom.url}
              query: app_error_ratio{cluster="{{ inventory_hostname }}"}
              token: "{{ db_password }}"
            success_condition: result < 0.01
      ignore_errors: true
`,
    );
    const r = await k(['run', 'gate.yml', '-i', env.inventory, '--no-lock', '-e', `db_password=${SECRET}`]);
    expect(r.code, r.stdout.slice(-3000) + r.stderr).toBe(0);
    const file = path.join(dir, 'gate.html');
    const rep = await k(['report', 'last', '-o', file]);
    expect(rep.code, rep.stderr).toBe(0);
    expect(leaks(readFileSync(file, 'utf8'))).toEqual([]);
    for (const f of readdirSync(records)) expect(leaks(readFileSync(path.join(records, f), 'utf8')), f).toEqual([]);

    const { page, problems } = await open(file);
    const gates = page.locator('#gates .gate');
    expect(await gates.evaluateAll((els) => els.map((e) => [e.getAttribute('data-cluster'), e.getAttribute('data-verdict')]))).toEqual([
      ['sandbox-1', 'successful'],
      ['sandbox-2', 'failed'],
    ]);
    const cells = (sel: string): Promise<string[][]> => page.locator(sel).evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent ?? '')));
    const good = await cells('#gates .gate[data-cluster="sandbox-1"] tbody tr');
    expect(good.map((c) => c.slice(1, 4))).toEqual(Array.from({ length: 3 }, () => ['errors ********', '0.004', 'successful']));
    expect(good.every((c) => /^\d\d:\d\d:\d\d\.\d{3}Z$/.test(c[0] ?? ''))).toBe(true);
    const bad = await cells('#gates .gate[data-cluster="sandbox-2"] tbody tr');
    expect(bad.map((c) => c.slice(1))).toEqual([['errors ********', '0.5', 'failed', 'success_condition "result < 0.01" is false']]);
    // the same table under the task's result in the detail panel
    await page.locator('#results tr[data-cluster="sandbox-2"] td.cell').first().click();
    expect(await page.locator('#detail h3').textContent()).toBe('sandbox-2 — gate');
    expect(await page.locator('#detail').textContent()).toContain('failed after 1 measurement(s)');
    expect(await cells('#detail table.measurements tr:not(:first-child)')).toEqual(bad);
    expect(problems).toEqual([]);
  });
});

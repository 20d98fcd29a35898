// The analysis gate's Kubernetes signals on the sandbox (kwok simulates the pods; the test
// patches pod status through the status subresource and creates Warning events itself, which kwok
// leaves alone). A real `kplay run`: a release applied and registered, gated with
// `kubernetes: {from: "{{ release }}"}` — healthy, then with a crash-looping pod; the window starts
// when the batch started (the engine's ModuleContext.batchStarted), and the measurements are in
// the `--output json` events. Then the module against the same objects: Warning events of the
// pods' owners, missing objects, and readiness lost between two measurements. No fixed sleeps:
// the second measurement is taken after the first one's condition was evaluated, and the test
// changes the pod exactly then.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import analysis, { type AnalysisResult } from '../../modules/analysis.js';
import type { ModuleResult } from '../../src/core/module.js';
import { makeCtx, runModule } from '../helpers/ctx.js';
import { jsonEvents, kplay } from '../helpers/cli.js';
import { kubectl, sandboxEnv } from '../sandbox/env.js';

const cluster = 'sandbox-3';
const ns = `signals-${Math.random().toString(16).slice(2, 8)}`;
let tmp: string;
let kubeconfig: string;

beforeAll(() => {
  kubeconfig = sandboxEnv().kubeconfig;
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-signals-'));
});
afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: cluster, check: false });
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

type Signals = { objects: number; missing: number; pods: number; ready: number; ready_flapped: number; restarts: number; crash_looping: number; warning_events: number; healthy: boolean; details: string[] };
const data = (r: ModuleResult<AnalysisResult>): AnalysisResult => (r as { data: AnalysisResult }).data;
const signals = (r: ModuleResult<AnalysisResult>, i: number): Signals => data(r).measurements[i]?.value as Signals;

async function podsOf(): Promise<{ name: string; ready: number; conditions: { type: string }[] }[]> {
  const r = await kubectl(['get', 'pods', '-n', ns, '-l', 'app=web', '-o', 'json'], { context: cluster });
  const items = (JSON.parse(r.stdout) as { items: { metadata: { name: string }; status: { conditions: { type: string }[] } }[] }).items;
  return items.map((p) => ({ name: p.metadata.name, conditions: p.status.conditions, ready: p.status.conditions.findIndex((c) => c.type === 'Ready') })).sort((a, b) => a.name.localeCompare(b.name));
}

const stamp = (d: Date): string => d.toISOString().replace(/\.\d+Z$/, 'Z');

describe('analysis: Kubernetes signals of a release', () => {
  it('kplay run: a healthy release passes `from: "{{ release }}"`; a crash-looping pod fails it; measurements in --output json', async () => {
    const playbook = path.join(tmp, 'signals.yml');
    const gate = (register: string, extra: string[] = []) => [
      `    - name: ${register} gate`,
      '      analysis:',
      '        interval: 0.3',
      '        count: 2',
      '        metrics:',
      '          - name: pods',
      '            kubernetes: { from: "{{ release }}" }',
      '            success_condition: result.healthy',
      `      register: ${register}`,
      ...extra,
    ];
    const patch = JSON.stringify([
      { op: 'replace', path: '/status/containerStatuses/0/restartCount', value: 2 },
      { op: 'replace', path: '/status/containerStatuses/0/state', value: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting failed container' } } },
    ]);
    writeFileSync(
      playbook,
      [
        `- hosts: ${cluster}`,
        '  gather_facts: false',
        '  tasks:',
        '    - name: release',
        '      k8s_apply:',
        '        wait: true',
        '        wait_timeout: 120',
        '        definition:',
        `          - { apiVersion: v1, kind: Namespace, metadata: { name: ${ns} } }`,
        '          - apiVersion: apps/v1',
        '            kind: Deployment',
        `            metadata: { name: web, namespace: ${ns} }`,
        '            spec:',
        '              replicas: 2',
        '              selector: { matchLabels: { app: web } }',
        '              template:',
        '                metadata: { labels: { app: web } }',
        '                spec: { containers: [{ name: app, image: nginx }] }',
        '      register: release',
        ...gate('good'),
        `    - k8s_info: { kind: Pod, namespace: ${ns}, label_selectors: [app=web] }`,
        '      register: pods',
        '    - name: crash one pod',
        `      command: kubectl --kubeconfig ${kubeconfig} --context ${cluster} -n ${ns} patch pod {{ (pods.resources | map(attribute='metadata.name') | sort | first) }} --subresource=status --type=json -p '${patch}'`,
        ...gate('bad', ['      ignore_errors: true']),
        '    - debug:',
        '        msg: "good={{ good.verdict }} window={{ good.since < good.started }} pods={{ good.measurements[-1].value.pods }}/{{ good.measurements[-1].value.ready }} bad={{ bad.verdict }} restarts={{ bad.measurements[0].value.restarts }} crash={{ bad.measurements[0].value.crash_looping }}"',
      ].join('\n'),
    );
    const r = await kplay(['run', playbook, '-i', sandboxEnv().inventory, '--no-lock', '--output', 'json'], { timeoutMs: 200_000 });
    const out = r.stdout + r.stderr;
    expect(r.code, out.slice(-4000)).toBe(0);
    expect(out).toContain('good=successful window=True pods=2/2 bad=failed restarts=2 crash=1');
    const results = jsonEvents(r.stdout).filter((e) => e.type === 'task_result' && e.module === 'analysis');
    expect(results.map((e) => [e.task, e.status, e.ignored ?? false])).toEqual([
      ['good gate', 'ok', false],
      ['bad gate', 'failed', true],
    ]);
    const bad = results[1]?.data as AnalysisResult;
    expect(bad.verdict).toBe('failed');
    expect(bad.measurements).toHaveLength(1);
    expect(bad.measurements[0]).toMatchObject({ metric: 'pods', verdict: 'failed' });
    expect(bad.measurements[0]?.reason).toMatch(/^success_condition "result.healthy" is false \(Pod signals-\w+\/web-[\w-]+: container app restarted 2 time\(s\); Pod .*: container app in CrashLoopBackOff\)$/);
    expect(results[1]?.msg).toMatch(/^analysis failed after 1 measurement\(s\) \(pods: 1 failed measurement\(s\) exceed failure_limit 0; last: success_condition "result.healthy" is false \(Pod .*CrashLoopBackOff\)\)/);
    expect(Date.parse(bad.measurements[0]?.at ?? '')).toBeGreaterThan(Date.parse(bad.since));
    const details = (bad.measurements[0]?.value as Signals).details;
    expect(details).toEqual(expect.arrayContaining([expect.stringMatching(/container app restarted 2 time\(s\)/), expect.stringMatching(/container app in CrashLoopBackOff/)]));
    expect(bad.metrics[0]).toMatchObject({ name: 'pods', verdict: 'failed', failed: 1 });
  });

  it('Warning events of the pods\' owners since the window started count, older ones do not; a missing workload is reported', async () => {
    const rs = (await kubectl(['get', 'rs', '-n', ns, '-l', 'app=web', '-o', 'jsonpath={.items[0].metadata.name}'], { context: cluster })).stdout;
    expect(rs).toMatch(/^web-/);
    const now = new Date();
    const event = (name: string, when: Date): string =>
      [
        'apiVersion: v1',
        'kind: Event',
        `metadata: { name: ${name}, namespace: ${ns} }`,
        `involvedObject: { apiVersion: apps/v1, kind: ReplicaSet, name: ${rs}, namespace: ${ns} }`,
        'type: Warning',
        'reason: FailedCreate',
        'message: quota exceeded',
        `firstTimestamp: "${stamp(when)}"`,
        `lastTimestamp: "${stamp(when)}"`,
        'count: 1',
        'source: { component: kplay-test }',
      ].join('\n');
    await kubectl(['apply', '-f', '-'], { context: cluster, input: event('old-failedcreate', new Date(now.getTime() - 3_600_000)) });
    await kubectl(['apply', '-f', '-'], { context: cluster, input: event('new-failedcreate', now) });
    const ctx = { ...makeCtx({ cluster: { name: cluster, context: cluster, kubeconfig } }), batchStarted: new Date(now.getTime() - 5_000) };
    const args = {
      interval: 0.1,
      count: 1,
      metrics: [{ name: 'pods', kubernetes: { namespace: ns, objects: [{ kind: 'Deployment', name: 'web' }, { kind: 'Deployment', name: 'gone' }] }, success_condition: 'result.warning_events == 0 and result.missing == 0' }],
    };
    const r = await runModule(analysis, args, ctx);
    expect(r.status).toBe('failed');
    expect(signals(r, 0)).toMatchObject({ objects: 2, missing: 1, pods: 2, warning_events: 1, crash_looping: 1, healthy: false });
    expect(signals(r, 0).details).toEqual(expect.arrayContaining([`Deployment ${ns}/gone: not found`, `Warning FailedCreate on ReplicaSet ${rs}: quota exceeded`]));
    // the same reason ignored, the gone object dropped: only the crash loop is left
    const ignored = await runModule(analysis, { ...args, metrics: [{ ...args.metrics[0]!, kubernetes: { namespace: ns, objects: [{ kind: 'Deployment', name: 'web' }], ignore_event_reasons: ['FailedCreate'] } }] }, ctx);
    expect(ignored.status).toBe('ok');
    expect(signals(ignored, 0)).toMatchObject({ warning_events: 0, missing: 0, crash_looping: 1 });
  });

  it('readiness must hold between measurements: a pod that lost and regained readiness in between fails the second one', async () => {
    const pods = await podsOf();
    const calm = pods[1]!; // the pod the first test did not touch
    const base = makeCtx({ cluster: { name: cluster, context: cluster, kubeconfig } });
    let evaluated = 0;
    const ctx = {
      ...base,
      // after the first measurement was judged, the pod goes unready and ready again (a new Ready transition)
      evalCondition: async (cond: string, extra?: Record<string, unknown>): Promise<boolean> => {
        const ok = await base.evalCondition(cond, extra);
        if (++evaluated === 1) {
          const later = stamp(new Date(Date.now() + 60_000));
          await kubectl(['patch', 'pod', calm.name, '-n', ns, '--subresource=status', '--type=json', '-p', JSON.stringify([{ op: 'replace', path: `/status/conditions/${calm.ready}/lastTransitionTime`, value: later }])], { context: cluster });
        }
        return ok;
      },
    };
    const r = await runModule(analysis, { interval: 0.1, count: 3, metrics: [{ name: 'ready', kubernetes: { namespace: ns, label_selector: 'app=web' }, success_condition: 'result.ready == result.pods and result.ready_flapped == 0' }] }, ctx);
    expect(r.status).toBe('failed');
    expect(data(r).measurements.map((m) => m.verdict)).toEqual(['successful', 'failed']);
    expect(signals(r, 1)).toMatchObject({ pods: 2, ready: 2, ready_flapped: 1 });
    expect(signals(r, 1).details).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`Pod ${ns}/${calm.name}: lost readiness between measurements`))]));
  });

  it('no pod matching a label selector is no data: inconclusive, or what no_data says', async () => {
    const ctx = makeCtx({ cluster: { name: cluster, context: cluster, kubeconfig } });
    const metric = { name: 'none', kubernetes: { namespace: ns, label_selector: 'app=nothing' }, success_condition: 'result.healthy' };
    const r = await runModule(analysis, { interval: 0.1, count: 1, metrics: [metric] }, ctx);
    expect(r.status).toBe('failed');
    expect(data(r).verdict).toBe('inconclusive');
    expect(data(r).measurements[0]?.reason).toMatch(/no data: no pods match app=nothing/);
    expect((await runModule(analysis, { interval: 0.1, count: 1, metrics: [{ ...metric, no_data: 'successful' }] }, ctx)).status).toBe('ok');
  });
});

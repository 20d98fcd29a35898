// The fleet drift report built from a check-mode run's events: each drifted thing once per cluster
// with the tasks that manage it (a check-mode plan task and the upgrade it guards, two k8s_apply
// sets sharing an object), counted once; text, JSON-ready reports and JUnit. Against the sandbox:
// test/integration/drift-once.test.ts.
import { describe, expect, it } from 'vitest';
import { DriftCollector, driftText } from '../../src/report/drift-report.js';
import { driftJunit } from '../../src/report/drift-junit.js';
import type { RunEvent } from '../../src/report/events.js';

const scaled = { path: '.spec.replicas', change: 'changed' as const, manager: 'kubectl', operation: 'Update', kplay_owns: false };
const deploymentDrift = { kind: 'Deployment', apiVersion: 'apps/v1', name: 'web', namespace: 'shop', action: 'update' as const, fields: [scaled], hidden: [{ ...scaled, path: '.metadata.labels.team', change: 'added' as const, rule: 'drift_ignore: kind=Deployment' }] };
const deploymentDiff = { label: 'Deployment shop/web', before: 'replicas: 5\n', after: 'replicas: 2\n' };
const releaseObjects = [{ kind: 'ConfigMap', name: 'web', namespace: 'shop' }, { kind: 'Deployment', name: 'web', namespace: 'shop' }, { kind: 'Service', name: 'web', namespace: 'shop' }];

function result(task: string, o: Partial<Extract<RunEvent, { type: 'task_result' }>> = {}): RunEvent {
  return { type: 'task_result', task, cluster: 'c1', status: 'changed', duration_ms: 1, ...o };
}

const planMsg = 'would upgrade shop/web: live drift: Deployment shop/web (.spec.replicas by kubectl)';
const events: RunEvent[] = [
  { type: 'play_start', play: 'p', hosts: 'all', clusters: ['c1', 'c2'], batch: 1, batches: 1 },
  result('Plan the release', { msg: planMsg, data: { objects: releaseObjects, drift: [deploymentDrift] }, diff: [deploymentDiff] }),
  result('Upgrade the release', { msg: planMsg, data: { objects: releaseObjects, drift: [deploymentDrift] }, diff: [deploymentDiff] }),
  result('settings', { msg: '1 would be configured', data: { resources: [{ kind: 'ConfigMap', apiVersion: 'v1', name: 'shared', namespace: 'shop' }], drift: [{ kind: 'ConfigMap', apiVersion: 'v1', name: 'shared', namespace: 'shop', action: 'update', fields: [{ ...scaled, path: '.data.mode' }], hidden: [] }] }, diff: [{ label: 'ConfigMap shop/shared', before: 'a', after: 'b' }] }),
  result('settings', { item: 'second', msg: '1 would be configured', data: { resources: [{ kind: 'ConfigMap', apiVersion: 'v1', name: 'shared', namespace: 'shop' }, { kind: 'ConfigMap', apiVersion: 'v1', name: 'web', namespace: 'shop' }], drift: [{ kind: 'ConfigMap', apiVersion: 'v1', name: 'shared', namespace: 'shop', action: 'update', fields: [{ ...scaled, path: '.data.mode' }, { ...scaled, path: '.data.extra', change: 'added' }], hidden: [] }] }, diff: [{ label: 'ConfigMap shop/shared', before: 'a', after: 'b' }] }),
  result('settings', { loop_summary: true, msg: 'loop' }),
  result('Drain', { msg: 'would drain srv1' }),
  result('check', { status: 'ok', cluster: 'c2', data: { objects: releaseObjects } }),
  result('broken', { status: 'failed', cluster: 'c2', msg: 'boom' }),
  result('ignored', { status: 'failed', cluster: 'c2', msg: 'fine', ignored: true }),
];

function reports(): ReturnType<DriftCollector['reports']> {
  const c = new DriftCollector();
  events.forEach((e) => c.add(e));
  return c.reports();
}

describe('drift report', () => {
  it('reports each drifted object once per cluster, with the tasks that manage it, and counts objects once', () => {
    const r = reports();
    const c1 = r.get('c1');
    expect(c1?.state).toBe('drifted');
    expect(c1?.objects).toBe(4); // release ConfigMap/Deployment/Service + ConfigMap shared
    expect(c1?.drifted_objects).toBe(2);
    expect(c1?.drift.map((d) => [d.object, d.tasks.map((t) => t.task + (t.item ? `/${t.item}` : '')), d.fields.map((f) => f.path), d.diff.length])).toEqual([
      ['Deployment shop/web', ['Plan the release', 'Upgrade the release'], ['.spec.replicas'], 1],
      ['ConfigMap shop/shared', ['settings', 'settings/second'], ['.data.mode', '.data.extra'], 1],
      ['task Drain', ['Drain'], [], 0],
    ]);
    expect(c1?.drift[0]).toMatchObject({ kind: 'Deployment', apiVersion: 'apps/v1', name: 'web', namespace: 'shop', action: 'update' });
    expect(c1?.hidden).toEqual([expect.objectContaining({ object: 'Deployment shop/web', path: '.metadata.labels.team', tasks: ['Plan the release', 'Upgrade the release'] })]);
    const c2 = r.get('c2');
    expect(c2).toMatchObject({ state: 'error', objects: 3, drifted_objects: 0, drift: [], errors: [{ task: 'broken', status: 'failed', msg: 'boom' }] });
  });

  it('text: one block per object, each message and diff once, the table', () => {
    const text = driftText(reports(), { diff: true, explain: true }).join('\n');
    expect(text).toContain('c1: DRIFT in 3 object(s), reported by 5 task(s)');
    expect(text).toContain('  - Deployment shop/web  (tasks: Plan the release; Upgrade the release)');
    expect(text).toContain('  - ConfigMap shop/shared  (tasks: settings; settings (item=second))');
    expect(text).toContain('  - task Drain  (task: Drain)\n      would drain srv1');
    expect(text.split(planMsg)).toHaveLength(2);
    expect(text.split('--- before: Deployment shop/web')).toHaveLength(2);
    expect(text.split('1 would be configured')).toHaveLength(2);
    expect(text).toContain('      ~ .spec.replicas  changed by kubectl (Update); kplay no longer owns it');
    expect(text).toContain('    Deployment shop/web .metadata.labels.team (added by kubectl): drift_ignore: kind=Deployment');
    expect(text).toContain('c2: 1 error(s)\n  ! broken: FAILED: boom');
    expect(text).toMatch(/^c1\s+drifted\s+4\s+2\s+1$/m);
    expect(driftText(reports(), { diff: false, explain: false }).join('\n')).not.toContain('--- before');
  });

  it('JUnit: one failing case per drifted thing, naming its tasks', () => {
    const xml = driftJunit(reports());
    expect(xml).toContain('<testsuite name="c1" tests="3" failures="3" errors="0">');
    expect(xml).toContain('<testcase classname="c1" name="Deployment shop/web"><failure type="drift" message="Deployment shop/web drifted (Plan the release; Upgrade the release)">tasks: Plan the release; Upgrade the release\n');
    expect(xml).toContain('<testsuite name="c2" tests="1" failures="0" errors="1">');
  });

  it('a cluster without drift is in sync', () => {
    const c = new DriftCollector();
    c.add({ type: 'play_start', play: 'p', hosts: 'all', clusters: ['quiet'], batch: 1, batches: 1 });
    c.add(result('check', { status: 'ok', cluster: 'quiet', data: { resources: [{ kind: 'ConfigMap', name: 'a' }] } }));
    expect(c.reports().get('quiet')).toMatchObject({ state: 'in sync', objects: 1, drift: [] });
    expect(driftJunit(c.reports())).toContain('<testcase classname="quiet" name="in sync (1 objects)"/>');
  });
});

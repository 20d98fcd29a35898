// A failed apply says what it wrote (issue 51 item 3): when one object of a set is refused (the
// apiserver rejects it as invalid, or as too large: 413), the objects written before it are real
// changes. The failed task is `changed` with the list of what it wrote (registered `written`,
// named in its message), the recap counts it as ansible-playbook counts a failed+changed result,
// and the run records — local and in the cluster — say the task changed the cluster.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay } from '../helpers/cli.js';
import { kubectl, sandboxEnv } from '../sandbox/env.js';

const CONTEXT = 'sandbox-2';
const ns = `failed-writes-${randomBytes(3).toString('hex')}`;
let tmp: string;
let inventory: string;

beforeAll(() => {
  const env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-failed-writes-'));
  inventory = path.join(tmp, 'inventory.yml');
  writeFileSync(inventory, YAML.stringify({ all: { clusters: { [CONTEXT]: { context: CONTEXT, kubeconfig: env.kubeconfig } } } }));
});

afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  rmSync(tmp, { recursive: true, force: true });
});

const cm = (name: string, data: Record<string, string> = { v: '1' }): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data });
/** A Deployment the apiserver refuses as invalid (422): negative replicas. */
const invalidDeployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'invalid', namespace: ns },
  spec: { replicas: -1, selector: { matchLabels: { app: 'x' } }, template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'x', image: 'x' }] } } },
};

interface TaskLine {
  type: string;
  task?: string;
  status?: string;
  changed?: boolean;
  msg?: string;
}

/** Run `tasks` on the cluster (no lock: other runs may hold it), with JSON events. */
async function runTasks(tag: string, tasks: unknown[]): Promise<{ code: number; out: string; events: Record<string, unknown>[]; runId: string; records: string }> {
  const pb = path.join(tmp, `${tag}.yml`);
  writeFileSync(pb, YAML.stringify([{ hosts: 'all', tasks }]));
  const records = path.join(tmp, `records-${tag}`);
  const r = await kplay(['run', pb, '-i', inventory, '--no-lock', '--record-dir', records, '-o', 'json'], { timeoutMs: 200_000 });
  const events = jsonEvents(r.stdout);
  const runId = String(events.find((e) => e.type === 'run_start')?.run_id ?? '');
  return { code: r.code ?? -1, out: r.stdout + r.stderr, events, runId, records };
}

/** The task lines of the run's local record and of its record in the cluster. */
async function recordTasks(runId: string, records: string): Promise<{ local: TaskLine[]; cluster: TaskLine[] }> {
  const local = readFileSync(path.join(records, `${runId}.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as TaskLine).filter((l) => l.type === 'task');
  const cm = JSON.parse((await kubectl(['-n', 'kplay-system', 'get', 'configmap', `kplay-run-${runId}`.toLowerCase(), '-o', 'json'], { context: CONTEXT })).stdout) as { data: Record<string, string> };
  const rec = JSON.parse(cm.data['record.json'] ?? '{}') as { tasks: TaskLine[] };
  return { local, cluster: rec.tasks };
}

describe('a set of objects of which a later one is refused', () => {
  it('k8s_apply: the failed task is changed, lists the objects written, and the run is recorded in the cluster', async () => {
    const r = await runTasks('apply', [
      { name: 'set', k8s_apply: { definition: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, cm('first'), invalidDeployment] }, register: 'set', ignore_errors: true },
      { name: 'show', debug: { msg: '{{ set.changed }} {{ set.failed }} {{ set.written | map(attribute="name") | sort | join(",") }}' } },
      // a real (not ignored) failure after a write: a 413 from a ConfigMap larger than the apiserver takes
      { name: 'too large', k8s_apply: { definition: [cm('second'), cm('huge', { big: "{{ 'x' * 4000000 }}" })] } },
    ]);
    expect(r.code, r.out).toBe(2);
    const results = r.events.filter((e) => e.type === 'task_result');
    const set = results.find((e) => e.task === 'set');
    expect(set?.status, r.out).toBe('failed');
    expect(set?.changed).toBe(true);
    expect(String(set?.msg)).toMatch(/written before the failure \(2\): created Namespace [\w-]+, created ConfigMap [\w-]+\/first/);
    expect((set?.data as { written?: unknown }).written).toEqual([
      { kind: 'Namespace', apiVersion: 'v1', name: ns, action: 'created' },
      { kind: 'ConfigMap', apiVersion: 'v1', name: 'first', namespace: ns, action: 'created' },
    ]);
    expect(results.find((e) => e.task === 'show')?.msg).toBe(`True True ${ns},first`);
    const large = results.find((e) => e.task === 'too large');
    expect(large?.status, r.out).toBe('failed');
    expect(large?.changed).toBe(true);
    expect(String(large?.msg)).toMatch(/413[^]*written before the failure \(1\): created ConfigMap [\w-]+\/second/);
    // as ansible-playbook counts: an ignored failed+changed result is ok, changed and ignored; a
    // failed+changed one that is not ignored only failed
    const recap = r.events.find((e) => e.type === 'recap') as { clusters: Record<string, Record<string, number>> } | undefined;
    expect(recap?.clusters[CONTEXT]).toMatchObject({ ok: 2, changed: 1, failed: 1, ignored: 1 });
    // the objects are there
    await kubectl(['-n', ns, 'get', 'configmap', 'first', 'second'], { context: CONTEXT });
    const { local, cluster } = await recordTasks(r.runId, r.records);
    for (const lines of [local, cluster]) {
      expect(lines.find((t) => t.task === 'set')).toMatchObject({ status: 'failed', changed: true });
      expect(lines.find((t) => t.task === 'too large')).toMatchObject({ status: 'failed', changed: true });
    }
  });

  it('k8s (kubernetes.core): the definitions written before the failing one are reported with it', async () => {
    await kubectl(['create', 'namespace', ns], { context: CONTEXT, check: false });
    const r = await runTasks('kcore', [{ name: 'set', 'kubernetes.core.k8s': { state: 'present', resource_definition: [cm('kcore-a'), cm('kcore-b'), cm('kcore-bad', { 'not a valid key': 'x' })] } }]);
    expect(r.code, r.out).toBe(2);
    const set = r.events.find((e) => e.type === 'task_result' && e.task === 'set');
    expect(set?.status, r.out).toBe('failed');
    expect(set?.changed).toBe(true);
    expect(String(set?.msg)).toMatch(/Failed to create object[^]*written before the failure \(2\): created ConfigMap [\w-]+\/kcore-a, created ConfigMap [\w-]+\/kcore-b/);
    expect((set?.data as { written?: { name: string }[] }).written?.map((w) => w.name)).toEqual(['kcore-a', 'kcore-b']);
    const { local, cluster } = await recordTasks(r.runId, r.records);
    for (const lines of [local, cluster]) expect(lines.find((t) => t.task === 'set')).toMatchObject({ status: 'failed', changed: true });
  });
});

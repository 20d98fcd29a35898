// lb_switch's Kubernetes providers (k8s_service, ingress_canary, httproute) against the real
// sandbox clusters, through the built CLI (`kplay run -o json`) with the playbooks in
// test/fixtures/lb, plus a few module-level checks with a real ModuleContext.
// Every run uses its own namespace (lb-switch-<random>) on sandbox-1 and a second cluster and deletes
// only what it created (the HTTPRoute CRD only when this file installed it).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import lbSwitch from '../../modules/lb_switch.js';
import { compileSchema } from '../../src/load/schema.js';
import type { ModuleResult } from '../../src/core/module.js';
import { jsonEvents, kplay, repoRoot } from '../helpers/cli.js';
import { makeCtx, runModule } from '../helpers/ctx.js';
import { auditSnapshot, kubectl, sandboxEnv, SANDBOX_ADMIN_USER, type AuditEvent, type SandboxEnv } from '../sandbox/env.js';

const fixtures = path.join(repoRoot, 'test/fixtures/lb');
const ns = `lb-switch-${randomBytes(3).toString('hex')}`;
const CRD = 'httproutes.gateway.networking.k8s.io';
let env: SandboxEnv;
let installedCrd = false;
/** The second cluster (drain / ready, no HTTPRoute CRD): sandbox-2, or sandbox-3 when sandbox-2's node is tainted. */
let other = 'sandbox-2';

/** Writes that persisted something (dry runs are audited as patches too). */
const realWrites = (events: AuditEvent[]): AuditEvent[] => events.filter((e) => !e.requestURI.includes('dryRun='));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function eventually<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
}

interface TaskResult {
  status: string;
  msg?: string;
  data?: Record<string, unknown>;
  diff?: { label: string; before: string; after: string }[];
}

/**
 * Run a fixture playbook on some clusters with `-o json`; returns the exit code and each cluster's
 * lb_switch result. `--no-lock`: the tests only touch their own namespace, and must neither wait
 * for nor block other people's runs holding the (whole-cluster) kplay lock on the shared sandbox.
 */
async function play(playbook: string, vars: Record<string, unknown>, clusters: string[] = ['sandbox-1'], extra: string[] = []): Promise<{ code: number | null; results: Map<string, TaskResult>; out: string }> {
  const r = await kplay(['run', path.join(fixtures, playbook), '-i', env.inventory, '-l', clusters.join(','), '-e', JSON.stringify({ ns, ...vars }), '-o', 'json', '--no-lock', ...extra], { timeoutMs: 200_000 });
  const results = new Map<string, TaskResult>();
  for (const e of jsonEvents(r.stdout)) {
    if (e.type === 'task_result' && typeof e.cluster === 'string') results.set(e.cluster, e as unknown as TaskResult);
  }
  return { code: r.code, results, out: r.stdout + r.stderr };
}

function only(r: { results: Map<string, TaskResult>; out: string }, cluster = 'sandbox-1'): TaskResult {
  const t = r.results.get(cluster);
  if (!t) throw new Error(`no task result for ${cluster}:\n${r.out}`);
  return t;
}

async function jsonpath(context: string, kindName: string, expr: string): Promise<string> {
  return (await kubectl(['-n', ns, 'get', kindName, '-o', `jsonpath=${expr}`], { context })).stdout;
}
const selectorOf = async (context: string, svc = 'web'): Promise<Record<string, string>> =>
  JSON.parse((await jsonpath(context, `service/${svc}`, '{.spec.selector}')) || '{}') as Record<string, string>;
const rvOf = (context: string, kindName: string): Promise<string> => jsonpath(context, kindName, '{.metadata.resourceVersion}');
const annotationsOf = async (name: string): Promise<Record<string, string>> =>
  JSON.parse((await jsonpath('sandbox-1', `ingress/${name}`, '{.metadata.annotations}')) || '{}') as Record<string, string>;
async function readyEndpoints(context: string): Promise<number> {
  const out = await kubectl(['-n', ns, 'get', 'endpointslices', '-l', 'kubernetes.io/service-name=web', '-o', 'json'], { context });
  const list = JSON.parse(out.stdout) as { items: { endpoints?: { conditions?: { ready?: boolean } }[] | null }[] };
  return list.items.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).length;
}
/**
 * Wait until every pod of both colours is Ready again: the sandbox's kwok node sometimes goes
 * NotReady for a moment (its lease updates conflict), and the node controller then marks all its
 * pods NotReady, which would make `min_ready` refuse a switch.
 */
async function podsSettled(context: string, endpoints?: number): Promise<void> {
  await eventually(`web pods ready on ${context}`, async () => {
    const out = await kubectl(['-n', ns, 'get', 'pods', '-l', 'app=web', '-o', 'json'], { context });
    const pods = JSON.parse(out.stdout) as { items: { status?: { conditions?: { type: string; status: string }[] } }[] };
    const ready = pods.items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
    return ready === 5 && (endpoints === undefined || (await readyEndpoints(context)) === endpoints);
  });
}
async function routeRefs(): Promise<{ name: string; weight?: number }[][]> {
  const out = await kubectl(['-n', ns, 'get', `httproute.gateway.networking.k8s.io/web`, '-o', 'json']);
  const route = JSON.parse(out.stdout) as { spec: { rules: { backendRefs: { name: string; weight?: number }[] }[] } };
  return route.spec.rules.map((r) => r.backendRefs.map((b) => ({ name: b.name, ...(b.weight !== undefined ? { weight: b.weight } : {}) })));
}

beforeAll(async () => {
  env = sandboxEnv();
  // HTTPRoute CRD (sandbox-1 only): install it when missing and wait until it is served.
  if ((await kubectl(['get', 'crd', CRD], { check: false })).code !== 0) {
    await kubectl(['apply', '-f', path.join(fixtures, 'httproute-crd.yaml')]);
    installedCrd = true;
  }
  await kubectl(['wait', '--for=condition=Established', `crd/${CRD}`, '--timeout=60s']);
  // The shared sandbox's kwok nodes occasionally get stuck with an `unreachable` taint (pods then
  // never schedule); use the first untainted one of sandbox-2 / sandbox-3 as the second cluster.
  for (const c of ['sandbox-2', 'sandbox-3']) {
    const taints = (await kubectl(['get', 'nodes', '-o', 'jsonpath={.items[*].spec.taints}'], { context: c })).stdout.trim();
    if (!taints) {
      other = c;
      break;
    }
  }
  for (const context of ['sandbox-1', other]) {
    await kubectl(['create', 'namespace', ns], { context });
    await kubectl(['-n', ns, 'apply', '-f', path.join(fixtures, 'app.yaml')], { context });
  }
  await eventually('HTTPRoute served', async () => (await kubectl(['-n', ns, 'apply', '-f', path.join(fixtures, 'route.yaml')], { check: false })).code === 0, 60_000);
  // kwok gives the pods IPs and readiness; the EndpointSlice controller then lists them.
  await Promise.all(
    ['sandbox-1', other].map(async (context) => {
      await kubectl(['-n', ns, 'rollout', 'status', 'deployment/web-blue', 'deployment/web-green', '--timeout=240s'], { context, timeoutMs: 260_000 });
      await eventually(`2 endpoints for web on ${context}`, async () => (await readyEndpoints(context)) === 2);
    }),
  );
});

afterAll(async () => {
  if (!env) return;
  for (const context of ['sandbox-1', other]) await kubectl(['delete', 'namespace', ns, '--wait=false'], { context, check: false });
  if (installedCrd) await kubectl(['delete', 'crd', CRD, '--wait=false'], { check: false });
});

describe('lb_switch k8s_service: blue/green', () => {
  it('check mode shows the selector diff and changes nothing', async () => {
    await podsSettled('sandbox-1', 2);
    const rv = await rvOf('sandbox-1', 'service/web');
    const audit = auditSnapshot(env.cluster('sandbox-1').auditLog);
    const r = await play('service-selector.yml', { color: 'green' }, ['sandbox-1'], ['--check', '--diff']);
    expect(r.code, r.out).toBe(0);
    const t = only(r);
    expect(t.status).toBe('changed');
    expect(t.msg).toMatch(/^would switch Service .*\/web on cluster sandbox-1: selector color: blue → green; endpoints 2 → 3 \(predicted\)/);
    expect(t.diff?.[0]?.before).toContain('color: blue');
    expect(t.diff?.[0]?.after).toContain('color: green');
    expect(t.diff?.[0]?.after).toContain('app: web');
    expect(t.data).toMatchObject({ provider: 'k8s_service', target: `${ns}/web`, previous_selector: { app: 'web', color: 'blue' }, selector: { app: 'web', color: 'green' }, endpoints_before: 2, endpoints_after: 3 });
    expect(await selectorOf('sandbox-1')).toEqual({ app: 'web', color: 'blue' });
    expect(await rvOf('sandbox-1', 'service/web')).toBe(rv);
    await audit.settle();
    expect(realWrites(audit.events({ user: SANDBOX_ADMIN_USER, namespace: ns, resource: 'services' }))).toEqual([]);
  });

  it('refuses to switch to a colour with no ready pods (min_ready) and changes nothing', async () => {
    const r = await play('service-selector.yml', { color: 'purple' });
    expect(r.code).not.toBe(0);
    expect(only(r).msg).toContain(`refusing to switch Service ${ns}/web on cluster sandbox-1 to selector app=web,color=purple: it matches 0 ready pod(s), min_ready is 1; nothing was changed`);
    expect(await selectorOf('sandbox-1')).toEqual({ app: 'web', color: 'blue' });
  });

  it('switches blue → green (other selector keys kept, endpoints followed), and a second run is ok without a write', async () => {
    await podsSettled('sandbox-1');
    const r = await play('service-selector.yml', { color: 'green' });
    expect(r.code, r.out).toBe(0);
    const t = only(r);
    expect(t.status).toBe('changed');
    expect(t.data).toMatchObject({ previous_selector: { app: 'web', color: 'blue' }, selector: { app: 'web', color: 'green' }, endpoints_before: 2, endpoints_after: 3, ready_pods: 3 });
    expect(await selectorOf('sandbox-1')).toEqual({ app: 'web', color: 'green' });
    expect(await readyEndpoints('sandbox-1')).toBe(3);
    // the patch was recorded under the field manager `kplay`
    expect(await jsonpath('sandbox-1', 'service/web', '{.metadata.managedFields[*].manager}')).toContain('kplay');

    const rv = await rvOf('sandbox-1', 'service/web');
    const audit = auditSnapshot(env.cluster('sandbox-1').auditLog);
    const again = await play('service-selector.yml', { color: 'green' });
    expect(again.code, again.out).toBe(0);
    expect(only(again).status).toBe('ok');
    expect(only(again).msg).toMatch(/already in service, selector app=web,color=green \(3 endpoint\(s\)\)/);
    expect(await rvOf('sandbox-1', 'service/web')).toBe(rv);
    await audit.settle();
    expect(audit.events({ user: SANDBOX_ADMIN_USER, namespace: ns, resource: 'services' })).toEqual([]);
  });
});

describe('lb_switch k8s_service: drain / ready one cluster', () => {
  it("drains the second cluster's endpoints by label, leaves sandbox-1 alone, is idempotent, and restores them", async () => {
    await podsSettled(other, 2);
    const before1 = await selectorOf('sandbox-1');
    const drain = await play('service-state.yml', { state: 'drain' }, [other]);
    expect(drain.code, drain.out).toBe(0);
    const t = only(drain, other);
    expect(t.status).toBe('changed');
    expect(t.msg).toMatch(new RegExp(`Service .*/web on cluster ${other}: drained; endpoints 2 → 0$`));
    expect(t.data).toMatchObject({ drained: true, previous_drained: false, endpoints_before: 2, endpoints_after: 0 });
    expect(await selectorOf(other)).toEqual({ app: 'web', color: 'blue', 'kplay.dev/drained': 'true' });
    expect(await readyEndpoints(other)).toBe(0);
    expect(await selectorOf('sandbox-1')).toEqual(before1);

    const rv = await rvOf(other, 'service/web');
    const again = await play('service-state.yml', { state: 'drain' }, [other]);
    expect(again.code, again.out).toBe(0);
    expect(only(again, other)).toMatchObject({ status: 'ok' });
    expect(only(again, other).msg).toContain('already drained');
    expect(await rvOf(other, 'service/web')).toBe(rv);

    await podsSettled(other, 0);
    const check = await play('service-state.yml', { state: 'ready' }, [other], ['--check']);
    expect(check.code, check.out).toBe(0);
    expect(only(check, other)).toMatchObject({ status: 'changed', data: { endpoints_after: 2 } });
    expect(await rvOf(other, 'service/web')).toBe(rv);

    const ready = await play('service-state.yml', { state: 'ready' }, [other]);
    expect(ready.code, ready.out).toBe(0);
    expect(only(ready, other).msg).toMatch(/back in service; endpoints 0 → 2$/);
    expect(await selectorOf(other)).toEqual({ app: 'web', color: 'blue' });
    expect(await readyEndpoints(other)).toBe(2);
  });

  it('fails clearly for a missing Service (name, namespace, cluster)', async () => {
    const r = await play('service-selector.yml', { color: 'green', svc: 'nope' }, [other]);
    expect(r.code).not.toBe(0);
    expect(only(r, other)).toMatchObject({ status: 'failed', msg: `lb_switch (k8s_service): Service 'nope' not found in namespace '${ns}' on cluster ${other}` });
  });
});

describe('lb_switch ingress_canary', () => {
  it('sets canary + weight, is idempotent, check mode changes nothing', async () => {
    const r = await play('canary.yml', { weight: 10 });
    expect(r.code, r.out).toBe(0);
    expect(only(r)).toMatchObject({ status: 'changed', data: { previous_weight: null, weight: 10, previous_canary: false, target: `${ns}/web-canary` } });
    expect(only(r).msg).toContain('canary weight unset → 10%');
    let ann = await annotationsOf('web-canary');
    expect(ann['nginx.ingress.kubernetes.io/canary']).toBe('true');
    expect(ann['nginx.ingress.kubernetes.io/canary-weight']).toBe('10');
    expect(await annotationsOf('web')).not.toHaveProperty('nginx.ingress.kubernetes.io/canary');

    const rv = await rvOf('sandbox-1', 'ingress/web-canary');
    const again = await play('canary.yml', { weight: 10 });
    expect(again.code, again.out).toBe(0);
    expect(only(again)).toMatchObject({ status: 'ok' });
    expect(await rvOf('sandbox-1', 'ingress/web-canary')).toBe(rv);

    const check = await play('canary.yml', { weight: 30 }, ['sandbox-1'], ['--check', '--diff']);
    expect(check.code, check.out).toBe(0);
    expect(only(check)).toMatchObject({ status: 'changed', data: { previous_weight: 10, weight: 30 } });
    expect(only(check).diff?.[0]?.before).toContain('nginx.ingress.kubernetes.io/canary-weight: "10"');
    expect(only(check).diff?.[0]?.after).toContain('nginx.ingress.kubernetes.io/canary-weight: "30"');
    expect(await rvOf('sandbox-1', 'ingress/web-canary')).toBe(rv);

    const set = await play('canary.yml', { weight: 30 });
    expect(only(set).msg).toContain('canary weight 10% → 30%');
    ann = await annotationsOf('web-canary');
    expect(ann['nginx.ingress.kubernetes.io/canary-weight']).toBe('30');
  });

  it('refuses to make the only Ingress of a host a canary, and names a missing Ingress', async () => {
    const lonely = await play('canary.yml', { weight: 5, ingress: 'lonely' });
    expect(lonely.code).not.toBe(0);
    expect(only(lonely).msg).toContain('no other (main) Ingress in its namespace serves lonely.example');
    expect(await annotationsOf('lonely')).not.toHaveProperty('nginx.ingress.kubernetes.io/canary');
    const missing = await play('canary.yml', { weight: 5, ingress: 'ghost' });
    expect(only(missing).msg).toBe(`lb_switch (ingress_canary): Ingress 'ghost' not found in namespace '${ns}' on cluster sandbox-1`);
  });

  it('rejects a weight above the canary-weight-total (100 by default)', async () => {
    const r = await play('canary.yml', { weight: 101 });
    expect(r.code).not.toBe(0);
    expect(only(r).msg).toMatch(/weight 101 is above 100/);
  });
});

describe('lb_switch httproute', () => {
  it('sets a backend weight in every rule using it, is idempotent, check mode changes nothing', async () => {
    const rv0 = await rvOf('sandbox-1', 'httproute.gateway.networking.k8s.io/web');
    const check = await play('httproute.yml', { backend: 'web-v2', weight: 25 }, ['sandbox-1'], ['--check', '--diff']);
    expect(check.code, check.out).toBe(0);
    expect(only(check)).toMatchObject({ status: 'changed', data: { previous_weight: 0, weight: 25 } });
    expect(only(check).diff?.[0]?.after).toContain('weight: 25');
    expect(await rvOf('sandbox-1', 'httproute.gateway.networking.k8s.io/web')).toBe(rv0);

    const r = await play('httproute.yml', { backend: 'web-v2', weight: 25 });
    expect(r.code, r.out).toBe(0);
    expect(only(r)).toMatchObject({
      status: 'changed',
      data: { backend: 'web-v2', previous_weight: 0, weight: 25, rules: [{ rule: 0, backend_ref: 1, previous_weight: 0, weight: 25, traffic_percent: 20 }] },
    });
    expect(only(r).msg).toContain('backend web-v2 weight 0 → 25 in rule 0 (20% of the traffic)');
    expect(await routeRefs()).toEqual([
      [{ name: 'web-v1', weight: 100 }, { name: 'web-v2', weight: 25 }],
      [{ name: 'web-v1' }, { name: 'api', weight: 1 }],
    ]);
    const rv = await rvOf('sandbox-1', 'httproute.gateway.networking.k8s.io/web');
    const again = await play('httproute.yml', { backend: 'web-v2', weight: 25 });
    expect(only(again)).toMatchObject({ status: 'ok' });
    expect(await rvOf('sandbox-1', 'httproute.gateway.networking.k8s.io/web')).toBe(rv);
  });

  it('with rule: changes only that rule (a missing weight counts as 1)', async () => {
    const r = await play('httproute-rule.yml', { backend: 'web-v1', weight: 3, rule: 1 });
    expect(r.code, r.out).toBe(0);
    expect(only(r)).toMatchObject({ status: 'changed', data: { previous_weight: 1, weight: 3, rules: [{ rule: 1, traffic_percent: 75 }] } });
    expect(only(r).msg).toContain('weight 1 (default) → 3 in rule 1');
    expect(await routeRefs()).toEqual([
      [{ name: 'web-v1', weight: 100 }, { name: 'web-v2', weight: 25 }],
      [{ name: 'web-v1', weight: 3 }, { name: 'api', weight: 1 }],
    ]);
    const bad = await play('httproute-rule.yml', { backend: 'web-v2', weight: 3, rule: 1 });
    expect(only(bad).msg).toContain(`unknown backend 'web-v2' in rule 1 of HTTPRoute ${ns}/web on cluster sandbox-1; known backendRefs: web-v1, api`);
  });

  it('fails for an unknown backend listing the known backendRefs, and for a missing route', async () => {
    const rv = await rvOf('sandbox-1', 'httproute.gateway.networking.k8s.io/web');
    const r = await play('httproute.yml', { backend: 'web-v3', weight: 5 });
    expect(r.code).not.toBe(0);
    expect(only(r).msg).toBe(
      `lb_switch (httproute): unknown backend 'web-v3' in HTTPRoute ${ns}/web on cluster sandbox-1; known backendRefs: web-v1 (rules 0, 1), web-v2 (rule 0), api (rule 1)`,
    );
    expect(await rvOf('sandbox-1', 'httproute.gateway.networking.k8s.io/web')).toBe(rv);
    const missing = await play('httproute.yml', { backend: 'web-v1', weight: 5, route: 'ghost' });
    expect(only(missing).msg).toBe(`lb_switch (httproute): HTTPRoute 'ghost' not found in namespace '${ns}' on cluster sandbox-1`);
  });

  it('names the missing CRD on a cluster without Gateway API', async () => {
    const r = await play('httproute.yml', { backend: 'web-v1', weight: 5 }, [other]);
    expect(r.code).not.toBe(0);
    expect(only(r, other).msg).toContain(`cluster ${other} has no kind HTTPRoute (gateway.networking.k8s.io/v1): the Gateway API CRDs`);
  });
});

describe('lb_switch Kubernetes providers at module level', () => {
  const ctxFor = (context: string, over: { checkMode?: boolean; diffMode?: boolean } = {}): ReturnType<typeof makeCtx> =>
    makeCtx({ cluster: { name: context, context, kubeconfig: env.kubeconfig }, ...over });
  const runLb = (args: Record<string, unknown>, ctx: ReturnType<typeof makeCtx>): Promise<ModuleResult> => runModule(lbSwitch, args, ctx);

  it('check-mode drain predicts 0 endpoints with a diff, writes nothing', async () => {
    const rv = await rvOf('sandbox-1', 'service/web');
    const r = await runLb({ provider: 'k8s_service', namespace: ns, service: 'web', state: 'drain', drain_label: { 'example.com/out': 'yes' } }, ctxFor('sandbox-1', { checkMode: true, diffMode: true }));
    expect(r).toMatchObject({ status: 'changed', data: { drained: true, endpoints_after: 0 } });
    expect('diff' in r && r.diff?.[0]?.after).toContain('example.com/out: yes');
    expect(await rvOf('sandbox-1', 'service/web')).toBe(rv);
  });

  it('rejects arguments of other providers and maint for k8s_service', async () => {
    const v = compileSchema(lbSwitch.schema);
    expect(v({ provider: 'k8s_service', namespace: ns, service: 'web', state: 'maint' })).toBe(false);
    expect(v({ provider: 'ingress_canary', namespace: ns, ingress: 'x', weight: '50%' })).toBe(false);
    expect(v({ provider: 'httproute', namespace: ns, route: 'x', backend: 'b', weight: 2_000_000 })).toBe(false);
    const r = await runLb({ provider: 'k8s_service', namespace: ns, service: 'web', state: 'drain', socket: '/x' }, ctxFor('sandbox-1'));
    expect(r).toMatchObject({ status: 'failed', msg: 'lb_switch (k8s_service): `socket` (an argument of haproxy) does not apply to provider k8s_service' });
  });

  it('every documented example (every task of it) is valid', () => {
    const v = compileSchema(lbSwitch.schema);
    for (const ex of lbSwitch.examples) {
      for (const task of YAML.parse(ex.yaml) as Record<string, unknown>[]) {
        expect(v(task.lb_switch), `${ex.title}: ${JSON.stringify(v.errors)}`).toBe(true);
      }
    }
  });
});

// Faults injected by an HTTPS proxy in front of a real sandbox apiserver (test/faults/api-proxy.ts):
// 429 storms with Retry-After and 5xx answers, a connection reset after a write reached the
// apiserver, watches that stay silent or are cut without a final event. Each scenario checks what
// the cluster holds afterwards and how long the run took.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { startApiProxy, type ApiProxy, type Fault, type ProxiedRequest } from '../faults/api-proxy.js';
import { kplay } from '../helpers/cli.js';
import { kubectl, sandboxEnv } from '../sandbox/env.js';

const CONTEXT = 'sandbox-3';
/** A cluster reached directly (not through the proxy), alongside. */
const HEALTHY = 'sandbox-2';
const suffix = Math.random().toString(16).slice(2, 8);
const ns = `fproxy-${suffix}`;
let tmp: string;
let proxy: ApiProxy;
let inventory: string;
let policy: (r: Omit<ProxiedRequest, 'fault' | 'status'>) => Fault = () => ({ kind: 'pass' });

interface Kubeconfig {
  contexts: { name: string; context: { cluster: string; user: string } }[];
  clusters: { name: string; cluster: { server: string } }[];
  users: { name: string; user: { 'client-certificate-data': string; 'client-key-data': string } }[];
}

beforeAll(async () => {
  const env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-fproxy-'));
  const kc = YAML.parse(readFileSync(env.kubeconfig, 'utf8')) as Kubeconfig;
  const ctx = kc.contexts.find((c) => c.name === CONTEXT)?.context;
  const cluster = kc.clusters.find((c) => c.name === ctx?.cluster);
  const user = kc.users.find((u) => u.name === ctx?.user);
  if (!ctx || !cluster || !user) throw new Error(`context ${CONTEXT} not in ${env.kubeconfig}`);
  proxy = await startApiProxy({
    upstream: cluster.cluster.server,
    pkiDir: env.cluster(CONTEXT).pkiDir,
    clientCert: Buffer.from(user.user['client-certificate-data'], 'base64').toString(),
    clientKey: Buffer.from(user.user['client-key-data'], 'base64').toString(),
    policy: (r) => policy(r),
  });
  cluster.cluster.server = `https://127.0.0.1:${proxy.port}`;
  const kubeconfig = path.join(tmp, 'kubeconfig');
  writeFileSync(kubeconfig, YAML.stringify(kc));
  inventory = path.join(tmp, 'inventory.yml');
  writeFileSync(inventory, YAML.stringify({ all: { clusters: { [CONTEXT]: { context: CONTEXT, kubeconfig } } } }));
  await kubectl(['create', 'namespace', ns], { context: CONTEXT });
});

afterAll(async () => {
  await proxy?.close();
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: HEALTHY, check: false });
  rmSync(tmp, { recursive: true, force: true });
});

function playbook(name: string, objects: unknown[], wait: boolean): string {
  const file = path.join(tmp, `${name}.yml`);
  writeFileSync(file, YAML.stringify([{ hosts: 'all', tasks: [{ name: 'apply', k8s_apply: { namespace: ns, definition: objects, wait, wait_timeout: 120 } }] }]));
  return file;
}

/** A Deployment; `minReadySeconds` keeps it unavailable for a while, so a wait on it must watch. */
const deployment = (name: string, minReadySeconds = 0): unknown => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { replicas: 1, minReadySeconds, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } } },
});

/** Non-dry-run writes the apiserver really received for one object. */
const realWrites = (name: string): ProxiedRequest[] => proxy.log.filter((r) => r.fault !== 'status' && r.fault !== 'reset-before' && !r.dryRun && r.method !== 'GET' && r.path.endsWith(`/${name}`));

describe('fault proxy in front of the apiserver', () => {
  it('a storm of 429 (Retry-After: 1) and 503s: every object applied once, the run succeeds', async () => {
    policy = (r) => {
      if (r.watch) return { kind: 'pass' };
      if (r.n % 3 === 0) return { kind: 'status', status: 429, headers: { 'Retry-After': '1' } };
      if (r.method === 'GET' && r.n % 5 === 0) return { kind: 'status', status: 503 };
      return { kind: 'pass' };
    };
    const objects = [...Array.from({ length: 20 }, (_, i) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `storm-${i}` }, data: { i: String(i) } })), deployment('storm-app')];
    const r = await kplay(['run', playbook('storm', objects, true), '-i', inventory, '--no-lock'], { timeoutMs: 200_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const names = (await kubectl(['-n', ns, 'get', 'configmaps', '-o', 'name'], { context: CONTEXT })).stdout;
    for (let i = 0; i < 20; i++) {
      expect(names).toContain(`configmap/storm-${i}`);
      expect(realWrites(`storm-${i}`)).toHaveLength(1); // no duplicate writes
    }
    expect(proxy.log.filter((x) => x.status === 429).length).toBeGreaterThan(3);
  });

  it('a connection reset after an apply reached the apiserver: the idempotent apply is repeated, the object is right', async () => {
    let resets = 0;
    policy = (r) => (!r.dryRun && r.method === 'PATCH' && r.path.endsWith('/reset-me') && resets++ === 0 ? { kind: 'reset-after' } : { kind: 'pass' });
    const r = await kplay(['run', playbook('reset', [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'reset-me' }, data: { v: '2' } }], false), '-i', inventory, '--no-lock'], { timeoutMs: 120_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(resets).toBeGreaterThanOrEqual(1);
    expect(realWrites('reset-me').length).toBe(2); // sent, reset, sent again
    const cm = JSON.parse((await kubectl(['-n', ns, 'get', 'configmap', 'reset-me', '-o', 'json'], { context: CONTEXT })).stdout) as { data: { v: string } };
    expect(cm.data.v).toBe('2');
  });

  it('a connection reset before the write was sent: retried, written exactly once', async () => {
    let resets = 0;
    policy = (r) => (!r.dryRun && r.method === 'PATCH' && r.path.endsWith('/reset-early') && resets++ === 0 ? { kind: 'reset-before' } : { kind: 'pass' });
    const r = await kplay(['run', playbook('reset-early', [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'reset-early' }, data: { v: '1' } }], false), '-i', inventory, '--no-lock'], { timeoutMs: 120_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(resets).toBeGreaterThanOrEqual(1);
    expect(realWrites('reset-early')).toHaveLength(1);
    await kubectl(['-n', ns, 'get', 'configmap', 'reset-early'], { context: CONTEXT });
  });

  describe('a 500 from an admission webhook that timed out, on a server-side apply (issue 51)', () => {
    // what the apiserver answers when a webhook with failurePolicy: Fail does not answer in time (nothing is written)
    const webhookTimeout = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 500, reason: 'InternalError', message: 'Internal error occurred: failed calling webhook "validate.example.com": failed to call webhook: Post "https://validator.example.svc:443/validate?timeout=10s": context deadline exceeded', details: { causes: [{ message: 'failed calling webhook "validate.example.com": failed to call webhook: Post "https://validator.example.svc:443/validate?timeout=10s": context deadline exceeded' }] } });
    const isApply = (r: Omit<ProxiedRequest, 'fault' | 'status'>, name: string): boolean => !r.dryRun && r.method === 'PATCH' && r.path.endsWith(`/${name}`);
    const applyPb = (name: string): string => {
      const file = path.join(tmp, `${name}.yml`);
      writeFileSync(file, YAML.stringify([{ hosts: 'all', tasks: [
        { name: 'apply', k8s_apply: { namespace: ns, definition: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: '1' } } }, register: 'applied' },
        { name: 'show', debug: { msg: 'attempts={{ applied.resources[0].attempts }}' } },
      ] }]));
      return file;
    };

    it('once: applied again (it is idempotent), written once, the result says it took 2 attempts', async () => {
      let failed = 0;
      policy = (r) => (isApply(r, 'webhook-once') && failed++ === 0 ? { kind: 'status', status: 500, body: webhookTimeout } : { kind: 'pass' });
      const r = await kplay(['run', applyPb('webhook-once'), '-i', inventory, '--no-lock', '-v'], { timeoutMs: 120_000 });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(failed).toBe(2);
      expect(realWrites('webhook-once')).toHaveLength(1);
      expect(r.stdout).toContain('attempts=2');
      expect(r.stdout + r.stderr).toContain('ConfigMap ' + ns + '/webhook-once: applied on attempt 2 (the first met 500 InternalError)');
      const cm = JSON.parse((await kubectl(['-n', ns, 'get', 'configmap', 'webhook-once', '-o', 'json'], { context: CONTEXT })).stdout) as { data: { v: string } };
      expect(cm.data.v).toBe('1');
    });

    it('every time: the task fails with the webhook\'s message after the bound of reads (6 attempts)', async () => {
      policy = (r) => (isApply(r, 'webhook-always') ? { kind: 'status', status: 500, body: webhookTimeout } : { kind: 'pass' });
      const r = await kplay(['run', applyPb('webhook-always'), '-i', inventory, '--no-lock'], { timeoutMs: 120_000 });
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(r.stdout).toMatch(/failed calling webhook \\?"validate\.example\.com\\?".*context deadline exceeded/);
      expect(r.stdout).toContain('(6 attempts; the first met 500 InternalError)');
      expect(proxy.log.filter((x) => isApply(x, 'webhook-always'))).toHaveLength(6);
      expect(realWrites('webhook-always')).toHaveLength(0);
    });
  });

  it('a paged LIST whose continue token expired (410 Expired) is read again whole, as client-go\'s pager does (issue 51)', async () => {
    const objects = Array.from({ length: 25 }, (_, i) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `paged-${i}`, labels: { set: 'paged' } }, data: { i: String(i) } }));
    policy = () => ({ kind: 'pass' });
    const setup = await kplay(['run', playbook('paged-setup', objects, false), '-i', inventory, '--no-lock'], { timeoutMs: 120_000 });
    expect(setup.code, setup.stdout + setup.stderr).toBe(0);
    const isList = (r: Omit<ProxiedRequest, 'fault' | 'status'>): boolean => r.method === 'GET' && !r.watch && r.path === `/api/v1/namespaces/${ns}/configmaps`;
    // the apiserver pages by 10 (it may answer fewer items than the limit asked), and the token of page 2 is too old
    const expired = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.', reason: 'Expired', code: 410 });
    policy = (r) => (!isList(r) ? { kind: 'pass' } : r.query.continue ? { kind: 'status', status: 410, body: expired } : r.query.limit ? { kind: 'pass', query: { limit: '10' } } : { kind: 'pass' });
    const pb = path.join(tmp, 'paged.yml');
    writeFileSync(pb, YAML.stringify([{ hosts: 'all', tasks: [
      { name: 'list', k8s_info: { kind: 'ConfigMap', namespace: ns, label_selector: 'set=paged' }, register: 'found' },
      { name: 'show', debug: { msg: 'found {{ found.resources | length }}' } },
    ] }]));
    const before = proxy.log.length;
    const r = await kplay(['run', pb, '-i', inventory, '--no-lock'], { timeoutMs: 120_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('found 25');
    const lists = proxy.log.slice(before).filter(isList);
    expect(lists.map((x) => [x.query.limit !== undefined, x.query.continue !== undefined, x.status])).toEqual([[true, false, 200], [true, true, 410], [false, false, 200]]);
  });

  it('a slow-loris front end (headers, then a byte every 2 s): the cluster fails within the outage bound, naming it and the phase; the other cluster goes on (issue 51)', async () => {
    // the reachability probe passes (the front end answers it), everything after it trickles
    policy = (r) => (r.path === '/version' ? { kind: 'pass' } : { kind: 'slow', intervalMs: 2000 });
    const both = path.join(tmp, 'both.yml');
    const kubeconfig = path.join(tmp, 'kubeconfig');
    writeFileSync(both, YAML.stringify({ all: { clusters: { [CONTEXT]: { context: CONTEXT, kubeconfig }, [HEALTHY]: { context: HEALTHY, kubeconfig } } } }));
    const cm = (name: string): unknown => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { a: '1' } });
    const pb = path.join(tmp, 'loris.yml');
    writeFileSync(pb, YAML.stringify([{ hosts: 'all', tasks: [
      { name: 'first', k8s_apply: { definition: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, cm('loris-first')] } },
      { name: 'second', k8s_apply: { definition: cm('loris-second') } },
    ] }]));
    const started = Date.now();
    const r = await kplay(['run', pb, '-i', both, '--no-lock'], { env: { KPLAY_OUTAGE_SECONDS: '6' }, timeoutMs: 150_000 });
    const took = Date.now() - started;
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.stdout).toContain(`cluster ${CONTEXT} did not answer in time at https://127.0.0.1:${proxy.port}`);
    expect(r.stdout).toMatch(/timeout after \d+ ms reading the response body \(HTTP 200, \d+ bytes in [\d.]+ s: the apiserver, or a proxy or load balancer in front of it, sends it too slowly\) \(kept trying for 6 s; KPLAY_OUTAGE_SECONDS sets how long\)/);
    expect(r.stdout).toMatch(new RegExp(`${HEALTHY}\\s*:\\s*ok=2\\s+changed=2`));
    const names = (await kubectl(['-n', ns, 'get', 'configmaps', '-o', 'name'], { context: HEALTHY })).stdout;
    expect(names).toContain('configmap/loris-first');
    expect(names).toContain('configmap/loris-second');
    // the outage bound (6 s) plus a short try of the run's last writes, not six whole 60 s attempts (366 s)
    expect(took).toBeLessThan(60_000);
    expect(proxy.log.some((x) => x.fault === 'slow')).toBe(true);
  });

  for (const [label, fault] of [
    ['silent watches (accepted, then nothing)', { kind: 'silent' }],
    ['watches cut without a final event', { kind: 'cut', afterMs: 300 }],
  ] as const) {
    it(`${label}: a wait ends within a few seconds of readiness`, async () => {
      policy = (r) => (r.watch ? (fault as Fault) : { kind: 'pass' });
      const name = `w-${fault.kind}`;
      // not available for 3 s after its pod is ready: the wait cannot end on its first read, it must watch
      const r = await kplay(['run', playbook(name, [deployment(name, 3)], true), '-i', inventory, '--no-lock'], { timeoutMs: 150_000 });
      const ended = Date.now();
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const d = JSON.parse((await kubectl(['-n', ns, 'get', 'deployment', name, '-o', 'json'], { context: CONTEXT })).stdout) as { status: { conditions: { type: string; status: string; lastTransitionTime: string }[] } };
      const available = d.status.conditions.find((c) => c.type === 'Available' && c.status === 'True');
      expect(available).toBeDefined();
      // Available's time has 1 s resolution; 5 s bound + 1 s resolution + process exit
      expect(ended - Date.parse(available?.lastTransitionTime ?? '')).toBeLessThan(7500);
      expect(proxy.log.some((x) => x.watch && x.fault === fault.kind)).toBe(true);
    });
  }

  describe('a LIST answer cut short but ended cleanly (half the JSON, Connection: close)', () => {
    const listPb = (): string => {
      const file = path.join(tmp, 'list.yml');
      writeFileSync(file, YAML.stringify([{ hosts: 'all', tasks: [
        { name: 'list', k8s_info: { kind: 'ConfigMap', namespace: ns, label_selector: 'set=trunc' }, register: 'found' },
        { name: 'show', debug: { msg: 'found {{ found.resources | length }}' } },
      ] }]));
      return file;
    };
    const isList = (r: Omit<ProxiedRequest, 'fault' | 'status'>): boolean => r.method === 'GET' && !r.watch && r.path === `/api/v1/namespaces/${ns}/configmaps`;

    beforeAll(async () => {
      const objects = Array.from({ length: 40 }, (_, i) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `trunc-${i}`, labels: { set: 'trunc' } }, data: { i: String(i) } }));
      policy = () => ({ kind: 'pass' });
      const r = await kplay(['run', playbook('trunc-setup', objects, false), '-i', inventory, '--no-lock'], { timeoutMs: 120_000 });
      expect(r.code, r.stdout + r.stderr).toBe(0);
    });

    it('once: the read is asked again and finds all 40', async () => {
      let cut = 0;
      policy = (r) => (isList(r) && cut++ === 0 ? { kind: 'truncate', fraction: 0.5 } : { kind: 'pass' });
      const r = await kplay(['run', listPb(), '-i', inventory, '--no-lock'], { timeoutMs: 120_000 });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain('found 40');
      expect(proxy.log.some((x) => x.fault === 'truncate')).toBe(true);
    });

    it('every time: the task fails saying the answer was cut short, never "found 0"', async () => {
      policy = (r) => (isList(r) ? { kind: 'truncate', fraction: 0.5 } : { kind: 'pass' });
      const r = await kplay(['run', listPb(), '-i', inventory, '--no-lock'], { timeoutMs: 120_000 });
      expect(r.code, r.stdout + r.stderr).not.toBe(0);
      expect(r.stdout).toMatch(/answer to GET \/api\/v1\/namespaces\/[^ ]+\/configmaps was cut short/);
      expect(r.stdout).not.toMatch(/found \d+/);
    });
  });

  it('silent watches: an approval gate ends within seconds of the approval', async () => {
    policy = (r) => (r.watch ? { kind: 'silent' } : { kind: 'pass' });
    const pb = path.join(tmp, 'gate.yml');
    writeFileSync(pb, YAML.stringify([{ hosts: 'all', tasks: [{ name: 'gate', approve: { gate: 'silent-go', timeout: 120 } }] }]));
    // the approver reaches the cluster directly, not through the proxy
    const direct = path.join(tmp, 'direct.yml');
    writeFileSync(direct, YAML.stringify({ all: { clusters: { [CONTEXT]: { context: CONTEXT, kubeconfig: sandboxEnv().kubeconfig } } } }));
    let approvedAt = 0;
    const r = await kplay(['run', pb, '-i', inventory, '--no-lock', '-o', 'json'], {
      timeoutMs: 150_000,
      onSpawn: (child) => {
        let out = '';
        let sent = false;
        child.stdout?.on('data', (d: Buffer) => {
          out += d.toString();
          const id = /"run_id":"([^"]+)"/.exec(out)?.[1];
          if (sent || !id || !out.includes('"task_start"')) return;
          sent = true;
          void (async () => {
            for (let i = 0; i < 200; i++) {
              const gate = await kubectl(['-n', 'kplay-system', 'get', 'configmaps', '-l', 'kplay.dev/gate=silent-go', '-o', 'name'], { context: CONTEXT, check: false });
              if (gate.stdout.includes(id.toLowerCase())) break;
              await new Promise((res) => setTimeout(res, 200));
            }
            const a = await kplay(['approve', id, '--gate', 'silent-go', '-i', direct, '--as', 'erin']);
            if (a.code !== 0) throw new Error(a.stderr);
            approvedAt = Date.now();
          })();
        });
      },
    });
    const ended = Date.now();
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('approved by erin');
    expect(approvedAt).toBeGreaterThan(0);
    // the gate's watch is silent: the run saw the approval by re-listing within the stall bound
    expect(ended - approvedAt).toBeLessThan(12_000);
    expect(proxy.log.some((x) => x.watch && x.fault === 'silent')).toBe(true);
  });
});

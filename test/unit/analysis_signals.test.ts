// The analysis gate's inputs: which objects a registered result names (the shapes kplay's and
// kubernetes.core's modules register), workload selectors, and the traffic provider against local
// servers the test controls (slow, failing, held answers; TLS with a CA and Host/SNI).
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import analysis from '../../modules/analysis.js';
import { kubeState, readKubernetes, selectorString, targetsFrom, trafficValue } from '../../src/analysis/index.js';
import type { KubeClient, KubeObject, ListOptions, ObjectRef } from '../../src/k8s/types.js';
import { makeCtx, runModule } from '../helpers/ctx.js';
import { makePki, pem, readBody, startHttp, startHttps, type TestPki } from '../helpers/http.js';

describe('targetsFrom: the objects of registered results', () => {
  const deploy = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'shop' } };
  it('k8s_apply: resources, deleted ones left out', () => {
    const r = {
      changed: true,
      resources: [
        { kind: 'Deployment', apiVersion: 'apps/v1', name: 'web', namespace: 'shop', action: 'configured' },
        { kind: 'ConfigMap', apiVersion: 'v1', name: 'old', namespace: 'shop', action: 'deleted' },
        { kind: 'Namespace', apiVersion: 'v1', name: 'shop', action: 'unchanged' },
      ],
      objects: [deploy],
      counts: { configured: 1 },
    };
    expect(targetsFrom(r)).toEqual({
      targets: [
        { kind: 'Deployment', apiVersion: 'apps/v1', name: 'web', namespace: 'shop' },
        { kind: 'Namespace', apiVersion: 'v1', name: 'shop' },
      ],
      helm: [],
    });
  });
  it('helm_release: objects, in the release namespace when they have none', () => {
    const r = { name: 'web', namespace: 'shop', revision: 3, status: 'deployed', objects: [{ kind: 'Deployment', name: 'web' }, { kind: 'Service', name: 'web', namespace: 'edge' }] };
    expect(targetsFrom(r).targets).toEqual([
      { kind: 'Deployment', name: 'web', namespace: 'shop' },
      { kind: 'Service', name: 'web', namespace: 'edge' },
    ]);
  });
  it('kubernetes.core.k8s: one object, several (result.results), a loop (results), k8s_info', () => {
    expect(targetsFrom({ changed: true, method: 'create', result: deploy }).targets).toEqual([{ kind: 'Deployment', apiVersion: 'apps/v1', name: 'web', namespace: 'shop' }]);
    const several = { changed: true, result: { results: [{ changed: true, method: 'apply', result: deploy }, { changed: false, result: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'shop' } } }] } };
    expect(targetsFrom(several).targets.map((t) => t.kind)).toEqual(['Deployment', 'Service']);
    const loop = { changed: true, results: [{ item: 'a', result: deploy }, { item: 'b', skipped: true }, { item: 'c', result: deploy }] };
    expect(targetsFrom(loop).targets).toHaveLength(1);
    expect(targetsFrom({ api_found: true, resources: [deploy] }).targets).toEqual([{ kind: 'Deployment', apiVersion: 'apps/v1', name: 'web', namespace: 'shop' }]);
    expect(targetsFrom([deploy, { kind: 'Pod', metadata: { name: 'p', namespace: 'shop' } }]).targets).toHaveLength(2);
  });
  it('kubernetes.core.helm: the release to read', () => {
    const r = { changed: true, status: { name: 'web', namespace: 'shop', revision: '2', status: 'deployed', chart: 'web-1.0.0' }, stdout: '', stderr: '', command: 'helm upgrade' };
    expect(targetsFrom(r)).toEqual({ targets: [], helm: [{ name: 'web', namespace: 'shop' }] });
  });
  it('odd values name nothing', () => {
    for (const v of [null, undefined, '', 'text', 3, [], {}, { changed: false }, { resources: [null, 1, { kind: 'X' }] }, { status: null, stdout: '' }]) expect(targetsFrom(v)).toEqual({ targets: [], helm: [] });
  });
  it('selectorString: matchLabels and matchExpressions', () => {
    expect(selectorString({ matchLabels: { app: 'web', tier: 'fe' } })).toBe('app=web,tier=fe');
    expect(
      selectorString({
        matchExpressions: [
          { key: 'env', operator: 'In', values: ['a', 'b'] },
          { key: 'x', operator: 'NotIn', values: ['c'] },
          { key: 'y', operator: 'Exists' },
          { key: 'z', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('env in (a,b),x notin (c),y,!z');
    expect(selectorString({})).toBeUndefined();
    expect(selectorString(null)).toBeUndefined();
  });
});

type Traffic = { requests: number; failed: number; success_rate: number; p50_ms: number; p95_ms: number; max_ms: number; status_codes: Record<string, number>; errors: string[] };
const valueOf = (r: unknown, i = 0): Traffic => (r as { data: { measurements: { value: Traffic }[] } }).data.measurements[i]!.value;

describe('traffic (http) metric', () => {
  it('trafficValue sums up outcomes', () => {
    expect(
      trafficValue(
        [
          { status: 200, ms: 10, msg: 'HTTP 200' },
          { status: 200, ms: 30, msg: 'HTTP 200' },
          { status: 500, ms: 20, msg: 'HTTP 500' },
          { status: -1, ms: 1000, msg: 'timed out' },
        ],
        [200],
      ),
    ).toEqual({ requests: 4, failed: 2, success_rate: 50, p50_ms: 20, p95_ms: 1000, max_ms: 1000, status_codes: { 200: 2, 500: 1, error: 1 }, errors: ['HTTP 500', 'timed out'] });
  });

  it('sends the method, headers (Host) and body given; credential headers are masked', async () => {
    const seen: string[] = [];
    const srv = await startHttp((req, res) => {
      void readBody(req).then((body) => {
        seen.push(`${req.method ?? ''} ${req.url ?? ''} host=${req.headers.host ?? ''} auth=${req.headers.authorization ?? ''} body=${body}`);
        res.statusCode = 201;
        res.end();
      });
    });
    try {
      const r = await runModule(
        analysis,
        {
          interval: 0.01,
          count: 1,
          metrics: [{ name: 't', http: { url: `${srv.url}/probe`, method: 'post', headers: { Host: 'web.example.com', Authorization: 'Bearer hunter2-token' }, body: '{"ping":1}', requests: 2, status: [201] }, success_condition: 'result.success_rate == 100' }],
        },
        makeCtx(),
      );
      expect(r.status).toBe('ok');
      expect(seen).toEqual(['POST /probe host=web.example.com auth=Bearer hunter2-token body={"ping":1}', 'POST /probe host=web.example.com auth=Bearer hunter2-token body={"ping":1}']);
      expect(JSON.stringify(r)).not.toContain('hunter2');
    } finally {
      await srv.close();
    }
  });

  it('slow answers raise p95 over the bound: the measurement fails and is recorded', async () => {
    const srv = await startHttp((_req, res, n) => {
      if (n % 2 === 0) setTimeout(() => res.end('slow'), 200);
      else res.end('fast');
    });
    try {
      const r = await runModule(analysis, { interval: 0.01, count: 1, metrics: [{ name: 'latency', http: { url: srv.url, requests: 4 }, success_condition: 'result.p95_ms <= 150' }] }, makeCtx());
      expect(r.status).toBe('failed');
      const v = valueOf(r);
      expect(v.success_rate).toBe(100);
      expect(v.p95_ms).toBeGreaterThanOrEqual(190);
      expect(v.max_ms).toBe(v.p95_ms);
      expect(r.msg).toMatch(/analysis failed after 1 measurement\(s\).*success_condition "result.p95_ms <= 150" is false\)$/);
    } finally {
      await srv.close();
    }
  });

  it('a request that times out is a failed one, with its reason', async () => {
    const held: (() => void)[] = [];
    const srv = await startHttp((_req, res, n) => {
      if (n === 1) held.push(() => res.end());
      else res.end('ok');
    });
    try {
      const r = await runModule(analysis, { interval: 0.01, count: 1, metrics: [{ name: 't', http: { url: srv.url, requests: 3, timeout: 0.3 }, success_condition: 'result.success_rate >= 99' }] }, makeCtx());
      expect(r.status).toBe('failed');
      const v = valueOf(r);
      expect(v).toMatchObject({ requests: 3, failed: 1, status_codes: { 200: 2, error: 1 } });
      expect(v.errors[0]).toMatch(/timed out/);
      expect(r.msg).toMatch(/success_condition "result.success_rate >= 99" is false \(Request failed: .*timed out.*\)\)$/);
      expect(v.p95_ms).toBeGreaterThanOrEqual(290);
    } finally {
      held.forEach((f) => f());
      await srv.close();
    }
  });

  it('spread: requests go out on schedule, not after the previous answer (the first answer is held until the last request arrives)', async () => {
    let release: (() => void) | undefined;
    const srv = await startHttp((_req, res, n) => {
      if (n === 1) release = () => res.end('late');
      else res.end('ok');
      if (n === 4) release?.();
    });
    try {
      const r = await runModule(analysis, { interval: 0.2, count: 1, metrics: [{ name: 't', http: { url: srv.url, requests: 4, spread: true, timeout: 10 }, success_condition: 'result.success_rate == 100' }] }, makeCtx());
      expect(r.status, r.msg).toBe('ok');
      expect(valueOf(r).requests).toBe(4);
      expect(srv.requests).toBe(4);
    } finally {
      await srv.close();
    }
  });

  it('a refused connection is a failed request (the service is down), not a provider error', async () => {
    const srv = await startHttp((_req, res) => res.end());
    const url = srv.url;
    await srv.close();
    const r = await runModule(analysis, { interval: 0.01, count: 1, metrics: [{ name: 't', http: { url, requests: 2 }, success_condition: 'result.success_rate >= 99' }] }, makeCtx());
    expect(r.status).toBe('failed');
    expect((r as { data: { verdict: string } }).data.verdict).toBe('failed');
    expect(valueOf(r)).toMatchObject({ failed: 2, status_codes: { error: 2 } });
    expect(valueOf(r).errors[0]).toMatch(/Connection refused/);
  });
});

describe('traffic over TLS', () => {
  let pki: TestPki;
  beforeAll(() => {
    pki = makePki();
  });
  afterAll(() => pki?.cleanup());

  it('trusts ca_cert; TLS SNI follows the Host header; validate_certs: false skips the check', async () => {
    const srv = await startHttps({ cert: pem(pki.serverCert), key: pem(pki.serverKey) }, (_req, res) => res.end('ok'));
    try {
      const gate = (http: Record<string, unknown>) => runModule(analysis, { interval: 0.01, count: 1, metrics: [{ name: 'tls', http: { url: srv.url, requests: 1, ...http }, success_condition: 'result.success_rate == 100' }] }, makeCtx());
      expect((await gate({ ca_cert: pki.caCert })).status).toBe('ok');
      expect((await gate({ ca_cert: pki.caCert, headers: { Host: 'localhost' } })).status).toBe('ok'); // the certificate names localhost
      const wrongName = await gate({ ca_cert: pki.caCert, headers: { Host: 'web.example.com' } });
      expect(wrongName.status).toBe('failed');
      expect(valueOf(wrongName).errors[0]).toMatch(/web\.example\.com|altnames/i);
      const untrusted = await gate({});
      expect(untrusted.status).toBe('failed');
      expect((await gate({ validate_certs: false })).status).toBe('ok');
    } finally {
      await srv.close();
    }
  });
});

describe('kubernetes.core.helm results: the objects of the release manifest (helm storage read through the API)', () => {
  const manifest = [
    '---',
    '# Source: web/templates/deploy.yaml',
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata: { name: web }',
    'spec: { selector: { matchLabels: { app: web } } }',
    '---',
    'apiVersion: v1',
    'kind: Service',
    'metadata: { name: web }',
  ].join('\n');
  const release = { name: 'web', namespace: 'shop', version: 2, info: { status: 'deployed' }, chart: { metadata: { name: 'web', version: '1.0.0' } }, manifest };
  const record: KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'sh.helm.release.v1.web.v2', namespace: 'shop', labels: { owner: 'helm', name: 'web', version: '2' } },
    data: { release: Buffer.from(gzipSync(JSON.stringify(release)).toString('base64')).toString('base64') },
  };
  const calls: string[] = [];
  const fake = {
    get: (ref: ObjectRef) => {
      calls.push(`get ${ref.apiVersion} ${ref.kind} ${ref.namespace ?? ''}/${ref.name}`);
      return Promise.resolve(ref.kind === 'Deployment' ? { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'shop' }, spec: { selector: { matchLabels: { app: 'web' } } } } : undefined);
    },
    list: (_apiVersion: string, kind: string, opts: ListOptions = {}) => {
      calls.push(`list ${kind} ${opts.namespace ?? ''} ${opts.labelSelector ?? opts.fieldSelector ?? ''}`);
      const items: KubeObject[] =
        kind === 'Secret'
          ? [record]
          : kind === 'Pod'
            ? [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', namespace: 'shop', uid: 'u1' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }]
            : [{ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' }, type: 'Warning', reason: 'SyncLoadBalancerFailed', message: 'no IP', involvedObject: { kind: 'Service', name: 'web', namespace: 'shop' }, lastTimestamp: '2026-01-01T10:00:05Z' }];
      return Promise.resolve({ items, resourceVersion: '1' });
    },
  } as unknown as KubeClient;
  const helmResult = { changed: true, status: { name: 'web', namespace: 'shop', revision: '2', status: 'deployed' }, stdout: 'Release "web" has been upgraded.', stderr: '', command: 'helm upgrade' };

  it('follows the Deployment (its pods by selector) and the Service (its events) of the stored manifest', async () => {
    const ctx = { ...makeCtx(), adapter: <T>() => Promise.resolve(fake as T) };
    const r = await readKubernetes({ from: helmResult }, ctx, kubeState(), new Date('2026-01-01T10:00:00Z'));
    expect(r).toMatchObject({ kind: 'value', value: { objects: 2, missing: 0, pods: 1, ready: 1, warning_events: 1, healthy: false, details: ['Warning SyncLoadBalancerFailed on Service web: no IP'] } });
    expect(calls).toEqual(['list Secret shop owner=helm,name=web', 'get apps/v1 Deployment shop/web', 'list Pod shop app=web', 'list Event shop type=Warning']);
  });
  it('a helm driver kplay cannot read is an error reading that says what to do', async () => {
    const ctx = { ...makeCtx({ environment: { HELM_DRIVER: 'sql' } }), adapter: <T>() => Promise.resolve(fake as T) };
    const r = await readKubernetes({ from: helmResult }, ctx, kubeState(), new Date());
    expect(r.kind).toBe('error');
    expect(r.kind === 'error' && r.reason).toMatch(/HELM_DRIVER=sql; list them in kubernetes.objects/);
  });
});

describe('web metric (Argo\'s web provider): the JSON answer is `result`', () => {
  it('reads JSON; sends json_body with its content type and the headers; 5xx and non-JSON answers are errors', async () => {
    const seen: string[] = [];
    let answer: { status: number; body: string } = { status: 200, body: JSON.stringify({ data: { error_rate: 0.001, ok: true } }) };
    const srv = await startHttp((req, res) => {
      void readBody(req).then((body) => {
        seen.push(`${req.method ?? ''} ${req.headers['content-type'] ?? ''} ${req.headers['x-team'] ?? ''} ${body}`);
        res.statusCode = answer.status;
        res.end(answer.body);
      });
    });
    try {
      const gate = (web: Record<string, unknown>, condition = 'result.data.error_rate < 0.01 and result.data.ok') =>
        runModule(analysis, { interval: 0.01, count: 1, consecutive_error_limit: 0, metrics: [{ name: 'score', web: { url: srv.url, ...web }, success_condition: condition }] }, makeCtx());
      const ok = await gate({ method: 'POST', json_body: { app: 'web' }, headers: { 'X-Team': 'shop' } });
      expect(ok.status).toBe('ok');
      expect(seen[0]).toBe('POST application/json shop {"app":"web"}');
      expect((ok as { data: { measurements: { value: unknown }[] } }).data.measurements[0]?.value).toEqual({ data: { error_rate: 0.001, ok: true } });
      answer = { status: 200, body: JSON.stringify({ data: { error_rate: 0.2, ok: true } }) };
      expect((await gate({})).status).toBe('failed');
      answer = { status: 503, body: '{}' };
      const down = await gate({});
      expect((down as { data: { verdict: string } }).data.verdict).toBe('error');
      expect(down.msg).toMatch(/received non 2xx response code: 503/);
      answer = { status: 200, body: 'ok' };
      expect((await gate({})).msg).toMatch(/the answer is not JSON: "ok"/);
    } finally {
      await srv.close();
    }
  });
});

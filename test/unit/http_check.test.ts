import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import httpCheck, { type HttpCheckArgs } from '../../modules/http_check.js';
import { parse as parseYaml } from 'yaml';
import { compileSchema } from '../../src/load/schema.js';
import type { ModuleResult } from '../../src/core/module.js';
import { makeCtx, runModule, type TestContext } from '../helpers/ctx.js';
import { makePki, pem, readBody, startHttp, startHttps, type TestPki, type TestServer } from '../helpers/http.js';

function run(args: Partial<HttpCheckArgs>, ctx: TestContext = makeCtx()): Promise<ModuleResult> {
  return runModule(httpCheck, args, ctx);
}

function data(r: ModuleResult): Record<string, unknown> {
  return ('data' in r && r.data) || {};
}

const servers: TestServer[] = [];
async function server(...a: Parameters<typeof startHttp>): Promise<TestServer> {
  const s = await startHttp(...a);
  servers.push(s);
  return s;
}
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

describe('http_check schema', () => {
  it('compiles in ajv strict mode and rejects unknown keys', () => {
    const v = compileSchema(httpCheck.schema);
    expect(v({ url: 'http://x' })).toBe(true);
    expect(v({ url: 'http://x', nope: 1 })).toBe(false);
    expect(v({ url: 'http://x', status: [200, 204], that: 'json.a == 1', json: { a: [1] } })).toBe(true);
    expect(v({ url: 'ftp://x' })).toBe(false);
    const props = (httpCheck.schema as { properties: Record<string, { description?: string }> }).properties;
    for (const [k, p] of Object.entries(props)) expect(p.description, k).toBeTruthy();
  });

  it('every documented example is valid', () => {
    const v = compileSchema(httpCheck.schema);
    for (const ex of httpCheck.examples) {
      const [task] = parseYaml(ex.yaml) as Record<string, unknown>[];
      expect(v(task?.http_check), `${ex.title}: ${JSON.stringify(v.errors)}`).toBe(true);
    }
  });
});

describe('http_check against a real HTTP server', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await server((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname === '/ok') {
        res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': 'session=abcdef123456' });
        res.end('all good: version 1.2.3');
      } else if (u.pathname === '/json') {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify({ status: 'ok', replicas: 3, items: [{ name: 'a' }] }));
      } else if (u.pathname === '/fail') {
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end('backend unavailable ' + 'x'.repeat(400));
      } else if (u.pathname === '/echo') {
        void readBody(req).then((b) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ method: req.method, body: b, headers: req.headers }));
        });
      } else if (u.pathname === '/slow') {
        setTimeout(() => {
          res.writeHead(200);
          res.end('late');
        }, 3000).unref();
      } else if (u.pathname.startsWith('/redir/')) {
        const n = Number(u.pathname.split('/')[2]);
        res.writeHead(302, { location: n > 0 ? `/redir/${n - 1}` : '/ok' });
        res.end();
      } else if (u.pathname === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('y'.repeat(200 * 1024));
      } else {
        res.writeHead(404);
        res.end('not found');
      }
    });
  });

  it('passes on the expected status and returns status, headers, body, elapsed_ms, url, attempts', async () => {
    const r = await run({ url: `${srv.url}/ok` });
    expect(r.status).toBe('ok');
    const d = data(r);
    expect(d.status).toBe(200);
    expect(d.body).toBe('all good: version 1.2.3');
    expect(d.attempts).toBe(1);
    expect(d.url).toBe(`${srv.url}/ok`);
    expect(typeof d.elapsed_ms).toBe('number');
    expect((d.headers as Record<string, string>)['content-type']).toBe('text/plain');
    // Response cookies are never shown.
    expect((d.headers as Record<string, string>)['set-cookie']).toBe('********');
  });

  it('fails on a status mismatch, saying what was expected and what came back', async () => {
    const r = await run({ url: `${srv.url}/fail` });
    expect(r.status).toBe('failed');
    if (r.status !== 'failed') return;
    expect(r.msg).toContain('expected status 200, got 503');
    expect(r.msg).toContain('backend unavailable');
    expect(r.msg).toContain('attempt 1/1');
    // At most the first 200 characters of the body.
    expect(r.msg).not.toContain('x'.repeat(201));
    expect(data(r).status).toBe(503);
  });

  it('accepts a list of statuses', async () => {
    expect((await run({ url: `${srv.url}/fail`, status: [200, 503] })).status).toBe('ok');
    expect((await run({ url: `${srv.url}/missing`, status: 404 })).status).toBe('ok');
    const r = await run({ url: `${srv.url}/missing`, status: [200, 204] });
    expect(r.status === 'failed' && r.msg).toContain('expected status one of 200, 204, got 404');
  });

  it('checks body_contains and body_regex', async () => {
    expect((await run({ url: `${srv.url}/ok`, body_contains: 'all good' })).status).toBe('ok');
    const r = await run({ url: `${srv.url}/ok`, body_contains: 'version 2' });
    expect(r.status).toBe('failed');
    expect(r.status === 'failed' && r.msg).toContain(`expected body to contain "version 2"; got status 200, body 'all good`);
    expect((await run({ url: `${srv.url}/ok`, body_regex: 'version \\d+\\.\\d+' })).status).toBe('ok');
    const r2 = await run({ url: `${srv.url}/ok`, body_regex: '^version' });
    expect(r2.status === 'failed' && r2.msg).toContain('expected body to match /^version/');
    const r3 = await run({ url: `${srv.url}/ok`, body_regex: '(' });
    expect(r3.status === 'failed' && r3.msg).toContain('invalid body_regex');
  });

  it('evaluates Liquid `that` conditions over the parsed JSON', async () => {
    const ok = await run({
      url: `${srv.url}/json`,
      that: ['json.status == "ok"', 'json.replicas >= min_replicas', "json['items'][0].name == 'a'", 'status == 200'],
    }, makeCtx({ vars: { min_replicas: 2 } }));
    expect(ok.status).toBe('ok');
    expect(data(ok).json).toEqual({ status: 'ok', replicas: 3, items: [{ name: 'a' }] });
    expect(data(ok).body).toBeUndefined();

    const bad = await run({ url: `${srv.url}/json`, that: 'json.replicas > 5' });
    expect(bad.status).toBe('failed');
    expect(bad.status === 'failed' && bad.msg).toContain('expected condition "json.replicas > 5" to be true');
    expect(bad.status === 'failed' && bad.msg).toContain('"replicas":3');

    // Undefined variables are an error, not silently false.
    const undef = await run({ url: `${srv.url}/json`, that: 'nope == 1' });
    expect(undef.status === 'failed' && undef.msg).toContain('could not be evaluated');
  });

  it('sends a JSON body and custom headers; masks secret header values everywhere', async () => {
    const ctx = makeCtx();
    const r = await run(
      {
        url: `${srv.url}/echo`,
        method: 'post',
        json: { hello: 'world' },
        headers: { Authorization: 'Bearer s3cr3t-t0ken-value', 'X-Request-Id': 'abc', 'X-Auth-Token': 'tok-99887766' },
      },
      ctx,
    );
    expect(r.status).toBe('ok');
    const echoed = data(r).json as { method: string; body: string; headers: Record<string, string> };
    expect(echoed.method).toBe('POST');
    expect(JSON.parse(echoed.body)).toEqual({ hello: 'world' });
    expect(echoed.headers['content-type']).toBe('application/json');
    expect(echoed.headers.authorization).toBe('Bearer s3cr3t-t0ken-value'); // the server got the real value
    // …but any output goes through the Masker.
    expect(ctx.mask(JSON.stringify(r))).not.toContain('s3cr3t-t0ken-value');
    expect(ctx.mask(JSON.stringify(r))).not.toContain('tok-99887766');
    expect(ctx.mask('Bearer s3cr3t-t0ken-value')).toBe('********');
  });

  it('masks a password in the URL', async () => {
    const ctx = makeCtx();
    const r = await run({ url: srv.url.replace('//', '//admin:hunter2pw@') + '/fail' }, ctx);
    expect(r.status).toBe('failed');
    expect(ctx.mask(JSON.stringify(r))).not.toContain('hunter2pw');
  });

  it('a raw body is sent as is; body and json together are refused', async () => {
    const r = await run({ url: `${srv.url}/echo`, method: 'PUT', body: 'plain text' });
    expect((data(r).json as { body: string }).body).toBe('plain text');
    const both = await run({ url: `${srv.url}/echo`, method: 'PUT', body: 'x', json: 1 });
    expect(both.status === 'failed' && both.msg).toContain('mutually exclusive');
  });

  it('retries until the server starts answering 200', async () => {
    const flip = await server((_req, res, n) => {
      res.writeHead(n <= 3 ? 503 : 200);
      res.end(n <= 3 ? 'starting' : 'ready');
    });
    const ctx = makeCtx();
    const r = await run({ url: flip.url, retries: 5, delay: 0.05 }, ctx);
    expect(r.status).toBe('ok');
    expect(data(r).attempts).toBe(4);
    expect(flip.requests).toBe(4);
    expect(ctx.logs.info.join('\n')).toContain('attempt 1/6');

    const never = await server((_req, res) => {
      res.writeHead(500);
      res.end('boom');
    });
    const f = await run({ url: never.url, retries: 2, delay: 0.01 });
    expect(f.status === 'failed' && f.msg).toContain(`expected status 200, got 500, body 'boom' (attempt 3/3)`);
    expect(never.requests).toBe(3);
  });

  it('retries connection errors too, and reports them', async () => {
    const gone = await startHttp((_q, s) => s.end());
    const url = gone.url;
    await gone.close();
    const r = await run({ url, retries: 1, delay: 0.01 });
    expect(r.status).toBe('failed');
    expect(r.status === 'failed' && r.msg).toMatch(/request failed: .*ECONNREFUSED.*\(attempt 2\/2\)/);
  });

  it('times out a slow answer', async () => {
    const t0 = Date.now();
    const r = await run({ url: `${srv.url}/slow`, timeout: 0.3 });
    expect(r.status).toBe('failed');
    expect(r.status === 'failed' && r.msg).toContain('timed out after 0.3s');
    expect(Date.now() - t0).toBeLessThan(2500);
  });

  it('stops on ctx.signal', async () => {
    const ctx = makeCtx();
    setTimeout(() => ctx.abort.abort(), 200);
    const t0 = Date.now();
    const r = await run({ url: `${srv.url}/fail`, retries: 100, delay: 0.1 }, ctx);
    expect(r.status).toBe('failed');
    expect(r.status === 'failed' && r.msg).toContain('aborted');
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('follows redirects (max 10) unless told not to', async () => {
    const r = await run({ url: `${srv.url}/redir/3` });
    expect(r.status).toBe('ok');
    expect(data(r).url).toBe(`${srv.url}/ok`);
    expect(data(r).redirects).toBe(4);
    const noFollow = await run({ url: `${srv.url}/redir/0`, follow_redirects: false, status: 302 });
    expect(noFollow.status).toBe('ok');
    expect((data(noFollow).headers as Record<string, string>).location).toBe('/ok');
    const tooMany = await run({ url: `${srv.url}/redir/20` });
    expect(tooMany.status === 'failed' && tooMany.msg).toContain('too many redirects');
  });

  it('truncates the body in the result to 64 KiB', async () => {
    const r = await run({ url: `${srv.url}/big`, body_contains: 'yyy' });
    expect(r.status).toBe('ok');
    expect((data(r).body as string).length).toBe(64 * 1024);
    expect(data(r).body_truncated).toBe(true);
  });

  it('is never changed; check mode sends GET but skips other methods', async () => {
    const before = srv.requests;
    const g = await run({ url: `${srv.url}/ok` }, makeCtx({ checkMode: true }));
    expect(g.status).toBe('ok');
    expect(srv.requests).toBe(before + 1);
    const p = await run({ url: `${srv.url}/echo`, method: 'DELETE' }, makeCtx({ checkMode: true }));
    expect(p.status).toBe('skipped');
    expect(p.status === 'skipped' && p.msg).toContain('would send DELETE');
    expect(srv.requests).toBe(before + 1);
  });
});

describe('http_check over TLS', () => {
  let pki: TestPki;
  let tls: TestServer;
  let mtls: TestServer;
  beforeAll(async () => {
    pki = makePki();
    tls = await startHttps({ cert: pem(pki.serverCert), key: pem(pki.serverKey) }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"secure":true}');
    });
    mtls = await startHttps(
      { cert: pem(pki.serverCert), key: pem(pki.serverKey), ca: pem(pki.caCert), requestCert: true, rejectUnauthorized: true },
      (req: IncomingMessage, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`hello ${peer.subject?.CN ?? 'anonymous'}`);
      },
    );
    servers.push(tls, mtls);
  }, 60_000);
  afterAll(() => pki?.cleanup());

  it('refuses a certificate from an unknown CA by default', async () => {
    const r = await run({ url: tls.url });
    expect(r.status).toBe('failed');
    expect(r.status === 'failed' && r.msg).toMatch(/request failed: .*(self[- ]signed|unable to verify|UNABLE_TO_GET_ISSUER|SELF_SIGNED)/i);
  });

  it('accepts it with ca_file (relative to baseDir) and with validate_certs: false', async () => {
    const r = await run({ url: tls.url, ca_file: 'ca.crt', that: 'json.secure' }, makeCtx({ baseDir: pki.dir }));
    expect(r.status).toBe('ok');
    expect(data(r).json).toEqual({ secure: true });
    expect((await run({ url: tls.url, validate_certs: false })).status).toBe('ok');
    const missing = await run({ url: tls.url, ca_file: '/nonexistent/ca.pem' });
    expect(missing.status === 'failed' && missing.msg).toContain('cannot read ca_file /nonexistent/ca.pem');
  });

  it('authenticates with a client certificate', async () => {
    const without = await run({ url: mtls.url, ca_file: pki.caCert });
    expect(without.status).toBe('failed');
    const r = await run({ url: mtls.url, ca_file: pki.caCert, client_cert: pki.clientCert, client_key: pki.clientKey });
    expect(r.status).toBe('ok');
    expect(data(r).body).toBe('hello kplay-client');
    const half = await run({ url: mtls.url, client_cert: pki.clientCert });
    expect(half.status === 'failed' && half.msg).toContain('must be given together');
  });
});

// uri and get_url against a loopback server: secrets masked (url_password, the password in the
// URL, Authorization/token headers), status_code forms, redirects, unsupported options failing
// clearly, downloads (checksum file, Content-Disposition, 304, backup).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import getUrl from '../../modules/get_url.js';
import uri from '../../modules/uri.js';
import { MASK } from '../../src/core/mask.js';
import type { ModuleResult } from '../../src/core/module.js';
import { makeCtx, runModule } from '../helpers/ctx.js';
import { readBody, startHttp, type TestServer } from '../helpers/http.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-local-http-'));
const servers: TestServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(tmp, { recursive: true, force: true });
});

function data(r: ModuleResult): Record<string, unknown> {
  return ('data' in r && r.data) || {};
}

const PAYLOAD = 'payload-bytes\n';
const seen: { auth?: string; headers?: Record<string, unknown>; body?: string }[] = [];
const server = startHttp(async (req, res) => {
  const body = await readBody(req);
  seen.push({ auth: req.headers.authorization, headers: req.headers, body });
  const url = req.url ?? '/';
  if (url === '/json') {
    res.writeHead(200, { 'Content-Type': 'application/vnd.api+json', 'X-Custom-Thing': 'v' });
    res.end('{"ok": true}');
  } else if (url === '/moved') {
    res.writeHead(301, { Location: '/json' });
    res.end();
  } else if (url === '/secure') {
    if (req.headers.authorization !== `Basic ${Buffer.from('me:s3cr3t-pw').toString('base64')}`) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="x"' });
      res.end('no');
    } else {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('welcome');
    }
  } else if (url === '/file.bin') {
    if (req.headers['if-modified-since']) {
      res.writeHead(304);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Disposition': 'attachment; filename="named.bin"', 'Content-Length': String(PAYLOAD.length) });
    res.end(PAYLOAD);
  } else if (url === '/SHA256SUMS') {
    res.writeHead(200);
    res.end(`${'0'.repeat(64)}  other.bin\n${'e7c5c1b0d4c1f3a1f0c4b9d0d1f5c6f7f3f3e1a7c0b0e5d4c3b2a19080706050'}  file.bin\n`);
  } else {
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('missing');
  }
});

async function base(): Promise<string> {
  const s = await server;
  if (!servers.includes(s)) servers.push(s);
  return s.url;
}

describe('uri', () => {
  it('masks url_password, the password of the URL and secret headers everywhere', async () => {
    const ctx = makeCtx();
    const url = (await base()).replace('http://', 'http://me:url-pw-123@');
    const r = await runModule(uri, { url: `${url}/secure`, headers: { Authorization: 'Bearer tok-abcdef', 'X-Api-Key': 'key-98765' }, status_code: [401] }, ctx);
    expect(r.status).toBe('ok');
    expect(data(r).url).not.toContain('url-pw-123');
    for (const secret of ['url-pw-123', 'tok-abcdef', 'Bearer tok-abcdef', 'key-98765']) expect(ctx.mask(`x ${secret} y`)).toBe(`x ${MASK} y`);
    const ctx2 = makeCtx();
    const ok = await runModule(uri, { url: `${await base()}/secure`, url_username: 'me', url_password: 's3cr3t-pw', return_content: true }, ctx2);
    expect(ok.status).toBe('ok');
    expect(data(ok).content).toBe('welcome');
    expect(ctx2.mask('s3cr3t-pw')).toBe(MASK);
  });
  it('sends credentials only after the 401 challenge, unless force_basic_auth', async () => {
    seen.length = 0;
    await runModule(uri, { url: `${await base()}/secure`, user: 'me', password: 's3cr3t-pw' });
    expect(seen.map((s) => s.auth === undefined)).toEqual([true, false]);
    seen.length = 0;
    await runModule(uri, { url: `${await base()}/secure`, user: 'me', password: 's3cr3t-pw', force_basic_auth: true });
    expect(seen.length).toBe(1);
  });
  it('status_code as a list, a number or a comma list; headers lowercased with underscores; +json parsed', async () => {
    for (const status_code of [[200], 200, '200, 201']) {
      const r = await runModule(uri, { url: `${await base()}/json`, status_code });
      expect(r.status).toBe('ok');
      expect(data(r)).toMatchObject({ status: 200, json: { ok: true }, x_custom_thing: 'v', content_type: 'application/vnd.api+json', redirected: false });
    }
    expect(await runModule(uri, { url: `${await base()}/json`, status_code: 'x' })).toMatchObject({ status: 'failed', msg: expect.stringContaining('status_code') });
  });
  it('safe redirects: followed for GET, not for POST', async () => {
    const g = await runModule(uri, { url: `${await base()}/moved` });
    expect(data(g)).toMatchObject({ status: 200, redirected: true });
    const p = await runModule(uri, { url: `${await base()}/moved`, method: 'POST', body: 'x' });
    expect(p).toMatchObject({ status: 'failed', msg: expect.stringContaining('Status code was 301 and not [200]') });
    expect(data(p).location).toBe(`${await base()}/json`);
  });
  it('an unexpected status fails with the body; a refused connection is status -1', async () => {
    const r = await runModule(uri, { url: `${await base()}/nope` });
    expect(r).toMatchObject({ status: 'failed', msg: 'Status code was 404 and not [200]: HTTP Error 404: Not Found' });
    const refused = await runModule(uri, { url: 'http://127.0.0.1:1/' });
    expect(refused).toMatchObject({ status: 'failed', msg: expect.stringContaining('Connection refused') });
    expect(data(refused).status).toBe(-1);
  });
  it('fails clearly on what kplay does not do; a method must be one uppercase word', async () => {
    expect(await runModule(uri, { url: `${await base()}/json`, body_format: 'form-multipart', body: { a: 1 } })).toMatchObject({ status: 'failed', msg: expect.stringContaining('form-multipart is not supported') });
    expect(await runModule(uri, { url: `${await base()}/json`, method: 'get me' })).toMatchObject({ status: 'failed', msg: expect.stringContaining('single word in uppercase') });
  });
  it('form-urlencoded encodes as Python\'s urlencode; json as json.dumps', async () => {
    seen.length = 0;
    await runModule(uri, { url: `${await base()}/json`, method: 'POST', body_format: 'form-urlencoded', body: { 'a b': 'c&d=é', t: true }, status_code: [200] });
    expect(seen[0]?.body).toBe('a+b=c%26d%3D%C3%A9&t=True');
    await runModule(uri, { url: `${await base()}/json`, method: 'POST', body_format: 'json', body: { a: [1, null], b: 'é' } });
    expect(seen[1]?.body).toBe('{"a": [1, null], "b": "\\u00e9"}');
    expect(seen[1]?.headers?.['content-type']).toBe('application/json');
  });
});

describe('get_url', () => {
  it('a directory dest takes the Content-Disposition name; a rerun gets 304 and changes nothing', async () => {
    const dir = path.join(tmp, 'dl');
    mkdirSync(dir);
    const r = await runModule(getUrl, { url: `${await base()}/file.bin`, dest: `${dir}/` });
    expect(r).toMatchObject({ status: 'changed', msg: `OK (${PAYLOAD.length} bytes)` });
    expect(data(r)).toMatchObject({ dest: path.join(dir, 'named.bin'), status_code: 200, checksum_dest: null, size: PAYLOAD.length });
    expect(readFileSync(path.join(dir, 'named.bin'), 'utf8')).toBe(PAYLOAD);
    const again = await runModule(getUrl, { url: `${await base()}/file.bin`, dest: path.join(dir, 'named.bin') });
    expect(again).toMatchObject({ status: 'ok' });
    expect(data(again).status_code).toBe(304);
  });
  it('force with backup replaces a different file and keeps the old one', async () => {
    const dest = path.join(tmp, 'forced.bin');
    writeFileSync(dest, 'old');
    const r = await runModule(getUrl, { url: `${await base()}/file.bin`, dest, force: true, backup: true });
    expect(r.status).toBe('changed');
    const backup = String(data(r).backup_file);
    expect(readFileSync(backup, 'utf8')).toBe('old');
    expect(readFileSync(dest, 'utf8')).toBe(PAYLOAD);
  });
  it('a checksum from a checksum file must match; the download is not kept when it does not', async () => {
    const dest = path.join(tmp, 'checked.bin');
    const r = await runModule(getUrl, { url: `${await base()}/file.bin`, dest, checksum: `sha256:${await base()}/SHA256SUMS` });
    expect(r).toMatchObject({ status: 'failed', msg: expect.stringContaining('did not match e7c5c1b0') });
    expect(existsSync(dest)).toBe(false);
    expect(readdirSync(tmp).filter((f) => f.startsWith('.kplay-tmp-'))).toEqual([]);
    expect(await runModule(getUrl, { url: `${await base()}/file.bin`, dest, checksum: 'nocolon' })).toMatchObject({ status: 'failed', msg: 'The checksum parameter has to be in format <algorithm>:<checksum>' });
  });
  it('check mode makes a HEAD request and writes nothing', async () => {
    seen.length = 0;
    const dest = path.join(tmp, 'check.bin');
    const r = await runModule(getUrl, { url: `${await base()}/file.bin`, dest }, makeCtx({ checkMode: true }));
    expect(r.status).toBe('changed');
    expect(existsSync(dest)).toBe(false);
    expect(seen.length).toBe(1);
  });
});

/**
 * HTTP requests as Ansible's `fetch_url` makes them for `uri` and `get_url`: redirects (`safe`,
 * `all`, `none`), basic auth (forced or on a 401 challenge), certificate checks, timeouts,
 * gzip decompression, `If-Modified-Since`, and the `info` Ansible reports (status, `msg`,
 * the final `url`, response headers lowercased, cookies).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { gunzipSync, inflateSync } from 'node:zlib';

/** What a request needs. */
export interface HttpRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** `all`/`yes`/`urllib2`: follow every redirect; `safe`: only for GET/HEAD; `none`/`no`: none. */
  followRedirects: string;
  timeoutMs: number;
  validateCerts: boolean;
  username?: string;
  password?: string;
  forceBasicAuth: boolean;
  decompress: boolean;
  caPath?: string;
  clientCert?: string;
  clientKey?: string;
  lastModified?: Date;
  signal: AbortSignal;
}

/** What came back (`status` -1: no response, `msg` says why, as Ansible). */
export interface HttpResponse {
  status: number;
  /** `OK (N bytes)`, `HTTP Error 404: Not Found`, or `Request failed: …`. */
  msg: string;
  /** The final URL (after redirects). */
  url: string;
  /** Response headers, lowercased names. */
  headers: Record<string, string>;
  body: Buffer;
  cookies: Record<string, string>;
  cookiesString: string;
}

const REASONS = http.STATUS_CODES;

function once(req: HttpRequest, url: URL, method: string, auth: boolean): Promise<{ status: number; reason: string; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'User-Agent': 'ansible-httpget', 'Accept-Encoding': req.decompress ? 'gzip' : 'identity', ...req.headers };
    if (auth && req.username !== undefined) headers.Authorization = `Basic ${Buffer.from(`${req.username}:${req.password ?? ''}`).toString('base64')}`;
    if (req.lastModified) headers['If-Modified-Since'] = req.lastModified.toUTCString();
    if (req.body !== undefined && method !== 'GET' && method !== 'HEAD') headers['Content-Length'] = String(req.body.length);
    const lib = url.protocol === 'https:' ? https : http;
    const r = lib.request(
      url,
      {
        method,
        headers,
        signal: req.signal,
        rejectUnauthorized: req.validateCerts,
        ...(req.caPath ? { ca: readFileSync(req.caPath) } : {}),
        ...(req.clientCert ? { cert: readFileSync(req.clientCert) } : {}),
        ...(req.clientKey ? { key: readFileSync(req.clientKey) } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let body = Buffer.concat(chunks);
          const enc = res.headers['content-encoding'];
          try {
            if (req.decompress && enc === 'gzip') body = gunzipSync(body);
            else if (req.decompress && enc === 'deflate') body = inflateSync(body);
          } catch (e) {
            reject(e);
            return;
          }
          resolve({ status: res.statusCode ?? 0, reason: res.statusMessage ?? '', headers: res.headers, body });
        });
        res.on('error', reject);
      },
    );
    r.setTimeout(req.timeoutMs, () => r.destroy(new Error('The read operation timed out')));
    r.on('error', reject);
    if (req.body !== undefined && method !== 'GET' && method !== 'HEAD') r.write(req.body);
    r.end();
  });
}

/** Lowercased response headers as strings (repeated ones joined with `, `; cookies apart). */
function flatHeaders(h: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** Make the request (see the file header). Never rejects: a failure is `status: -1`. */
export async function httpRequest(req: HttpRequest): Promise<HttpResponse> {
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return { status: -1, msg: `Request failed: unknown url type: '${req.url}'`, url: req.url, headers: {}, body: Buffer.alloc(0), cookies: {}, cookiesString: '' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { status: -1, msg: `Request failed: unknown url type: '${url.protocol.replace(':', '')}' (kplay supports http and https)`, url: req.url, headers: {}, body: Buffer.alloc(0), cookies: {}, cookiesString: '' };
  let method = req.method;
  let auth = req.forceBasicAuth;
  const cookies: Record<string, string> = {};
  for (let hops = 0; ; hops++) {
    let r;
    try {
      r = await once(req, url, method, auth);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (req.signal.aborted) throw e;
      const why = err.code === 'ECONNREFUSED' ? '[Errno 111] Connection refused' : err.code === 'ENOTFOUND' ? `[Errno -2] Name or service not known` : err.message;
      return { status: -1, msg: `Request failed: <urlopen error ${why}>`, url: url.toString(), headers: {}, body: Buffer.alloc(0), cookies, cookiesString: '' };
    }
    for (const c of ([] as string[]).concat(r.headers['set-cookie'] ?? [])) {
      const m = /^([^=;]+)=([^;]*)/.exec(c);
      if (m) cookies[(m[1] as string).trim()] = m[2] as string;
    }
    if (r.status === 401 && !auth && req.username !== undefined && /basic/i.test(String(r.headers['www-authenticate'] ?? ''))) {
      auth = true;
      continue;
    }
    const location = r.headers.location;
    const follow = req.followRedirects === 'all' || req.followRedirects === 'yes' || req.followRedirects === 'urllib2' || (req.followRedirects === 'safe' && (method === 'GET' || method === 'HEAD'));
    if ([301, 302, 303, 307, 308].includes(r.status) && location && follow) {
      if (hops >= 10) return { status: r.status, msg: `HTTP Error ${r.status}: The HTTP server returned a redirect error that would lead to an infinite loop.`, url: url.toString(), headers: flatHeaders(r.headers), body: r.body, cookies, cookiesString: '' };
      url = new URL(location, url);
      if (r.status === 303 || ((r.status === 301 || r.status === 302) && method === 'POST')) method = 'GET';
      continue;
    }
    const headers = flatHeaders(r.headers);
    const cookiesString = Object.entries(cookies).map(([k, v]) => `${k}=${v}`).join('; ');
    const ok = r.status < 400 && !(r.status >= 300 && r.status < 400 && r.status !== 304);
    const msg = ok ? `OK (${headers['content-length'] ?? 'unknown'} bytes)` : r.status === 304 ? `HTTP Error 304: ${r.reason || REASONS[304]}` : `HTTP Error ${r.status}: ${r.reason || REASONS[r.status] || ''}`;
    return { status: r.status, msg, url: url.toString(), headers, body: r.body, cookies, cookiesString };
  }
}

/** A URL with its password replaced (Ansible's `mask_url`). */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = '********';
    return u.toString();
  } catch {
    return url;
  }
}

/** Header names whose values are credentials (masked in every output). */
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie)$|token|secret|api[-_]?key|password|passwd|private|session/i;

/** The values of request headers that hold credentials (`Authorization: Bearer …` gives the whole value and the token). */
export function secretHeaderValues(headers: Record<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(headers)) {
    if (!SECRET_HEADER.test(k) || v === '') continue;
    out.push(v);
    const m = /^(Bearer|Basic|Token|Digest)\s+(.+)$/i.exec(v);
    if (m?.[2]) out.push(m[2]);
  }
  return out;
}

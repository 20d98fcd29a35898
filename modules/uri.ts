/**
 * `uri`: make an HTTP(S) request from the machine running kplay, as ansible.builtin.uri does
 * under `connection: local`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { defineModule, findSource, httpRequest, localPath, maskUrl, secretHeaderValues, writeDest, Default, StringEnum, Type } from 'kplay/sdk';

const JSON_TYPES = ['json', 'javascript'];

/** Python's urlencode of a map or a list of pairs (`form-urlencoded`). */
function formEncode(body: unknown): string {
  const pairs: [string, unknown][] = Array.isArray(body) ? body.map((p) => (Array.isArray(p) ? [String(p[0]), p[1]] : [String(p), ''])) : Object.entries(body as Record<string, unknown>);
  const enc = (s: string): string => encodeURIComponent(s).replace(/%20/g, '+').replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).replace(/%7E/g, '~');
  return pairs.map(([k, v]) => `${enc(k)}=${enc(typeof v === 'string' ? v : v === true ? 'True' : v === false ? 'False' : v === null ? 'None' : String(v))}`).join('&');
}

export default defineModule({
  name: 'uri',
  summary: 'Make an HTTP(S) request and check its status (ansible.builtin.uri)',
  description: [
    'Requests from the machine running kplay, as `ansible.builtin.uri` with `connection: local`: the same arguments (`url_username` alias `user`, `url_password` alias `password`), defaults (`GET`, `status_code: [200]`, `timeout: 30`, `follow_redirects: safe`), `body_format` `raw`/`json`/`form-urlencoded`, and result: `status`, `url`, `redirected`, `msg`, `elapsed`, `cookies`, `cookies_string`, every response header lowercased with `-` → `_` (`content_type`…), `content` (with `return_content`, or on an unexpected status) and `json` (a JSON response).',
    'Never changed, except when `dest` is written. Not run in check mode (as Ansible). `url_password`, the password in the URL and secret-looking headers (`Authorization`, `Cookie`, `*token*`, `*key*`, `*secret*`) are masked in every output. Not supported: `form-multipart`, `unix_socket`, proxies (kplay connects directly; `use_proxy: true` with a proxy set in the environment fails), GSSAPI, netrc.',
  ].join('\n\n'),
  schema: Type.Object(
    {
      url: Type.String({ description: 'HTTP or HTTPS URL.', examples: ['https://{{ ingress_host }}/healthz'] }),
      method: Default(Type.String({ description: 'HTTP method (uppercase word).' }), 'GET'),
      body: Type.Optional(Type.Unknown({ description: 'Request body: text, or (with `body_format: json|form-urlencoded`) data to encode.' })),
      body_format: Default(StringEnum(['raw', 'json', 'form-urlencoded', 'form-multipart'], { description: 'How `body` is encoded; `json` and `form-urlencoded` also set Content-Type.' }), 'raw'),
      src: Type.Optional(Type.String({ description: 'Send this local file as the body (relative: looked up in the playbook\'s `files/`).' })),
      remote_src: Default(Type.Boolean({ description: '`src` is a path on this machine (relative to the working directory).' }), false),
      headers: Default(Type.Record(Type.String(), Type.Unknown(), { description: 'Request headers (values as text).' }), {}),
      status_code: Default(Type.Union([Type.Array(Type.Integer()), Type.Integer(), Type.String()], { description: 'Statuses that count as success: a list, one number, or numbers separated by commas.' }), [200]),
      return_content: Default(Type.Boolean({ description: 'Put the body in the result as `content` (and `json`).' }), false),
      timeout: Default(Type.Number({ exclusiveMinimum: 0, description: 'Socket timeout in seconds.' }), 30),
      follow_redirects: Default(StringEnum(['all', 'no', 'none', 'safe', 'urllib2', 'yes'], { description: '`safe`: follow redirects of GET/HEAD only; `all`/`yes`: every one; `none`/`no`: none.' }), 'safe'),
      url_username: Type.Optional(Type.String({ description: 'User for basic auth (alias `user`).' })),
      user: Type.Optional(Type.String({ description: 'Alias of `url_username`.' })),
      url_password: Type.Optional(Type.String({ description: 'Password for basic auth (alias `password`); masked.' })),
      password: Type.Optional(Type.String({ description: 'Alias of `url_password`.' })),
      force_basic_auth: Default(Type.Boolean({ description: 'Send the credentials with the first request instead of after a 401 challenge.' }), false),
      validate_certs: Default(Type.Boolean({ description: 'Check the server\'s TLS certificate.' }), true),
      ca_path: Type.Optional(Type.String({ description: 'CA bundle (PEM) to check the certificate with.' })),
      client_cert: Type.Optional(Type.String({ description: 'Client certificate (PEM).' })),
      client_key: Type.Optional(Type.String({ description: 'Key of the client certificate (PEM).' })),
      decompress: Default(Type.Boolean({ description: 'Decompress a gzip/deflate response.' }), true),
      dest: Type.Optional(Type.String({ description: 'Save the body to this file (a directory: the name from the URL); then changed.' })),
      creates: Type.Optional(Type.String({ description: 'Do not request when this path exists.' })),
      removes: Type.Optional(Type.String({ description: 'Do not request when this path does not exist.' })),
      mode: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: 'Permissions of `dest`.' })),
      owner: Type.Optional(Type.String({ description: 'Owner of `dest`.' })),
      group: Type.Optional(Type.String({ description: 'Group of `dest`.' })),
      http_agent: Default(Type.String({ description: 'User-Agent header.' }), 'ansible-httpget'),
      use_proxy: Default(Type.Boolean({ description: 'Ansible uses the proxy of the environment; kplay connects directly (fails when true and a proxy is set for the URL).' }), true),
    },
    { additionalProperties: false },
  ),
  result: Type.Object(
    {
      status: Type.Optional(Type.Integer({ description: 'HTTP status (-1: no response).' })),
      url: Type.Optional(Type.String({ description: 'The final URL (password masked).' })),
      redirected: Type.Optional(Type.Boolean({ description: 'Whether a redirect was followed.' })),
      elapsed: Type.Optional(Type.Integer({ description: 'Whole seconds the request took.' })),
      content: Type.Optional(Type.String({ description: 'The body (with `return_content`).' })),
      json: Type.Optional(Type.Unknown({ description: 'The body parsed, for a JSON response.' })),
      cookies: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Cookies set by the server.' })),
      cookies_string: Type.Optional(Type.String({ description: 'The cookies as a Cookie header.' })),
      path: Type.Optional(Type.String({ description: 'Where the body was saved (`dest`).' })),
      stdout: Type.Optional(Type.String({ description: 'Why it did not run (`creates`/`removes`).' })),
    },
    { additionalProperties: Type.Unknown({ description: 'Each response header, lowercased, `-` as `_` (`content_type`, `content_length`, `location`…).' }) },
  ),
  diffMode: 'unsupported',
  checkMode: 'unsupported',
  examples: [
    { title: 'Call an API with a token', yaml: '- uri:\n    url: https://api.example.com/v1/deploys\n    method: POST\n    body_format: json\n    body: { version: "{{ version }}" }\n    headers: { Authorization: "Bearer {{ api_token }}" }\n    status_code: [200, 201]\n    return_content: true\n  register: deploy' },
  ],
  async run(args, ctx) {
    const password = args.url_password ?? args.password;
    if (password) ctx.addSecret(password);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(args.headers)) headers[k] = typeof v === 'string' ? v : JSON.stringify(v);
    for (const v of secretHeaderValues(headers)) ctx.addSecret(v);
    const masked = maskUrl(args.url);
    if (masked !== args.url) {
      try {
        ctx.addSecret(decodeURIComponent(new URL(args.url).password));
      } catch {
        // not a URL: fails below
      }
    }
    const codes = typeof args.status_code === 'number' ? [args.status_code] : typeof args.status_code === 'string' ? args.status_code.split(',').map((c) => Number(c.trim())) : args.status_code;
    if (codes.some((c) => !Number.isInteger(c))) return { status: 'failed', msg: `status_code: ${JSON.stringify(args.status_code)} is not a list of integers` };
    const method = args.method.toUpperCase();
    if (!/^[A-Z]+$/.test(args.method)) return { status: 'failed', msg: "Parameter 'method' needs to be a single word in uppercase, like GET or POST." };
    if (args.body !== undefined && args.src !== undefined) return { status: 'failed', msg: 'parameters are mutually exclusive: body|src' };
    if (args.body_format === 'form-multipart') return { status: 'failed', msg: 'uri: body_format form-multipart is not supported by kplay (use raw with a body you build, or json)' };
    if (args.use_proxy && (process.env.https_proxy || process.env.HTTPS_PROXY || process.env.http_proxy || process.env.HTTP_PROXY)) {
      const host = (() => {
        try {
          return new URL(args.url).hostname;
        } catch {
          return '';
        }
      })();
      const noProxy = (process.env.no_proxy ?? process.env.NO_PROXY ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      if (!noProxy.some((n) => n === '*' || host === n || host.endsWith(n.startsWith('.') ? n : `.${n}`)) && host !== 'localhost' && host !== '127.0.0.1') {
        return { status: 'failed', msg: 'uri: a proxy is set in the environment, and kplay does not use proxies: set use_proxy: false to connect directly' };
      }
    }
    const hasType = Object.keys(headers).some((h) => h.toLowerCase() === 'content-type');
    let body: Buffer | undefined;
    if (args.src !== undefined) {
      const f = args.remote_src ? localPath(args.src) : findSource(ctx, args.src, 'files');
      if (!existsSync(f)) return { status: 'failed', msg: `Could not find or access '${args.src}' (looked at ${f})` };
      body = readFileSync(f);
    } else if (args.body !== undefined && args.body !== null) {
      let text: string;
      if (args.body_format === 'json') {
        text = typeof args.body === 'string' ? args.body : pyJson(args.body);
        if (!hasType) headers['Content-Type'] = 'application/json';
      } else if (args.body_format === 'form-urlencoded') {
        if (typeof args.body === 'string') text = args.body;
        else if (typeof args.body === 'object') text = formEncode(args.body);
        else return { status: 'failed', msg: 'failed to parse body as form_urlencoded: not a map or a list of pairs', data: { elapsed: 0 } };
        if (!hasType) headers['Content-Type'] = 'application/x-www-form-urlencoded';
      } else text = typeof args.body === 'string' ? args.body : pyJson(args.body);
      body = Buffer.from(text, 'utf8');
    }
    // Python's urllib sends a body as a form unless told otherwise
    if (body !== undefined && !hasType && headers['Content-Type'] === undefined) headers['Content-Type'] = 'application/x-www-form-urlencoded';
    if (args.creates !== undefined && existsSync(localPath(args.creates))) return { status: 'ok', data: { stdout: `skipped, since '${args.creates}' exists` } };
    if (args.removes !== undefined && !existsSync(localPath(args.removes))) return { status: 'ok', data: { stdout: `skipped, since '${args.removes}' does not exist` } };
    const started = Date.now();
    const r = await httpRequest({
      url: args.url,
      method,
      headers: { 'User-Agent': args.http_agent, ...headers },
      body,
      followRedirects: args.follow_redirects,
      timeoutMs: args.timeout * 1000,
      validateCerts: args.validate_certs,
      username: args.url_username ?? args.user,
      password,
      forceBasicAuth: args.force_basic_auth,
      decompress: args.decompress,
      caPath: args.ca_path,
      clientCert: args.client_cert,
      clientKey: args.client_key,
      signal: ctx.signal,
    });
    const elapsed = Math.floor((Date.now() - started) / 1000);
    const data: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(r.headers)) data[k.replace(/-/g, '_')] = v;
    if (typeof data.location === 'string') {
      try {
        data.location = new URL(data.location, masked).toString();
      } catch {
        // leave it
      }
    }
    Object.assign(data, { redirected: r.url !== masked && maskUrl(r.url) !== masked, url: maskUrl(r.url), status: r.status, msg: r.msg, elapsed, cookies: r.cookies, cookies_string: r.cookiesString });
    const ctype = (r.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    const sub = ctype.split('/')[1] ?? '';
    const maybeJson = JSON_TYPES.includes(sub.includes('+') ? (sub.split('+')[1] as string) : sub);
    const ok = codes.includes(r.status);
    let changed = false;
    if (args.dest !== undefined && r.status >= 0) {
      let dest = localPath(args.dest);
      if (existsSync(dest) && statSync(dest).isDirectory()) dest = path.join(dest, path.basename(new URL(r.url).pathname) || 'index.html');
      if (ok && r.status !== 304) {
        const w = await writeDest({ dest, content: r.body, mode: args.mode, owner: args.owner, group: args.group, force: true, backup: false }, ctx);
        if (w.status === 'failed') return { status: 'failed', msg: w.msg, data };
        changed = true;
      }
      data.path = dest;
    }
    if (maybeJson || args.return_content || !ok) {
      const text = r.body.toString('utf8');
      if (maybeJson) {
        try {
          data.json = JSON.parse(text) as unknown;
        } catch {
          // not JSON after all
        }
      }
      if (args.return_content) data.content = text;
    }
    const msg = String(data.msg);
    delete data.msg;
    if (!ok) return { status: 'failed', msg: `Status code was ${r.status} and not [${codes.join(', ')}]: ${msg}`, data };
    return { status: changed ? 'changed' : 'ok', msg, data };
  },
});

/** Python's `json.dumps` (separators `, ` and `: `, non-ASCII escaped). */
function pyJson(v: unknown): string {
  const esc = (s: string): string => JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const walk = (x: unknown): string => {
    if (x === null || x === undefined) return 'null';
    if (typeof x === 'string') return esc(x);
    if (typeof x === 'number' || typeof x === 'boolean') return JSON.stringify(x);
    if (Array.isArray(x)) return `[${x.map(walk).join(', ')}]`;
    return `{${Object.entries(x as Record<string, unknown>).map(([k, val]) => `${esc(k)}: ${walk(val)}`).join(', ')}}`;
  };
  return walk(v);
}

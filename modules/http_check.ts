/**
 * `http_check`: probe an HTTP(S) endpoint and assert on its answer (status, body, JSON).
 *
 * Uses node's `http`/`https` modules (not `fetch`) so TLS is fully under control:
 * certificate validation, a private CA, and client certificates.
 */
import { readFile } from 'node:fs/promises';
import * as http from 'node:http';
import * as https from 'node:https';
import { defineModule, MASK, errorMessage, sleep, Default, Type, type Args, type ModuleContext, type ModuleResult, type Static } from 'kplay/sdk';

/** Largest body kept in the result (`body`), in bytes. */
export const MAX_RESULT_BODY = 64 * 1024;
/** Largest body read from the server (checks and JSON parsing use at most this much). */
const MAX_READ_BODY = 16 * 1024 * 1024;
/** Most redirects followed. */
const MAX_REDIRECTS = 10;
/** Header names whose values are secrets. */
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key)$|token/i;

const Code = Type.Integer({ minimum: 100, maximum: 599 });

const schema = Type.Object(
  {
    url: Type.String({ pattern: '^https?://', description: 'URL to request; `http://` or `https://`.', 'x-kplay-example': 'https://web.example.com/healthz' }),
    method: Default(
      Type.String({ pattern: '^[A-Za-z]+$', description: 'HTTP method. In check mode only `GET` and `HEAD` are sent (they are read-only); other methods are skipped.' }),
      'GET',
    ),
    headers: Default(
      Type.Record(Type.String(), Type.String(), {
        description:
          'Request headers. Values of `Authorization`, `Cookie`, `X-Api-Key` and any header whose name contains `token` are registered as secrets and shown as `********`.',
      }),
      {},
    ),
    body: Type.Optional(Type.String({ description: 'Raw request body. Mutually exclusive with `json`.' })),
    json: Type.Optional(
      Type.Unknown({ description: 'Any value, sent as the JSON request body (adds `Content-Type: application/json` unless set in `headers`). Mutually exclusive with `body`.' }),
    ),
    status: Default(Type.Union([Code, Type.Array(Code, { minItems: 1 })], { description: 'Expected status code, or a list of accepted codes.' }), 200),
    body_contains: Type.Optional(Type.String({ description: 'A substring the response body must contain.' })),
    body_regex: Type.Optional(Type.String({ description: 'A regular expression (JavaScript syntax) the response body must match.' })),
    that: Default(
      Type.Union([Type.String(), Type.Array(Type.String())], {
        description:
          'Condition(s) (Ansible expressions) that must all be true, evaluated with `json` (the parsed response, or None), `status`, `headers` (lower-case names) and `body` (the text) besides the task variables. E.g. `json.ready == true`.',
      }),
      [],
    ),
    timeout: Default(Type.Number({ exclusiveMinimum: 0, description: 'Timeout of one attempt (connect, request and whole response), in seconds.' }), 10),
    retries: Default(Type.Integer({ minimum: 0, description: 'How many more attempts after a failed one (bad status, failed check, network error or timeout).' }), 0),
    delay: Default(Type.Number({ minimum: 0, description: 'Seconds to wait between attempts.' }), 1),
    validate_certs: Default(Type.Boolean({ description: 'Verify the server certificate (chain and host name). Set `false` only for throw-away test endpoints.' }), true),
    ca_file: Type.Optional(Type.String({ description: 'PEM file with the CA certificate(s) to trust instead of the system CAs; relative to the playbook directory.' })),
    client_cert: Type.Optional(Type.String({ description: 'PEM client certificate file for mutual TLS (with `client_key`); relative to the playbook directory.' })),
    client_key: Type.Optional(Type.String({ description: 'PEM private key file of `client_cert`; relative to the playbook directory.' })),
    follow_redirects: Default(
      Type.Boolean({ description: 'Follow `3xx` redirects (at most 10). `Authorization` and `Cookie` headers are dropped when a redirect leaves the original host.' }),
      true,
    ),
  },
  { additionalProperties: false },
);

/** Arguments of `http_check` (after defaults). */
export type HttpCheckArgs = Args<typeof schema>;

const result = Type.Object({
  url: Type.String({ description: 'The final URL (after redirects).' }),
  method: Type.Optional(Type.String({ description: 'The method (check mode, when the request was not sent).' })),
  status: Type.Optional(Type.Integer({ description: 'Status code of the response.' })),
  headers: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Response headers, lower-case names (secret-looking values masked).' })),
  json: Type.Optional(Type.Unknown({ description: 'The parsed body, when the response is JSON.' })),
  body: Type.Optional(Type.String({ description: 'The body as text when it is not JSON (at most 64 KiB).' })),
  body_truncated: Type.Optional(Type.Boolean({ description: 'True when `body` was cut at 64 KiB.' })),
  redirects: Type.Optional(Type.Integer({ description: 'Redirects followed (absent when none).' })),
  elapsed_ms: Type.Optional(Type.Integer({ description: 'Duration of the last attempt, in milliseconds.' })),
  attempts: Type.Optional(Type.Integer({ description: 'Attempts made.' })),
});

/** What `http_check` registers besides changed/failed/msg. */
type HttpCheckResult = Static<typeof result>;

/** One HTTP exchange's outcome. */
interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  truncated: boolean;
  url: string;
  redirects: number;
}

/** TLS material and per-request options shared by all attempts. */
interface RequestPlan {
  method: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  timeoutMs: number;
  followRedirects: boolean;
  tls: https.RequestOptions;
}

/** An attempt failed in a way worth retrying; `msg` is the user-facing reason. */
interface AttemptFailure {
  msg: string;
  response?: HttpResponse;
}

function headerValue(v: string | string[] | undefined): string {
  if (v === undefined) return '';
  return Array.isArray(v) ? v.join(', ') : v;
}

function isJsonContentType(ct: string): boolean {
  return /^application\/(.+\+)?json\b/i.test(ct.trim()) || /^[^;]*\+json\b/i.test(ct.trim());
}

/** Perform ONE request (following redirects). Rejects with an Error for network errors and timeouts. */
function requestOnce(url: string, plan: RequestPlan, signal: AbortSignal): Promise<HttpResponse> {
  const deadline = Date.now() + plan.timeoutMs;
  const originalHost = new URL(url).host;

  const step = (current: string, method: string, body: Buffer | undefined, redirects: number): Promise<HttpResponse> =>
    new Promise<HttpResponse>((resolve, reject) => {
      const u = new URL(current);
      const isHttps = u.protocol === 'https:';
      const headers: Record<string, string> = { ...plan.headers };
      if (u.host !== originalHost) {
        for (const k of Object.keys(headers)) if (/^(authorization|cookie|proxy-authorization)$/i.test(k)) delete headers[k];
      }
      if (body === undefined) {
        for (const k of Object.keys(headers)) if (/^content-(type|length)$/i.test(k)) delete headers[k];
      } else if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-length')) {
        headers['content-length'] = String(body.length);
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) return reject(new Error(`timed out after ${plan.timeoutMs / 1000}s`));

      const opts: https.RequestOptions = {
        method,
        headers,
        agent: false,
        signal,
        ...(isHttps ? plan.tls : {}),
      };
      let settled = false;
      let timedOut = false;
      const finish = (err: Error | undefined, value?: HttpResponse): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(timedOut ? new Error(`timed out after ${plan.timeoutMs / 1000}s`) : err);
        else if (value) resolve(value);
      };
      const req = (isHttps ? https : http).request(u, opts, (res) => {
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (plan.followRedirects && [301, 302, 303, 307, 308].includes(status) && location) {
          res.resume();
          if (redirects >= MAX_REDIRECTS) {
            return finish(new Error(`too many redirects (more than ${MAX_REDIRECTS}), last to ${location}`));
          }
          let next: URL;
          try {
            next = new URL(location, u);
          } catch {
            return finish(new Error(`invalid redirect location ${JSON.stringify(location)}`));
          }
          if (next.protocol !== 'http:' && next.protocol !== 'https:') return finish(new Error(`refusing redirect to ${next.toString()}`));
          settled = true;
          clearTimeout(timer);
          const toGet = status === 303 || ((status === 301 || status === 302) && method === 'POST');
          const nextMethod = toGet && method !== 'HEAD' ? 'GET' : method;
          step(next.toString(), nextMethod, toGet ? undefined : body, redirects + 1).then(resolve, reject);
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        res.on('data', (c: Buffer) => {
          if (size >= MAX_READ_BODY) {
            truncated = true;
            return;
          }
          chunks.push(c);
          size += c.length;
        });
        res.on('error', (e) => finish(e));
        res.on('close', () => {
          if (!res.complete) finish(new Error('connection closed before the response was complete'));
        });
        res.on('end', () => {
          const h: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) h[k.toLowerCase()] = headerValue(v);
          finish(undefined, { status, headers: h, body: Buffer.concat(chunks), truncated, url: current, redirects });
        });
      });
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy(new Error(`timed out after ${plan.timeoutMs / 1000}s`));
      }, remaining);
      req.on('error', (e) => finish(e));
      if (body !== undefined) req.write(body);
      req.end();
    });

  return step(url, plan.method, plan.body, 0);
}

/** Describe a network error, adding the code (ECONNREFUSED, CERT_…) where node gives one. */
function describeNetError(err: unknown): string {
  const msg = errorMessage(err);
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && !msg.includes(code) ? `${msg} (${code})` : msg;
}

function snippet(body: Buffer, n = 200): string {
  const s = body.subarray(0, n * 4).toString('utf8');
  const cut = s.length > n ? `${s.slice(0, n)}…` : s;
  // Quote without escaping the (often JSON) content; only make control characters visible.
  // eslint-disable-next-line no-control-regex
  return `'${cut.replace(/[\u0000-\u001f]/g, (c) => (c === '\n' ? '\\n' : c === '\t' ? '\\t' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`))}'`;
}

/** Response headers as shown in results: secret-looking values replaced by `********`. */
function shownHeaders(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k] = SECRET_HEADER.test(k) ? MASK : v;
  return out;
}

async function readPem(path: string, ctx: ModuleContext, what: string): Promise<Buffer> {
  const full = ctx.findFile(path, 'files');
  try {
    return await readFile(full);
  } catch (e) {
    throw new Error(`cannot read ${what} ${full}: ${describeNetError(e)}`);
  }
}

export default defineModule({
  name: 'http_check',
  summary: 'Probe an HTTP(S) endpoint and assert on its status, body or JSON (never changes anything)',
  description: [
    'Sends one request (following redirects) and checks the answer: the status code, a substring or',
    'regular expression of the body, and conditions over the parsed JSON. With `retries`, failed',
    'attempts are repeated after `delay` seconds. The result is never `changed`.',
    '',
    'The registered result has `status`, `headers`, `json` (when the response is JSON) or `body` (the text,',
    'truncated to 64 KiB), `elapsed_ms`, `url` (the final URL after redirects) and `attempts`.',
    '',
    'TLS is verified by default; trust a private CA with `ca_file`, authenticate with `client_cert`/`client_key`.',
    '',
    '**Check mode**: `GET` and `HEAD` requests are still sent, since they are read-only; other methods are',
    'skipped.',
  ].join('\n'),
  schema,
  result,
  checkMode: 'supported',
  diffMode: 'unsupported',
  examples: [
    {
      title: 'Wait until the new version answers healthy',
      yaml: [
        '- name: web is healthy',
        '  http_check:',
        '    url: https://web.example.com/healthz',
        '    status: 200',
        '    that:',
        '      - json.status == "ok"',
        '      - json.version == new_version',
        '    retries: 30',
        '    delay: 2',
      ].join('\n'),
    },
    {
      title: 'Call an internal API with a token and a private CA',
      yaml: [
        '- http_check:',
        '    url: https://api.internal:8443/v1/ready',
        '    headers:',
        '      Authorization: "Bearer {{ api_token }}"',
        '    ca_file: files/internal-ca.pem',
        '    body_regex: "ready: (true|yes)"',
        '  register: ready',
      ].join('\n'),
    },
  ],

  async run(args, ctx): Promise<ModuleResult<HttpCheckResult>> {
    const method = args.method.toUpperCase();
    const expected = Array.isArray(args.status) ? args.status : [args.status];
    const conditions = Array.isArray(args.that) ? args.that : [args.that];
    const attempts = args.retries + 1;
    const delayMs = args.delay * 1000;
    const timeoutMs = args.timeout * 1000;

    if (args.body !== undefined && args.json !== undefined) {
      return { status: 'failed', msg: 'http_check: `body` and `json` are mutually exclusive' };
    }
    if ((args.client_cert === undefined) !== (args.client_key === undefined)) {
      return { status: 'failed', msg: 'http_check: `client_cert` and `client_key` must be given together' };
    }
    let regex: RegExp | undefined;
    if (args.body_regex !== undefined) {
      try {
        regex = new RegExp(args.body_regex);
      } catch (e) {
        return { status: 'failed', msg: `http_check: invalid body_regex: ${errorMessage(e)}` };
      }
    }

    // Secrets first, so nothing below can leak them.
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(args.headers)) {
      headers[k] = v;
      if (SECRET_HEADER.test(k)) {
        ctx.addSecret(v);
        const m = /^\s*(bearer|basic|token)\s+(.+)$/i.exec(v);
        if (m?.[2]) ctx.addSecret(m[2]);
      }
    }
    try {
      const pw = new URL(args.url).password;
      if (pw) ctx.addSecret(decodeURIComponent(pw));
    } catch {
      return { status: 'failed', msg: `http_check: invalid url ${JSON.stringify(ctx.mask(args.url))}` };
    }
    let body: Buffer | undefined;
    if (args.json !== undefined) {
      body = Buffer.from(JSON.stringify(args.json), 'utf8');
      if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    } else if (args.body !== undefined) {
      body = Buffer.from(args.body, 'utf8');
    }

    if (ctx.checkMode && method !== 'GET' && method !== 'HEAD') {
      return {
        status: 'skipped',
        msg: `check mode: would send ${method} ${ctx.mask(args.url)} (only GET and HEAD are sent in check mode)`,
        data: { url: args.url, method },
      };
    }

    const tls: https.RequestOptions = { rejectUnauthorized: args.validate_certs };
    try {
      if (args.ca_file) tls.ca = await readPem(args.ca_file, ctx, 'ca_file');
      if (args.client_cert) tls.cert = await readPem(args.client_cert, ctx, 'client_cert');
      if (args.client_key) tls.key = await readPem(args.client_key, ctx, 'client_key');
    } catch (e) {
      return { status: 'failed', msg: `http_check: ${errorMessage(e)}` };
    }
    const plan: RequestPlan = { method, headers, body, timeoutMs, followRedirects: args.follow_redirects, tls };

    const target = `${method} ${ctx.mask(args.url)}`;
    let last: AttemptFailure = { msg: 'no attempt made' };
    let lastElapsed = 0;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) {
        if (!(await sleep(delayMs, ctx.signal))) break;
      }
      if (ctx.signal.aborted) break;
      const started = Date.now();
      const outcome = await attemptOnce(args.url, plan, ctx, { expected, regex, contains: args.body_contains, conditions });
      lastElapsed = Date.now() - started;
      const of = `attempt ${attempt}/${attempts}`;
      if ('ok' in outcome) {
        return {
          status: 'ok',
          msg: `${target} → ${outcome.ok.status} (${of}, ${lastElapsed} ms)`,
          data: resultData(outcome.ok, lastElapsed, attempt),
        };
      }
      last = outcome.failure;
      if (attempt < attempts) ctx.log.info(ctx.mask(`http_check ${target}: ${last.msg} (${of}); retrying in ${delayMs / 1000}s`));
      else {
        return {
          status: 'failed',
          msg: ctx.mask(`http_check ${target}: ${last.msg} (${of})`),
          data: last.response ? resultData(last.response, lastElapsed, attempt) : { url: args.url, attempts: attempt, elapsed_ms: lastElapsed },
        };
      }
    }
    return { status: 'failed', msg: `http_check ${target}: aborted (last result: ${last.msg})` };
  },
});

/** Checks one attempt's response must pass. */
interface Expectations {
  expected: number[];
  regex: RegExp | undefined;
  contains: string | undefined;
  conditions: string[];
}

/** Parse the body as JSON when the content type says so (or when `force`); `undefined` when it is not JSON. */
function parseJson(res: HttpResponse, force: boolean): { value: unknown } | undefined {
  const ct = res.headers['content-type'] ?? '';
  if (!force && !isJsonContentType(ct)) return undefined;
  if (res.truncated || res.body.length === 0) return undefined;
  try {
    return { value: JSON.parse(res.body.toString('utf8')) as unknown };
  } catch {
    return undefined;
  }
}

/** Do one attempt: request + all checks. */
async function attemptOnce(
  url: string,
  plan: RequestPlan,
  ctx: ModuleContext,
  exp: Expectations,
): Promise<{ ok: HttpResponse } | { failure: AttemptFailure }> {
  let res: HttpResponse;
  try {
    res = await requestOnce(url, plan, ctx.signal);
  } catch (e) {
    return { failure: { msg: ctx.signal.aborted ? 'aborted' : `request failed: ${describeNetError(e)}` } };
  }
  const got = (what: string): string => `${what}; got status ${res.status}, body ${snippet(res.body)}`;
  if (!exp.expected.includes(res.status)) {
    const want = exp.expected.length === 1 ? String(exp.expected[0]) : `one of ${exp.expected.join(', ')}`;
    return { failure: { msg: `expected status ${want}, got ${res.status}, body ${snippet(res.body)}`, response: res } };
  }
  const text = res.body.toString('utf8');
  if (exp.contains !== undefined && !text.includes(exp.contains)) {
    return { failure: { msg: got(`expected body to contain ${JSON.stringify(exp.contains)}`), response: res } };
  }
  if (exp.regex && !exp.regex.test(text)) {
    return { failure: { msg: got(`expected body to match /${exp.regex.source}/`), response: res } };
  }
  if (exp.conditions.length > 0) {
    const parsed = parseJson(res, true);
    const vars = { json: parsed ? parsed.value : null, status: res.status, headers: res.headers, body: text };
    for (const cond of exp.conditions) {
      let ok: boolean;
      try {
        ok = await ctx.evalCondition(cond, vars);
      } catch (e) {
        return { failure: { msg: got(`condition ${JSON.stringify(cond)} could not be evaluated: ${errorMessage(e)}`), response: res } };
      }
      if (!ok) return { failure: { msg: got(`expected condition ${JSON.stringify(cond)} to be true`), response: res } };
    }
  }
  return { ok: res };
}

function resultData(res: HttpResponse, elapsedMs: number, attempts: number): HttpCheckResult {
  const data: HttpCheckResult = {
    status: res.status,
    headers: shownHeaders(res.headers),
    url: res.url,
    elapsed_ms: elapsedMs,
    attempts,
  };
  if (res.redirects > 0) data.redirects = res.redirects;
  const parsed = parseJson(res, false);
  if (parsed) data.json = parsed.value;
  else {
    const truncated = res.truncated || res.body.length > MAX_RESULT_BODY;
    data.body = res.body.subarray(0, MAX_RESULT_BODY).toString('utf8');
    if (truncated) data.body_truncated = true;
  }
  return data;
}

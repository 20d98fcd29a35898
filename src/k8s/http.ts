/**
 * HTTP transport of the Kubernetes client: keep-alive agents per cluster (one for requests, one
 * for watches, so a long-lived stream never holds a request's socket), a client-side
 * rate limit (token bucket, rate-limit.ts), and retries with exponential backoff + jitter for
 * what is safe to retry (the per-verb policy: retry.ts). Plain node `http`/`https` so TLS (CA,
 * client certificates; tls-context.ts) is fully under control.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import * as tls from 'node:tls';
import type { ClientStats, RequestVerb } from './types.js';
import { errCode } from './errors.js';
import { proxyAgent, type ProxySettings } from './proxy.js';
import { DEFAULT_RETRY, isPermanent500, parseRetryAfter, retryDelay, type AttemptOutcome, type RetryClass, type RetryPolicy } from './retry.js';
import { abortReason, sleepOrThrow, TokenBucket } from './rate-limit.js';
import { describePhase, type RequestPhase } from './request-phase.js';
import { withSecureContext } from './tls-context.js';
import { acceptFor, newKey } from './websocket.js';
import type { Duplex } from 'node:stream';

/** TLS and auth material for the transport. */
export interface TransportAuth {
  /** Headers to send (Authorization, Impersonate-User, …); re-evaluated so exec-plugin tokens can refresh. */
  headers(): Promise<Record<string, string | string[]>>;
  /** Called after a 401 so the next `headers()` fetches fresh credentials. */
  invalidate?(): void;
}

/** Options of a {@link Transport}. */
export interface TransportOptions {
  /** Inventory name of the cluster (for messages). */
  cluster: string;
  /** API server URL, e.g. `https://127.0.0.1:6443`. */
  server: string;
  /** TLS options for the agent (ca, cert, key, rejectUnauthorized, servername). */
  tls?: https.AgentOptions;
  auth?: TransportAuth;
  /** Client QPS. @default 50 */
  qps?: number;
  /** Client burst. @default 300 */
  burst?: number;
  /** @default DEFAULT_RETRY */
  retry?: Partial<RetryPolicy>;
  /** Per-request timeout in ms (whole response) for non-streaming requests. @default 60000 */
  timeoutMs?: number;
  /**
   * Max sockets of the request agent (watches have their own agent, without a limit). Each
   * socket costs a TLS handshake on both ends; a request waiting for a socket costs a round
   * trip. @default DEFAULT_MAX_SOCKETS
   */
  maxSockets?: number;
  /** Counters to update. */
  stats?: ClientStats;
  /** Reach the server through this proxy (CONNECT tunnels). */
  proxy?: ProxySettings;
  /** The reachability to share with the other transports of one connection (see {@link Transport.reachability}). */
  reachability?: Reachability;
}

/**
 * The apiserver's reachability as every client of one connection saw it: whether a request was
 * ever answered, and since when (epoch ms) requests have failed (refused, or not answered
 * whole within their bound).
 */
export interface Reachability {
  reached: boolean;
  downSince?: number;
}

/** One request. */
export interface TransportRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path without query, e.g. `/api/v1/namespaces/x/pods`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  accept?: string;
  retry: RetryClass;
  /** Counts as a write in stats (mutating and not dry-run). */
  write?: boolean;
  /** The verb counted in stats when the method does not tell (`list`, `discovery`, `apply`). */
  verb?: RequestVerb;
  signal?: AbortSignal;
  /** Overrides the transport's timeout. */
  timeoutMs?: number;
  /**
   * Epoch ms after which a failed connection is not retried here: the caller's outage bound
   * (see `KubeRequests.outageBudgetMs`, requests.ts), so the transport's backoff cannot outlast it.
   */
  deadline?: number;
}

/** The verb of a request for the stats: dry-runs and watches by their query, then `req.verb`, then the method. */
function verbOf(req: TransportRequest): RequestVerb {
  if (req.query?.dryRun) return 'dryrun';
  if (req.query?.watch) return 'watch';
  if (req.verb) return req.verb;
  return req.method === 'GET' ? 'get' : req.method === 'POST' ? 'create' : req.method === 'PUT' ? 'update' : req.method === 'PATCH' ? 'patch' : 'delete';
}

/** A buffered response. */
export interface TransportResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Attempts it took (1: answered at once); retries after a 401 refresh are not counted. */
  attempts?: number;
  /** What the first failed attempt met (`500 InternalError`, `ECONNRESET`), when there was one. */
  firstFailure?: string;
}

/** A network error with the context of the request. */
export class TransportError extends Error {
  override name = 'TransportError';
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly sent: boolean,
    readonly timeout: boolean,
  ) {
    super(message);
  }
}

/**
 * Sockets per cluster for requests. A busy apply keeps 16 requests in flight (`applyObjects`), and
 * an apiserver answers a local request in a few milliseconds, so 8 sockets stay busy; each more
 * costs a TLS handshake (the client's and the apiserver's CPU) before it carries anything.
 * Measured on B8's no-op (32 requests, most of them at once): 32 sockets cost 14–80 ms more than
 * 4–8 (test/bench/README.md). client-go multiplexes everything over one HTTP/2 connection.
 */
export const DEFAULT_MAX_SOCKETS = 8;

/** HTTP(S) with keep-alive agents (requests, watches), rate limiting and retries. */
export class Transport {
  /** The agent of requests (at most `maxSockets` sockets). */
  readonly agent: http.Agent;
  /** The agent of watches (see {@link open}): a stream holds its socket until it ends, so no limit. */
  readonly streamAgent: http.Agent;
  readonly stats: ClientStats;
  private readonly bucket: TokenBucket;
  private readonly retry: RetryPolicy;
  private readonly url: URL;
  private readonly mod: typeof http | typeof https;
  /** Called with the path of each write sent until they return true; see {@link KubeClient.onWrite}. */
  readonly writeHooks: ((path: string) => boolean)[] = [];
  /**
   * The apiserver's reachability as every client of this connection saw it: whether a request
   * was ever answered, and since when (epoch ms) requests have failed to connect. One clock per
   * connection, so an outage is bounded once, whichever request, retry loop or background writer
   * (lock renewal, run record) meets it; an answered request ends it.
   */
  readonly reachability: Reachability;

  constructor(readonly opts: TransportOptions) {
    this.reachability = opts.reachability ?? { reached: false };
    this.url = new URL(opts.server);
    const isHttps = this.url.protocol === 'https:';
    this.mod = isHttps ? https : http;
    const secure = isHttps ? withSecureContext(opts.tls ?? {}) : {};
    const agentOf = (maxSockets: number): http.Agent => {
      const agentOpts = { keepAlive: true, maxSockets, ...secure };
      return opts.proxy ? proxyAgent(opts.proxy, isHttps, agentOpts) : isHttps ? new https.Agent(agentOpts) : new http.Agent(agentOpts);
    };
    this.agent = agentOf(opts.maxSockets ?? DEFAULT_MAX_SOCKETS);
    this.streamAgent = agentOf(Infinity);
    // kubectl's discovery burst: a maintenance window's few hundred objects go out at once; the
    // server's priority and fairness is the real protection, and its 429s are retried.
    this.bucket = new TokenBucket(opts.qps ?? 50, opts.burst ?? 300);
    this.retry = { ...DEFAULT_RETRY, ...(opts.retry ?? {}) };
    this.stats = opts.stats ?? { requests: 0, writes: 0, retries: 0, byVerb: {}, notFound: 0 };
  }

  /** Base URL path prefix of the server (usually empty). */
  private fullPath(path: string, query?: TransportRequest['query']): string {
    const prefix = this.url.pathname.replace(/\/$/, '');
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) qs.set(k, String(v));
    const q = qs.toString();
    return `${prefix}${path}${q ? `?${q}` : ''}`;
  }

  /** Send a request with retries; resolves with the final response (any status). */
  async request(req: TransportRequest): Promise<TransportResponse> {
    let attempt = 0;
    let authRetried = false;
    let firstFailure: string | undefined;
    for (;;) {
      attempt++;
      req.signal?.throwIfAborted();
      let outcome: AttemptOutcome;
      let res: TransportResponse | undefined;
      try {
        res = await this.once(req);
        if (res.status === 401 && !authRetried && this.opts.auth?.invalidate) {
          // Credentials may have expired (exec plugin tokens): refresh once.
          authRetried = true;
          this.opts.auth.invalidate();
          this.stats.retries++;
          continue;
        }
        outcome = { kind: 'status', status: res.status, retryAfterSeconds: parseRetryAfter(headerOf(res.headers, 'retry-after')), permanent: res.status === 500 && isPermanent500(res.body) };
      } catch (e) {
        if (req.signal?.aborted) throw abortReason(req.signal);
        if (!(e instanceof TransportError)) throw e;
        outcome = { kind: 'error', code: e.code, sent: e.sent, timeout: e.timeout };
        const delay = retryDelay(req.retry, outcome, attempt, this.retry);
        if (delay === undefined || (req.deadline !== undefined && Date.now() + delay > req.deadline)) throw e;
        firstFailure ??= e.code ?? (e.timeout ? 'a timeout' : 'a network error');
        this.stats.retries++;
        await sleepOrThrow(delay, req.signal);
        continue;
      }
      const delay = retryDelay(req.retry, outcome, attempt, this.retry);
      if (delay === undefined) return { ...res, attempts: attempt - (authRetried ? 1 : 0), ...(firstFailure !== undefined ? { firstFailure } : {}) };
      firstFailure ??= `${res.status} ${statusReason(res)}`;
      this.stats.retries++;
      await sleepOrThrow(delay, req.signal);
    }
  }

  /** One attempt, buffered. */
  private async once(req: TransportRequest): Promise<TransportResponse> {
    const r = await this.open(req, req.timeoutMs ?? this.opts.timeoutMs ?? 60_000);
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      r.res.on('data', (c: Buffer) => chunks.push(c));
      r.res.on('end', () => {
        r.done();
        if (r.res.statusCode === 404) this.stats.notFound++;
        resolve({ status: r.res.statusCode ?? 0, headers: r.res.headers, body: Buffer.concat(chunks).toString('utf8') });
      });
      const received = (): number => chunks.reduce((n, c) => n + c.length, 0);
      r.res.on('error', (e) => {
        r.done();
        reject(r.wrap(e, true, received()));
      });
      r.res.on('aborted', () => {
        r.done();
        reject(r.wrap(Object.assign(new Error('response aborted'), { code: 'ECONNRESET' }), true, received()));
      });
    });
  }

  /**
   * Open a request and resolve with the response headers (the body is left to the caller, for
   * watches). `done()` must be called when finished (clears the timer). A watch (`watch` in the
   * query) goes on {@link streamAgent}: it holds its socket for as long as it streams.
   * @param timeoutMs whole-request timeout; 0 for none
   */
  async open(req: TransportRequest, timeoutMs: number): Promise<{ res: http.IncomingMessage; done: () => void; abort: () => void; wrap: (e: unknown, sent: boolean, bodyBytes?: number) => TransportError }> {
    await this.bucket.take(req.signal);
    const headers: Record<string, string | string[]> = { Accept: req.accept ?? 'application/json', 'User-Agent': 'kplay', ...(await this.opts.auth?.headers()) };
    // The signal may have aborted while waiting for a token or credentials.
    if (req.signal?.aborted) throw abortReason(req.signal);
    let payload: string | undefined;
    if (req.body !== undefined) {
      payload = typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    this.stats.requests++;
    if (req.write) {
      this.stats.writes++;
      for (const h of [...this.writeHooks]) if (h(req.path)) this.writeHooks.splice(this.writeHooks.indexOf(h), 1);
    }
    const verb = verbOf(req);
    this.stats.byVerb[verb] = (this.stats.byVerb[verb] ?? 0) + 1;
    const path = this.fullPath(req.path, req.query);
    const what = `${req.method} ${this.url.origin}${req.path}`;
    return new Promise((resolve, reject) => {
      let sent = false;
      let timedOut = false;
      let timer: NodeJS.Timeout | undefined;
      const started = Date.now();
      const phase: RequestPhase = { at: 'connecting' };
      const wrap = (e: unknown, wasSent: boolean, bodyBytes?: number): TransportError => {
        const code = timedOut ? 'ETIMEDOUT' : errCode(e);
        const msg = timedOut ? `timeout after ${timeoutMs} ms ${describePhase(phase, bodyBytes, Date.now() - started)}` : e instanceof Error ? e.message : String(e);
        return new TransportError(`${what}: ${msg}`, code, wasSent, timedOut);
      };
      const r = this.mod.request(
        { protocol: this.url.protocol, hostname: this.url.hostname.replace(/^\[|\]$/g, ''), port: this.url.port || undefined, method: req.method, path, headers, agent: req.query?.watch ? this.streamAgent : this.agent },
        (res) => {
          phase.at = 'body';
          phase.status = res.statusCode;
          resolve({ res, done: cleanup, abort: () => r.destroy(), wrap });
        },
      );
      r.on('socket', (sock) => {
        // a kept-alive socket is connected already: its connect events fired long ago, and listening
        // for them on every request would pile listeners on it (MaxListenersExceededWarning)
        if (!sock.connecting) {
          phase.at = 'sending';
          return;
        }
        sock.once('connect', () => (phase.at = sock instanceof tls.TLSSocket ? 'tls' : 'sending'));
        if (sock instanceof tls.TLSSocket) sock.once('secureConnect', () => (phase.at = 'sending'));
      });
      const onAbort = (): void => {
        r.destroy(abortReason(req.signal));
      };
      const cleanup = (): void => {
        if (timer) clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
      };
      if (timeoutMs > 0) {
        timer = setTimeout(() => {
          timedOut = true;
          r.destroy(new Error('timeout'));
        }, timeoutMs);
      }
      req.signal?.addEventListener('abort', onAbort, { once: true });
      r.on('finish', () => {
        sent = true;
        if (phase.at !== 'body') phase.at = 'headers';
      });
      r.on('error', (e) => {
        cleanup();
        if (req.signal?.aborted) reject(abortReason(req.signal));
        else reject(wrap(e, sent));
      });
      r.end(payload);
    });
  }

  /**
   * Open a WebSocket to `path` (`?query` already encoded: exec repeats `command`), offering
   * `protocols`; resolves with the upgraded socket and the protocol the server chose. A refusal
   * (not 101) rejects with a {@link TransportError} whose message has the status and the
   * apiserver's message. Goes through the stream agent (TLS, proxy) like a watch.
   */
  async upgrade(path: string, query: string, protocols: readonly string[], signal?: AbortSignal): Promise<{ socket: Duplex; protocol: string; head: Buffer }> {
    await this.bucket.take(signal);
    const key = newKey();
    const headers: Record<string, string | string[]> = {
      'User-Agent': 'kplay', ...(await this.opts.auth?.headers()),
      Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': key, 'Sec-WebSocket-Protocol': protocols.join(', '),
    };
    if (signal?.aborted) throw abortReason(signal);
    this.stats.requests++;
    this.stats.byVerb.create = (this.stats.byVerb.create ?? 0) + 1;
    const full = `${this.fullPath(path)}${query ? `?${query}` : ''}`;
    const what = `GET ${this.url.origin}${path}`;
    return new Promise((resolve, reject) => {
      const r = this.mod.request({ protocol: this.url.protocol, hostname: this.url.hostname.replace(/^\[|\]$/g, ''), port: this.url.port || undefined, method: 'GET', path: full, headers, agent: this.streamAgent });
      const onAbort = (): void => void r.destroy(abortReason(signal));
      signal?.addEventListener('abort', onAbort, { once: true });
      r.on('upgrade', (res, socket, head) => {
        signal?.removeEventListener('abort', onAbort);
        if (res.headers['sec-websocket-accept'] !== acceptFor(key)) {
          socket.destroy();
          reject(new TransportError(`${what}: the server's WebSocket handshake is not valid`, 'EPROTO', true, false));
          return;
        }
        resolve({ socket, protocol: headerOf(res.headers, 'sec-websocket-protocol') ?? '', head });
      });
      r.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          signal?.removeEventListener('abort', onAbort);
          const err = new TransportError(`${what}: ${res.statusCode ?? 0} ${http.STATUS_CODES[res.statusCode ?? 0] ?? ''}`, 'EUPGRADE', true, false);
          reject(Object.assign(err, { status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        });
      });
      r.on('error', (e) => {
        signal?.removeEventListener('abort', onAbort);
        reject(signal?.aborted ? abortReason(signal) : new TransportError(`${what}: ${e.message}`, errCode(e), false, false));
      });
      r.end();
    });
  }

  /** Close the sockets of requests and watches. */
  close(): void {
    this.agent.destroy();
    this.streamAgent.destroy();
  }
}

/** The `reason` of a Status body (`InternalError`), else the HTTP status text. */
function statusReason(res: TransportResponse): string {
  try {
    const v: unknown = JSON.parse(res.body);
    if (typeof v === 'object' && v !== null && typeof (v as { reason?: unknown }).reason === 'string') return (v as { reason: string }).reason;
  } catch {
    // not JSON
  }
  return http.STATUS_CODES[res.status] ?? '';
}

function headerOf(h: http.IncomingHttpHeaders, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

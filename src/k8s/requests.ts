/**
 * Requests to one apiserver, the layer under the client's verbs: error statuses become
 * `KubeApiError`s, a 401 or a network failure an `UnreachableError`, an answer cut short is never
 * data (a read is asked again), and an apiserver that stops answering after it was reached is
 * ridden out within a bound shared by the connection (`KPLAY_OUTAGE_SECONDS`).
 */
import { setting } from '../core/settings.js';
import { UnreachableError } from '../core/module.js';
import { isConnectError, KubeApiError, parseStatus, type KubeStatus } from './errors.js';
import { TransportError, type Transport, type TransportRequest, type TransportResponse } from './http.js';
import { sleepOrThrow } from './rate-limit.js';
import type { ClientStats } from './types.js';
import { parseWarnings } from './warnings.js';

function outageBudgetFromEnv(): number {
  return setting('outageSeconds') * 1000;
}

/** Whether a Content-Type says JSON (`application/json`, `…+json`, with parameters such as `;as=APIGroupDiscoveryList`). */
function isJsonType(v: string | string[] | undefined): boolean {
  const t = (Array.isArray(v) ? v[0] : v)?.split(';')[0]?.trim().toLowerCase();
  return t !== undefined && (t === 'application/json' || t.endsWith('+json'));
}

function httpReason(status: number): string {
  return { 400: 'BadRequest', 403: 'Forbidden', 404: 'NotFound', 405: 'MethodNotAllowed', 409: 'Conflict', 410: 'Gone', 422: 'Invalid', 429: 'TooManyRequests', 500: 'InternalError', 503: 'ServiceUnavailable', 504: 'Timeout' }[status] ?? `HTTP ${status}`;
}

/**
 * The bound of one attempt once the outage bound is spent, ms: the apiserver gets one short
 * chance to show it is back (an answer ends the outage), not a new wait.
 */
const SPENT_ATTEMPT_MS = 2_000;

/** The answer to {@link KubeRequests.call}. */
export interface CallResult {
  status: number;
  /** The parsed JSON (or the text of a non-JSON answer); undefined for an allowed 404. */
  body: unknown;
  /** The apiserver's `Warning` headers. */
  warnings: string[];
  /** Attempts the request took (see `RetryClass`). */
  attempts: number;
  /** What the first failed attempt met, when there was one (`500 InternalError`). */
  firstFailure?: string;
  /** For an allowed 404: the URL is not served (no such resource), rather than no such object. */
  endpointMissing?: boolean;
  /** The answer's text as sent (a pod's log: text that may happen to parse as JSON). */
  text?: string;
}

/**
 * Whether a 404's Status says the URL is not served — `404 page not found` (no Status: the
 * group/version is gone) or `the server could not find the requested resource` (no object
 * named) — rather than that an object (or its namespace) does not exist, which names it.
 */
export function isEndpointMissing(st: KubeStatus | undefined): boolean {
  return !st?.details?.name;
}

/** Requests to one apiserver through one transport (the base of `KubeClientImpl`). */
export class KubeRequests {
  /**
   * How long to ride out an apiserver that stops answering after it was reached in this run (a
   * control-plane restart, an etcd leader change), ms. `KPLAY_OUTAGE_SECONDS` sets it.
   * @default 60000
   */
  outageBudgetMs = outageBudgetFromEnv();
  /** Where to say that the apiserver is unreachable and how long kplay keeps trying. */
  notice: (msg: string) => void = () => undefined;

  /** @param onClose what `close()` does instead of closing the transport (and what it shares) */
  constructor(
    readonly name: string,
    readonly server: string,
    readonly transport: Transport,
    private readonly onClose?: () => void,
  ) {}

  get stats(): ClientStats {
    return this.transport.stats;
  }

  onWrite(fn: (path: string) => boolean): () => void {
    const hooks = this.transport.writeHooks;
    hooks.push(fn);
    return () => {
      const i = hooks.indexOf(fn);
      if (i >= 0) hooks.splice(i, 1);
    };
  }

  /** Close idle connections. */
  close(): void {
    if (this.onClose) this.onClose();
    else this.transport.close();
  }

  // ---------------------------------------------------------------- requests

  /** Send a request; maps network failures to UnreachableError and error statuses to KubeApiError. */
  async call(req: TransportRequest, opts: { allow404?: boolean } = {}): Promise<CallResult> {
    for (let attempt = 1; ; attempt++) {
      const res = await this.send(req);
      this.transport.stats.responseBytes = (this.transport.stats.responseBytes ?? 0) + Buffer.byteLength(res.body);
      if (res.status === 404 && opts.allow404) return { status: 404, body: undefined, warnings: [], attempts: res.attempts ?? 1, endpointMissing: isEndpointMissing(parseStatus(res.body)) };
      if (res.status === 401) throw new UnreachableError(`cluster ${this.name} at ${this.server}: credentials rejected (401 Unauthorized)`);
      if (res.status >= 300) {
        const st = parseStatus(res.body);
        const err = new KubeApiError(res.status, st?.reason ?? httpReason(res.status), st?.message ?? res.body.slice(0, 300), req.method, req.path, this.name, st);
        const attempts = res.attempts ?? 1;
        if (attempts > 1) {
          err.attempts = attempts;
          err.message += ` (${attempts} attempts${res.firstFailure ? `; the first met ${res.firstFailure}` : ''})`;
        }
        throw err;
      }
      let body: unknown;
      try {
        body = res.body ? JSON.parse(res.body) : undefined;
      } catch {
        if (!isJsonType(res.headers['content-type'])) body = res.body;
        else {
          // An answer that says it is JSON and does not parse was cut short (a proxy or LB closed
          // the connection mid-body, cleanly): never data. A read is asked again; anything else
          // is an error — a write's outcome is unknown and must not be guessed from half a body.
          this.transport.stats.retries++;
          if (req.retry === 'read' && attempt < 3 && !req.signal?.aborted) continue;
          throw new TransportError(`cluster ${this.name}: the apiserver's answer to ${req.method} ${req.path} was cut short (${res.body.length} bytes of JSON that does not parse${attempt > 1 ? `, ${attempt} tries` : ''}); check proxies or load balancers between kplay and ${this.server}`, 'EBADBODY', true, false);
        }
      }
      return { status: res.status, body, text: res.body, warnings: parseWarnings(res.headers.warning), attempts: res.attempts ?? 1, ...(res.firstFailure !== undefined ? { firstFailure: res.firstFailure } : {}) };
    }
  }

  /** One request, riding out an outage of the apiserver within the connection's bound. */
  private async send(req: TransportRequest): Promise<TransportResponse> {
    let res: TransportResponse;
    // One outage clock per connection (shared with the other clients and requests on it): a
    // request that meets an outage already under way gets only what is left of the budget.
    const state = this.transport.reachability;
    let noted = 0;
    let tries = 0;
    for (;;) {
      const attemptStarted = Date.now();
      try {
        // Once the apiserver has answered, an outage is bounded from its first failed request:
        // the transport's own backoff stops at the same bound, and so does each attempt — a
        // whole request, however its bytes trickle in (a slow-loris front end), ends by then.
        const deadline = state.reached ? (state.downSince ?? attemptStarted) + this.outageBudgetMs : undefined;
        const bounded = deadline === undefined ? req : { ...req, deadline, timeoutMs: Math.min(req.timeoutMs ?? this.transport.opts.timeoutMs ?? 60_000, Math.max(Math.min(SPENT_ATTEMPT_MS, this.outageBudgetMs), deadline - attemptStarted)) };
        res = await this.transport.request(bounded);
        state.reached = true;
        state.downSince = undefined;
        if (tries) res = { ...res, attempts: (res.attempts ?? 1) + tries };
        break;
      } catch (e) {
        tries++;
        // Refused (or not found, not routed) — or not answered whole within its bound: the
        // apiserver is not serving; a reset connection is not an outage (it is retried as such).
        const down = e instanceof TransportError && (e.timeout || (isConnectError(e) && e.code !== 'ECONNRESET' && e.code !== 'ETIMEDOUT' && e.code !== 'EPIPE'));
        if (!down) throw e;
        state.downSince ??= attemptStarted;
        const started = state.downSince;
        // Nothing was sent (the connection was refused), or the request is safe to repeat.
        const repeatable = !e.sent || req.retry === 'read' || req.retry === 'apply' || req.retry === 'idempotent';
        const left = this.outageBudgetMs - (Date.now() - started);
        if (state.reached && repeatable && left > 0 && !req.signal?.aborted) {
          if (Date.now() - noted >= 10_000) {
            noted = Date.now();
            this.notice(`cluster ${this.name}: apiserver ${this.server} unreachable (${e.code ?? e.message}), retrying for ${Math.ceil(left / 1000)} s more`);
          }
          await sleepOrThrow(Math.min(1000, left), req.signal);
          continue;
        }
        const tried = state.reached ? ` (kept trying for ${Math.round((Date.now() - started) / 1000)} s; KPLAY_OUTAGE_SECONDS sets how long)` : '';
        throw new UnreachableError(`cluster ${this.name} ${e.timeout ? 'did not answer in time' : 'unreachable'} at ${this.server}: ${e.message}${tried}`);
      }
    }
    return res;
  }
}

/**
 * The retry policy of the Kubernetes client, decided per verb: which answers and errors are
 * retried for what a second copy of a request would do, and after how long (exponential backoff
 * with jitter, `Retry-After` honoured).
 */

/**
 * How a request may be retried (decided per verb: what a second copy of the request does if the
 * first one took effect):
 * - `read`: GET/LIST/WATCH — everything transient is retried (429, 5xx, network errors, timeouts);
 * - `apply`: server-side apply (PATCH `application/apply-patch+yaml` with a field manager) — as a
 *   read: the same patch from the same manager gives the same object however often it lands, and
 *   a 500 (an admission webhook that timed out: `failed calling webhook … context deadline
 *   exceeded`) wrote nothing;
 * - `idempotent`: DELETE — 429, 502/503/504, network errors, not 500: a repeated delete whose
 *   first copy took effect answers 404, which reads as "was already absent" (another answer
 *   than the first copy's), so it is repeated only where the first copy most likely never
 *   reached the apiserver's storage;
 * - `unsafe`: POST create (no name-conflict check: `generateName` would make a second object),
 *   PUT, merge and JSON patches (a JSON patch's `add` to a list adds twice) — only 429 and
 *   errors that happened before the request was sent;
 * - `none`: never retried (reachability probes).
 */
export type RetryClass = 'read' | 'apply' | 'idempotent' | 'unsafe' | 'none';

/** What happened on one attempt (input of the retry policy). */
export type AttemptOutcome =
  /** `permanent`: the answer says the request itself is wrong (see {@link isPermanent500}), whatever its status. */
  | { kind: 'status'; status: number; retryAfterSeconds?: number; permanent?: boolean }
  | { kind: 'error'; code?: string; sent: boolean; timeout?: boolean };

/** Retry tuning. */
export interface RetryPolicy {
  /** Attempts after the first one. @default 5 */
  maxRetries: number;
  /** First backoff in ms (doubled per attempt). @default 250 */
  baseDelayMs: number;
  /** Largest backoff in ms. @default 10000 */
  maxDelayMs: number;
}

/** Default retry tuning. */
export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 5, baseDelayMs: 250, maxDelayMs: 10_000 };

const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED', 'UND_ERR_SOCKET']);

/**
 * The retry decision: the delay in ms before the next attempt, or `undefined` to give up.
 * `attempt` is the number of the attempt that just failed (1 = first). `random` is injectable for tests.
 */
export function retryDelay(cls: RetryClass, outcome: AttemptOutcome, attempt: number, policy: RetryPolicy = DEFAULT_RETRY, random: () => number = Math.random): number | undefined {
  if (attempt > policy.maxRetries || cls === 'none') return undefined;
  let retry = false;
  if (outcome.kind === 'status') {
    const s = outcome.status;
    if (outcome.permanent) return undefined;
    if (s === 429) retry = true;
    else if (s === 500) retry = cls === 'read' || cls === 'apply';
    else if (s === 502 || s === 503 || s === 504) retry = cls !== 'unsafe';
  } else {
    const network = outcome.timeout === true || (outcome.code !== undefined && NETWORK_CODES.has(outcome.code));
    if (network) retry = cls !== 'unsafe' || !outcome.sent;
  }
  if (!retry) return undefined;
  // exponential backoff with full jitter, at least half of the step
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const backoff = step / 2 + random() * (step / 2);
  if (outcome.kind === 'status' && outcome.retryAfterSeconds !== undefined && outcome.retryAfterSeconds >= 0) {
    // Honour Retry-After (capped at 60 s), plus a little jitter so clients do not stampede.
    return Math.min(60_000, outcome.retryAfterSeconds * 1000) + random() * 100;
  }
  return backoff;
}

/** Parse a `Retry-After` header (seconds or HTTP date) into seconds. */
export function parseRetryAfter(v: string | undefined, now = Date.now()): number | undefined {
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Number(v.trim());
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, (t - now) / 1000);
}

/**
 * A 500 that no repeat can change: server-side apply cannot type the patch (a manifest field the
 * kind's schema does not declare answers `failed to create typed patch object …`), the same
 * every time — not a webhook or etcd that failed this once.
 */
export function isPermanent500(body: string): boolean {
  return /failed to create typed patch object/.test(body);
}

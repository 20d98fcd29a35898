/**
 * Waiting in the Kubernetes client: the client-side rate limit (a token bucket) and sleeps that
 * stop with the request's signal.
 */
import { sleep } from '../core/sleep.js';

/** A token bucket: `qps` tokens per second, at most `burst` saved up. */
export class TokenBucket {
  private tokens: number;
  private last = Date.now();
  private queue: Promise<void> = Promise.resolve();

  /**
   * @param qps sustained requests per second (<= 0: unlimited)
   * @param burst bucket size
   */
  constructor(
    readonly qps: number,
    readonly burst: number,
  ) {
    this.tokens = burst;
  }

  /** Wait until a token is available, then take it. */
  take(signal?: AbortSignal): Promise<void> {
    if (this.qps <= 0) return Promise.resolve();
    const next = this.queue.then(async () => {
      for (;;) {
        const now = Date.now();
        this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
        this.last = now;
        if (this.tokens >= 1) {
          this.tokens -= 1;
          return;
        }
        signal?.throwIfAborted();
        await sleepOrThrow(Math.ceil(((1 - this.tokens) / this.qps) * 1000), signal);
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/** Sleep that rejects (with {@link abortReason}) when the signal aborts: retries and the QPS bucket stop with the request. */
export async function sleepOrThrow(ms: number, signal?: AbortSignal): Promise<void> {
  if (!(await sleep(ms, signal))) throw abortReason(signal);
}

/** The error to reject with when a signal aborted. */
export function abortReason(signal: AbortSignal | undefined): Error {
  const r: unknown = signal?.reason;
  if (r instanceof Error) return r;
  const e = new Error('aborted');
  e.name = 'AbortError';
  return e;
}

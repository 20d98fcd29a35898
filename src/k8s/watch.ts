/**
 * List-then-watch with `resourceVersion` and bookmarks: re-lists on 410 Gone, resumes from the
 * last resourceVersion when the server ends the stream (it does every `stallMs`, through
 * `timeoutSeconds`), stops when the callback says so, rejects when the signal aborts. A watch that
 * goes silent — accepted, then nothing, not even the server's own timeout (a half-open connection
 * through a load balancer or NAT) — is cut after `stallMs` plus a grace of at most 5 s and the
 * state is re-listed: a fresh LIST is an ordinary request that such a connection cannot swallow,
 * so a wait sees readiness within that bound whatever the watch connection does.
 */
import { createInterface } from 'node:readline';
import type { KubeObject, WatchEvent, WatchOptions } from './types.js';
import { TransportError, type Transport } from './http.js';
import { abortReason, sleepOrThrow } from './rate-limit.js';
import { retryDelay } from './retry.js';
import { KubeApiError, parseStatus } from './errors.js';

/**
 * Default bound on a silent watch, ms: every watch — gates and locks included, not only waits
 * (which use 2.5 s) — notices within it that nothing arrives and re-lists.
 */
export const DEFAULT_STALL_MS = 5_000;

/** What the watch needs from the client. */
export interface WatchDeps {
  transport: Transport;
  cluster: string;
  /** LIST (with retries). */
  list(opts: WatchOptions): Promise<{ items: KubeObject[]; resourceVersion: string }>;
  /** Collection path for the watched kind (namespace-aware). */
  collectionPath(namespace?: string): Promise<string>;
  apiVersion: string;
  kind: string;
}

/** Key of an object in the watch state: `namespace/name`. */
export function objectKey(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
}

type StreamEnd = { kind: 'done' } | { kind: 'gone' } | { kind: 'stalled' } | { kind: 'closed'; rv: string };

/** Run a watch (see `KubeClient.watch`). */
export async function runWatch(deps: WatchDeps, opts: WatchOptions, onEvent: (e: WatchEvent, state: Map<string, KubeObject>) => boolean | Promise<boolean>): Promise<void> {
  const stallMs = opts.stallMs ?? DEFAULT_STALL_MS;
  const state = new Map<string, KubeObject>();
  let failures = 0;
  let from = opts.from;
  for (;;) {
    opts.signal?.throwIfAborted();
    const listed = from ?? (await deps.list(opts));
    from = undefined;
    state.clear();
    for (const o of listed.items) state.set(objectKey(o), o);
    if (await onEvent({ type: 'SYNC', object: undefined }, state)) return;
    let rv = listed.resourceVersion;
    for (;;) {
      let end: StreamEnd;
      opts.signal?.throwIfAborted();
      try {
        end = await streamOnce(deps, opts, rv, stallMs, state, onEvent);
        failures = 0;
      } catch (e) {
        if (opts.signal?.aborted) throw abortReason(opts.signal);
        failures++;
        const retryable = e instanceof TransportError || (e instanceof KubeApiError && [429, 500, 502, 503, 504].includes(e.status));
        const delay = retryable ? retryDelay('read', e instanceof KubeApiError ? { kind: 'status', status: e.status } : { kind: 'error', code: e instanceof TransportError ? e.code : undefined, sent: true, timeout: true }, failures, { maxRetries: 8, baseDelayMs: 250, maxDelayMs: 10_000 }) : undefined;
        if (delay === undefined) throw e;
        deps.transport.stats.retries++;
        await sleepOrThrow(delay, opts.signal);
        continue;
      }
      if (end.kind === 'done') return;
      if (end.kind === 'gone' || end.kind === 'stalled') break; // re-list
      rv = end.rv;
    }
  }
}

/** One watch request; resolves when the stream ends. */
async function streamOnce(
  deps: WatchDeps,
  opts: WatchOptions,
  rv: string,
  stallMs: number,
  state: Map<string, KubeObject>,
  onEvent: (e: WatchEvent, state: Map<string, KubeObject>) => boolean | Promise<boolean>,
): Promise<StreamEnd> {
  const path = await deps.collectionPath(opts.namespace);
  const timeoutSeconds = Math.max(1, Math.floor(stallMs / 1000));
  const h = await deps.transport.open(
    {
      method: 'GET',
      path,
      query: { watch: 'true', resourceVersion: rv, allowWatchBookmarks: 'true', timeoutSeconds, labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector },
      retry: 'read',
      signal: opts.signal,
    },
    0,
  );
  const status = h.res.statusCode ?? 0;
  if (status === 410) {
    h.res.resume();
    h.done();
    return { kind: 'gone' };
  }
  if (status >= 300) {
    const chunks: Buffer[] = [];
    for await (const c of h.res) chunks.push(c as Buffer);
    h.done();
    const body = Buffer.concat(chunks).toString('utf8');
    const st = parseStatus(body);
    throw new KubeApiError(status, st?.reason ?? String(status), st?.message ?? body.slice(0, 200), 'WATCH', path, deps.cluster, st);
  }
  // The server ends the stream at `timeoutSeconds`: one that is still open a grace later is cut
  // and the state re-listed — a bound on the whole stream, not on the gap between its bytes, so
  // neither silence nor a byte every few seconds (a slow-loris front end) keeps a wait on it.
  let stalled = false;
  const timer = setTimeout(() => {
    stalled = true;
    h.abort();
  }, stallMs + Math.min(5_000, stallMs));
  const rl = createInterface({ input: h.res, crlfDelay: Infinity });
  // A destroyed response (abort, stall) does not always emit 'end': close the reader ourselves.
  h.res.once('close', () => rl.close());
  // Errors of an aborted/reset stream end the loop below (then we reconnect or stop); never crash.
  let streamError: unknown;
  h.res.on('error', (e) => (streamError = e));
  rl.on('error', (e) => (streamError = e));
  try {
    for await (const line of rl) {
      if (!line.trim()) continue;
      let ev: unknown;
      try {
        ev = JSON.parse(line);
      } catch {
        continue;
      }
      if (typeof ev !== 'object' || ev === null) continue;
      const { type, object } = ev as { type?: string; object?: KubeObject };
      if (!object || typeof object !== 'object') continue;
      const objRv = object.metadata?.resourceVersion;
      if (type === 'ERROR') {
        const st = object as unknown as { code?: number; reason?: string; message?: string };
        if (st.code === 410 || st.reason === 'Expired' || st.reason === 'Gone') return { kind: 'gone' };
        throw new KubeApiError(st.code ?? 500, st.reason ?? 'Error', st.message ?? 'watch error', 'WATCH', path, deps.cluster);
      }
      if (objRv) rv = objRv;
      if (type === 'BOOKMARK') continue;
      if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') continue;
      if (!object.apiVersion) object.apiVersion = deps.apiVersion;
      if (!object.kind) object.kind = deps.kind;
      const key = objectKey(object);
      if (type === 'DELETED') state.delete(key);
      else state.set(key, object);
      if (await onEvent({ type, object }, state)) return { kind: 'done' };
    }
  } catch (e) {
    if (opts.signal?.aborted) throw abortReason(opts.signal);
    if (!stalled) {
      if (e instanceof KubeApiError) throw e;
      throw new TransportError(`watch ${path}: ${e instanceof Error ? e.message : String(e)}`, 'ECONNRESET', true, false);
    }
  } finally {
    clearTimeout(timer);
    h.done();
    h.abort();
  }
  opts.signal?.throwIfAborted();
  if (stalled) return { kind: 'stalled' };
  if (streamError !== undefined) throw new TransportError(`watch ${path}: ${streamError instanceof Error ? streamError.message : String(streamError)}`, 'ECONNRESET', true, false);
  return { kind: 'closed', rv };
}

/** The traffic (`http`) provider of the `analysis` gate: N requests per measurement, success rate and latency. */
import { performance } from 'node:perf_hooks';
import { errorMessage } from '../load/errors.js';
import { httpRequest, type HttpRequest } from '../local/http.js';
import type { ModuleContext } from '../core/module.js';
import { sleep } from '../core/sleep.js';
import type { Reading } from './loop.js';

/** The `http:` arguments of a metric (after defaults). */
export interface TrafficArgs {
  url: string;
  method?: string | undefined;
  headers?: Record<string, string> | undefined;
  body?: string | undefined;
  requests?: number | undefined;
  status?: number[] | undefined;
  validate_certs?: boolean | undefined;
  ca_cert?: string | undefined;
  timeout?: number | undefined;
  spread?: boolean | undefined;
}

/** What one measurement of traffic reports (`result`). */
export interface TrafficValue {
  /** Requests sent. */
  requests: number;
  /** Requests not answered with an accepted status (timeouts and refused connections included). */
  failed: number;
  /** Accepted answers, in percent. */
  success_rate: number;
  p50_ms: number;
  p95_ms: number;
  max_ms: number;
  /** Answers per status code; `error` for requests without an answer. */
  status_codes: Record<string, number>;
  /** The distinct reasons of failed requests (at most 5). */
  errors: string[];
}

/** The nearest-rank percentile `p` (0–100) of the values; 0 for none. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((sorted.length * p) / 100) - 1)] ?? 0;
}

/** 95th percentile (nearest rank) of the latencies. */
export function p95(ms: number[]): number {
  return percentile(ms, 95);
}

/** Sum up the outcomes of a measurement's requests. */
export function trafficValue(outcomes: { status: number; ms: number; msg: string }[], accepted: number[]): TrafficValue {
  const codes: Record<string, number> = {};
  const errors = new Set<string>();
  let ok = 0;
  for (const o of outcomes) {
    const key = o.status < 0 ? 'error' : String(o.status);
    codes[key] = (codes[key] ?? 0) + 1;
    if (accepted.includes(o.status)) ok++;
    else if (errors.size < 5) errors.add(o.msg);
  }
  const ms = outcomes.map((o) => Math.round(o.ms * 10) / 10);
  const n = outcomes.length;
  return { requests: n, failed: n - ok, success_rate: n === 0 ? 0 : (ok / n) * 100, p50_ms: percentile(ms, 50), p95_ms: percentile(ms, 95), max_ms: ms.length ? Math.max(...ms) : 0, status_codes: codes, errors: [...errors] };
}

/**
 * Send the measurement's requests: back to back, or (`spread`) one every `intervalMs / requests`
 * whatever the previous one does, so a slow answer does not hide the ones after it.
 */
export async function readTraffic(h: TrafficArgs, ctx: ModuleContext, intervalMs: number): Promise<Reading> {
  const requests = h.requests ?? 10;
  const accepted = h.status ?? [200];
  const caPath = h.ca_cert === undefined ? undefined : ctx.findFile(h.ca_cert, 'files');
  const req: HttpRequest = {
    url: h.url,
    method: (h.method ?? 'GET').toUpperCase(),
    headers: h.headers ?? {},
    followRedirects: 'safe',
    timeoutMs: (h.timeout ?? 5) * 1000,
    validateCerts: h.validate_certs ?? true,
    forceBasicAuth: false,
    decompress: true,
    signal: ctx.signal,
    ...(h.body === undefined ? {} : { body: Buffer.from(h.body) }),
    ...(caPath === undefined ? {} : { caPath }),
  };
  const one = async (): Promise<{ status: number; ms: number; msg: string }> => {
    const t0 = performance.now();
    try {
      const res = await httpRequest(req);
      return { status: res.status, ms: performance.now() - t0, msg: ctx.mask(res.status < 0 ? res.msg : `HTTP ${res.status}`) };
    } catch (e) {
      return { status: -1, ms: performance.now() - t0, msg: ctx.mask(errorMessage(e)) };
    }
  };
  const outcomes: Promise<{ status: number; ms: number; msg: string }>[] = [];
  if (h.spread) {
    const t0 = performance.now();
    const gap = intervalMs / requests;
    for (let n = 0; n < requests; n++) {
      if (n > 0 && !(await sleep(Math.max(0, t0 + n * gap - performance.now()), ctx.signal))) break;
      outcomes.push(one());
    }
  } else {
    for (let n = 0; n < requests && !ctx.signal.aborted; n++) outcomes.push(Promise.resolve(await one()));
  }
  if (ctx.signal.aborted) return { kind: 'error', reason: 'interrupted' };
  return { kind: 'value', value: trafficValue(await Promise.all(outcomes), accepted) };
}

/** The Prometheus provider of the `analysis` gate: one instant query per measurement. */
import { errorMessage } from '../load/errors.js';
import { httpRequest } from '../local/http.js';
import type { ModuleContext } from '../core/module.js';
import type { Reading } from './loop.js';

/** The `prometheus:` arguments of a metric (after defaults). */
export interface PrometheusArgs {
  address: string;
  query: string;
  token?: string | undefined;
  validate_certs?: boolean | undefined;
  ca_cert?: string | undefined;
  timeout?: number | undefined;
}

/** Shape of Prometheus' `/api/v1/query` answer that matters here. */
export interface PromAnswer {
  status?: string;
  error?: string;
  errorType?: string;
  data?: { resultType?: string; result?: unknown };
}

/** A sample value as Prometheus writes it (`"0.25"`, `"NaN"`, `"+Inf"`, `"-Inf"`). */
export function promNumber(s: unknown): number {
  if (typeof s !== 'string') return Number.NaN;
  if (s === '+Inf' || s === 'Inf') return Number.POSITIVE_INFINITY;
  if (s === '-Inf') return Number.NEGATIVE_INFINITY;
  return Number(s);
}

const sampleOf = (s: unknown): unknown => (typeof s === 'object' && s !== null && Array.isArray((s as { value?: unknown }).value) ? (s as { value: unknown[] }).value[1] : undefined);

/**
 * Turn a Prometheus answer into a reading: an error answer is an error; no series is no data;
 * one series is a number, several a list of numbers (in Prometheus' order).
 */
export function promReading(answer: PromAnswer): Reading {
  if (answer.status !== 'success' || !answer.data) return { kind: 'error', reason: `prometheus: ${answer.errorType ? `${answer.errorType}: ` : ''}${answer.error ?? 'the query failed'}` };
  const { resultType, result: r } = answer.data;
  if (resultType === 'scalar' && Array.isArray(r)) return { kind: 'value', value: promNumber(r[1]) };
  if (resultType === 'vector' && Array.isArray(r)) {
    const values = r.map((s: unknown) => promNumber(sampleOf(s)));
    if (values.length === 0) return { kind: 'no_data', reason: 'no data: the query returned no series' };
    return { kind: 'value', value: values.length === 1 ? values[0] : values };
  }
  return { kind: 'error', reason: `prometheus: the query returned a ${String(resultType)}; use an instant vector or a scalar (e.g. wrap a range in rate(...[1m]) or avg_over_time(...[5m]))` };
}

/** A JSON answer of the Prometheus HTTP API, or why there is none (an error reading's reason). */
export type PromGet = { ok: true; body: unknown } | { ok: false; reason: string };

/** GET `apiPath` (e.g. `/api/v1/query?query=…`) of the server; never throws for an unreachable server. */
export async function promGet(p: PrometheusArgs, ctx: ModuleContext, apiPath: string): Promise<PromGet> {
  const url = `${p.address.replace(/\/+$/, '')}${apiPath}`;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (p.token !== undefined) headers.Authorization = `Bearer ${p.token}`;
  const caPath = p.ca_cert === undefined ? undefined : ctx.findFile(p.ca_cert, 'files');
  let res;
  try {
    res = await httpRequest({
      url,
      method: 'GET',
      headers,
      followRedirects: 'safe',
      timeoutMs: (p.timeout ?? 10) * 1000,
      validateCerts: p.validate_certs ?? true,
      forceBasicAuth: false,
      decompress: true,
      signal: ctx.signal,
      ...(caPath === undefined ? {} : { caPath }),
    });
  } catch (e) {
    return { ok: false, reason: ctx.mask(`prometheus: ${errorMessage(e)}`) };
  }
  if (res.status < 0) return { ok: false, reason: ctx.mask(`prometheus unreachable: ${res.msg}`) };
  try {
    return { ok: true, body: JSON.parse(res.body.toString('utf8')) as unknown };
  } catch {
    return { ok: false, reason: `prometheus answered ${res.status} without JSON (is ${ctx.mask(p.address)} a Prometheus server?)` };
  }
}

/** Send the query to `/api/v1/query`; never throws for an unreachable server (an error reading). */
export async function readPrometheus(p: PrometheusArgs, ctx: ModuleContext): Promise<Reading> {
  const got = await promGet(p, ctx, `/api/v1/query?query=${encodeURIComponent(p.query)}`);
  if (!got.ok) return { kind: 'error', reason: got.reason };
  return promReading(typeof got.body === 'object' && got.body !== null ? (got.body as PromAnswer) : {});
}

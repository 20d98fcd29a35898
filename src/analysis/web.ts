/**
 * The `web` provider of the `analysis` gate (Argo Rollouts' web metric): one request per
 * measurement to a JSON endpoint; `result` is the parsed body, so a condition reads it directly
 * (`result.data.ok`, where Argo needs a `jsonPath`).
 */
import { errorMessage } from '../load/errors.js';
import { httpRequest } from '../local/http.js';
import type { ModuleContext } from '../core/module.js';
import type { Reading } from './loop.js';

/** The `web:` arguments of a metric (after defaults). */
export interface WebArgs {
  url: string;
  method?: string | undefined;
  headers?: Record<string, string> | undefined;
  body?: string | undefined;
  json_body?: unknown;
  validate_certs?: boolean | undefined;
  ca_cert?: string | undefined;
  timeout?: number | undefined;
}

/** Turn an answer into a reading, as Argo does: a non-2xx status or a body that is not JSON is an error. */
export function webReading(status: number, msg: string, body: string): Reading {
  if (status < 0) return { kind: 'error', reason: `web: ${msg}` };
  if (status < 200 || status > 299) return { kind: 'error', reason: `web: received non 2xx response code: ${status}` };
  try {
    return { kind: 'value', value: JSON.parse(body) as unknown };
  } catch {
    return { kind: 'error', reason: `web: the answer is not JSON: ${JSON.stringify(body.slice(0, 80))}` };
  }
}

/** One request; never throws (an error reading). */
export async function readWeb(w: WebArgs, ctx: ModuleContext): Promise<Reading> {
  const caPath = w.ca_cert === undefined ? undefined : ctx.findFile(w.ca_cert, 'files');
  const headers: Record<string, string> = { Accept: 'application/json', ...(w.headers ?? {}) };
  let body: Buffer | undefined;
  if (w.json_body !== undefined) {
    body = Buffer.from(JSON.stringify(w.json_body));
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
  } else if (w.body !== undefined) body = Buffer.from(w.body);
  try {
    const res = await httpRequest({
      url: w.url,
      method: (w.method ?? 'GET').toUpperCase(),
      headers,
      followRedirects: 'safe',
      timeoutMs: (w.timeout ?? 10) * 1000,
      validateCerts: w.validate_certs ?? true,
      forceBasicAuth: false,
      decompress: true,
      signal: ctx.signal,
      ...(body === undefined ? {} : { body }),
      ...(caPath === undefined ? {} : { caPath }),
    });
    const r = webReading(res.status, res.msg, res.body.toString('utf8'));
    return r.kind === 'error' ? { kind: 'error', reason: ctx.mask(r.reason) } : r;
  } catch (e) {
    return { kind: 'error', reason: ctx.mask(`web: ${errorMessage(e)}`) };
  }
}

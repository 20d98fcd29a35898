/**
 * Analysis gates in the reports: the live board's progress line of a running gate and the run
 * record's copy of a finished gate's measurements (shown by the HTML run report). Generic over any
 * module whose result has `verdict` and `measurements: [{at, metric, value, verdict, reason}]`
 * (the `analysis` module's shape). Pure; imports nothing of the engine.
 */

/** The verdicts a gate or a measurement can have. */
export type GateVerdict = 'successful' | 'failed' | 'inconclusive' | 'error';

const VERDICTS: ReadonlySet<string> = new Set<GateVerdict>(['successful', 'failed', 'inconclusive', 'error']);

/** One measurement as the run record keeps it: its value as short text. */
export interface GateMeasurementRecord {
  /** When it was taken (ISO 8601). */
  at: string;
  metric: string;
  /** The value the conditions saw, as short text (`no data` when there was none). */
  value: string;
  verdict: GateVerdict;
  reason?: string;
}

/** A gate's verdict and measurements, as the run record keeps them. */
export interface GateRecord {
  verdict: GateVerdict;
  measurements: GateMeasurementRecord[];
  /** Measurements left out of the record (beyond {@link GATE_MEASUREMENTS_CAP}, the newest are kept). */
  omitted?: number;
}

/** Measurements a record keeps per task result at most (the newest). */
export const GATE_MEASUREMENTS_CAP = 200;

const VALUE_CAP = 120;

function cap(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

function numberText(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  return String(Number(n.toPrecision(4)));
}

/** A measured value as short text: numbers to 4 significant digits, lists and objects as compact JSON, none as `no data`. */
export function gateValueText(v: unknown): string {
  if (v === null || v === undefined) return 'no data';
  if (typeof v === 'number') return numberText(v);
  if (typeof v === 'string') return cap(v, VALUE_CAP);
  const text = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'number' ? (Number.isFinite(x) ? Number(x.toPrecision(4)) : String(x)) : x));
  return cap(text ?? String(v), VALUE_CAP);
}

/** The measurements of a module result, when it has the gate's shape (else undefined). */
function measurementsOf(data: Record<string, unknown> | undefined): { verdict: GateVerdict; list: Record<string, unknown>[] } | undefined {
  if (!data || typeof data.verdict !== 'string' || !VERDICTS.has(data.verdict) || !Array.isArray(data.measurements)) return undefined;
  const list = data.measurements.filter((m): m is Record<string, unknown> => typeof m === 'object' && m !== null && !Array.isArray(m));
  return { verdict: data.verdict as GateVerdict, list };
}

/**
 * The record of a gate from a task result's (masked) data: undefined for any other result. Keeps
 * the newest {@link GATE_MEASUREMENTS_CAP} measurements, each value as short text.
 */
export function gateRecordOf(data: Record<string, unknown> | undefined): GateRecord | undefined {
  const g = measurementsOf(data);
  if (!g) return undefined;
  const kept = g.list.slice(-GATE_MEASUREMENTS_CAP);
  const measurements = kept.map((m): GateMeasurementRecord => {
    const verdict = typeof m.verdict === 'string' && VERDICTS.has(m.verdict) ? (m.verdict as GateVerdict) : 'inconclusive';
    const rec: GateMeasurementRecord = { at: typeof m.at === 'string' ? m.at : '', metric: typeof m.metric === 'string' ? m.metric : '', value: gateValueText(m.value), verdict };
    if (typeof m.reason === 'string') rec.reason = cap(m.reason, 300);
    return rec;
  });
  return { verdict: g.verdict, measurements, ...(g.list.length > kept.length ? { omitted: g.list.length - kept.length } : {}) };
}

/** A measurement as a gate reports it while it runs. */
export interface GateProgressMeasurement {
  metric: string;
  value: unknown;
  verdict: string;
}

/**
 * The live progress line of a gate after a measurement, for `ctx.log.progress` (the board shows
 * it as what the cluster waits on): `analysis error-ratio: 2/4 measured, 0 failed, last 0.004`,
 * about the metric of the newest measurement. `count` is the measurements planned per metric.
 */
export function gateProgress(measurements: readonly GateProgressMeasurement[], count: number): string {
  const last = measurements.at(-1);
  if (!last) return `analysis: 0/${count} measured`;
  const mine = measurements.filter((m) => m.metric === last.metric);
  const failed = mine.filter((m) => m.verdict === 'failed').length;
  const inconclusive = mine.filter((m) => m.verdict === 'inconclusive').length;
  const errors = mine.filter((m) => m.verdict === 'error').length;
  return `analysis ${last.metric}: ${mine.length - errors}/${count} measured, ${failed} failed${inconclusive ? `, ${inconclusive} inconclusive` : ''}${errors ? `, ${errors} error(s)` : ''}, last ${gateValueText(last.value)}`;
}

/** `{gate}` for a task record when the result is a gate's, else `{}` (to spread into the record). */
export function gateField(data: Record<string, unknown> | undefined): { gate?: GateRecord } {
  const gate = gateRecordOf(data);
  return gate ? { gate } : {};
}

/** A stored gate (read back from a record line; undefined when it is not one: an edited or foreign line). */
export function asGateRecord(v: unknown): GateRecord | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o.verdict !== 'string' || !VERDICTS.has(o.verdict) || !Array.isArray(o.measurements)) return undefined;
  const measurements = o.measurements.flatMap((m: unknown): GateMeasurementRecord[] => {
    if (typeof m !== 'object' || m === null) return [];
    const r = m as Record<string, unknown>;
    if (typeof r.at !== 'string' || typeof r.metric !== 'string' || typeof r.value !== 'string' || typeof r.verdict !== 'string' || !VERDICTS.has(r.verdict)) return [];
    return [{ at: r.at, metric: r.metric, value: r.value, verdict: r.verdict as GateVerdict, ...(typeof r.reason === 'string' ? { reason: r.reason } : {}) }];
  });
  return { verdict: o.verdict as GateVerdict, measurements, ...(typeof o.omitted === 'number' && o.omitted > 0 ? { omitted: o.omitted } : {}) };
}

/** Measurements an in-cluster record keeps per gate (records there share a ConfigMap's 1 MiB). */
export const GATE_CLUSTER_MEASUREMENTS_CAP = 20;

/** A gate with only its newest `max` measurements (the rest counted in `omitted`). */
export function trimGate(g: GateRecord, max: number): GateRecord {
  if (g.measurements.length <= max) return g;
  return { verdict: g.verdict, measurements: g.measurements.slice(-max), omitted: (g.omitted ?? 0) + g.measurements.length - max };
}

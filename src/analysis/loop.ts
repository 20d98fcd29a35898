/**
 * The measuring loop of the `analysis` gate, after Argo Rollouts' AnalysisRun: every metric is
 * measured `count` times, `interval` apart; a measurement is successful, failed, inconclusive or
 * an error (the provider could not be read). Pure logic: readings, conditions, the clock and the
 * sleep are injected, so the unit tests drive it without a server or a real wait.
 */
import { errorMessage } from '../load/errors.js';

/** The verdict of one measurement or of the whole gate (Argo's phases). */
export type Verdict = 'successful' | 'failed' | 'inconclusive' | 'error';

/** What a metric does when its provider has no data (no series, no pods): Argo has no such setting; `inconclusive` is the safe default. */
export type NoData = 'inconclusive' | 'failed' | 'successful';

/**
 * A raw reading of a metric: a value for the conditions; no data (the provider answered, with
 * nothing); or an error (the provider could not be asked or did not answer sensibly).
 */
export type Reading =
  | { kind: 'value'; value: unknown }
  | { kind: 'no_data'; reason: string }
  | { kind: 'error'; reason: string }
  /** Inconclusive whatever `no_data` says (the first version's only non-value reading; kept for its callers). */
  | { kind: 'inconclusive'; reason: string };

/** One measurement as registered (Argo's Measurement). */
export interface MeasurementRecord {
  /** When it was taken (ISO 8601, when the reading came back). */
  at: string;
  /** The metric's name. */
  metric: string;
  /** The `result` the conditions saw, JSON-safe (NaN and ±Inf as the strings `NaN`, `+Inf`, `-Inf`); null when there was none. */
  value: unknown;
  verdict: Verdict;
  /** Why it is not successful. */
  reason?: string;
}

/** The counters of one metric (Argo's MetricResult). */
export interface MetricSummary {
  name: string;
  /** The metric's own phase: `running` when the gate stopped on another metric first. */
  verdict: Verdict | 'running';
  /** Measurements that count towards `count` (every one but errors). */
  count: number;
  successful: number;
  failed: number;
  inconclusive: number;
  error: number;
  consecutive_errors: number;
}

/** What `runAnalysis` returns. */
export interface AnalysisOutcome {
  verdict: Verdict;
  measurements: MeasurementRecord[];
  metrics: MetricSummary[];
  /** Why the gate is not successful (the deciding metric and limit). */
  reason?: string;
}

/** What the analysis loop needs: readings, conditions, a clock and a sleep (injected by tests). */
export interface AnalysisDeps {
  read(metric: number): Promise<Reading>;
  condition(expr: string, value: unknown): Promise<boolean>;
  /** Sleep `ms`; false when interrupted. */
  wait(ms: number): Promise<boolean>;
  now(): Date;
  /** Called after each measurement with all so far (live progress). */
  measured?(all: readonly MeasurementRecord[]): void;
}

/** One metric as the loop sees it. */
export interface PlanMetric {
  name: string;
  success_condition: string;
  failure_condition?: string | undefined;
  no_data?: NoData | undefined;
}

/** The loop's settings. */
export interface AnalysisPlan {
  metrics: PlanMetric[];
  /** From the start of one round of measurements to the start of the next. */
  intervalMs: number;
  count: number;
  failureLimit: number;
  inconclusiveLimit: number;
  /** Errors in a row tolerated per metric (Argo's consecutiveErrorLimit, default 4); one more ends the gate in `error`. */
  consecutiveErrorLimit?: number;
  /** Wait before the first measurement (Argo's initialDelay). */
  initialDelayMs?: number;
}

/** What a value says went wrong (`details` of Kubernetes signals, `errors` of traffic), for a reason: ` (a; b; c)`. */
function hint(value: unknown): string {
  if (value === null || typeof value !== 'object') return '';
  const v = value as { details?: unknown; errors?: unknown };
  const lines = [v.details, v.errors].find((x): x is unknown[] => Array.isArray(x) && x.length > 0);
  return lines ? ` (${lines.slice(0, 3).map(String).join('; ')}${lines.length > 3 ? '; …' : ''})` : '';
}

/**
 * Judge one reading. NaN compares false, so `result < x` fails on NaN, as in Argo Rollouts; a
 * condition that cannot be evaluated is an error (as in Argo), no data follows `noData`.
 */
export async function judge(
  reading: Reading,
  success: string,
  failure: string | undefined,
  condition: AnalysisDeps['condition'],
  noData: NoData = 'inconclusive',
): Promise<{ verdict: Verdict; reason?: string }> {
  if (reading.kind === 'error') return { verdict: 'error', reason: reading.reason };
  if (reading.kind === 'inconclusive') return { verdict: 'inconclusive', reason: reading.reason };
  if (reading.kind === 'no_data') return noData === 'successful' ? { verdict: 'successful', reason: `${reading.reason} (no_data: successful)` } : { verdict: noData, reason: reading.reason };
  try {
    const why = hint(reading.value);
    if (failure !== undefined && (await condition(failure, reading.value))) return { verdict: 'failed', reason: `failure_condition ${JSON.stringify(failure)} is true${why}` };
    if (await condition(success, reading.value)) return { verdict: 'successful' };
    if (failure !== undefined) return { verdict: 'inconclusive', reason: `neither success_condition nor failure_condition is true${why}` };
    return { verdict: 'failed', reason: `success_condition ${JSON.stringify(success)} is false${why}` };
  } catch (e) {
    return { verdict: 'error', reason: `condition could not be evaluated: ${errorMessage(e)}` };
  }
}

/** A value as it can be written to JSON: NaN and ±Infinity (anywhere inside) become `NaN`, `+Inf`, `-Inf` (Prometheus' spelling). */
export function jsonSafe(v: unknown): unknown {
  if (typeof v === 'number') return Number.isFinite(v) ? v : Number.isNaN(v) ? 'NaN' : v > 0 ? '+Inf' : '-Inf';
  if (Array.isArray(v)) return v.map(jsonSafe);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonSafe(x)]));
  return v;
}

/**
 * Measure every metric until it has `count` measurements that are not errors, a round every
 * `intervalMs` (start to start). Argo's rules: more than `failureLimit` failed measurements of a
 * metric end the gate `failed` at once, more than `inconclusiveLimit` inconclusive ones
 * `inconclusive`, more than `consecutiveErrorLimit` errors in a row `error`; an error does not
 * count towards `count` and any other measurement resets the run of errors.
 */
export async function runAnalysis(plan: AnalysisPlan, deps: AnalysisDeps): Promise<AnalysisOutcome> {
  const errorLimit = plan.consecutiveErrorLimit ?? 4;
  const measurements: MeasurementRecord[] = [];
  const metrics: MetricSummary[] = plan.metrics.map((m) => ({ name: m.name, verdict: 'running', count: 0, successful: 0, failed: 0, inconclusive: 0, error: 0, consecutive_errors: 0 }));
  const end = (verdict: Verdict, reason?: string): AnalysisOutcome => ({ verdict, measurements, metrics, ...(reason === undefined ? {} : { reason }) });
  if ((plan.initialDelayMs ?? 0) > 0 && !(await deps.wait(plan.initialDelayMs ?? 0))) return end('inconclusive', 'interrupted before the first measurement');
  while (metrics.some((s) => s.verdict === 'running')) {
    const started = deps.now().getTime();
    for (const [i, m] of plan.metrics.entries()) {
      const s = metrics[i]!;
      if (s.verdict !== 'running') continue;
      const reading = await deps.read(i);
      const j = await judge(reading, m.success_condition, m.failure_condition, deps.condition, m.no_data);
      const rec: MeasurementRecord = { at: deps.now().toISOString(), metric: m.name, value: reading.kind === 'value' ? jsonSafe(reading.value) : null, verdict: j.verdict };
      if (j.reason !== undefined) rec.reason = j.reason;
      measurements.push(rec);
      deps.measured?.(measurements);
      s[j.verdict]++;
      if (j.verdict === 'error') {
        if (++s.consecutive_errors > errorLimit) {
          s.verdict = 'error';
          return end('error', `${m.name}: ${s.consecutive_errors} errors in a row exceed consecutive_error_limit ${errorLimit}`);
        }
        continue;
      }
      s.consecutive_errors = 0;
      s.count++;
      if (s.failed > plan.failureLimit) {
        s.verdict = 'failed';
        return end('failed', `${m.name}: ${s.failed} failed measurement(s) exceed failure_limit ${plan.failureLimit}`);
      }
      if (s.inconclusive > plan.inconclusiveLimit) {
        s.verdict = 'inconclusive';
        return end('inconclusive', `${m.name}: ${s.inconclusive} inconclusive measurement(s) exceed inconclusive_limit ${plan.inconclusiveLimit}`);
      }
      if (s.count >= plan.count) s.verdict = 'successful';
    }
    if (!metrics.some((s) => s.verdict === 'running')) break;
    const left = Math.max(0, plan.intervalMs - (deps.now().getTime() - started));
    if (!(await deps.wait(left))) return end('inconclusive', `interrupted after ${measurements.length} measurement(s)`);
  }
  return end('successful');
}

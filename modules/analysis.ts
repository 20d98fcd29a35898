/**
 * `analysis`: an analysis gate between batches, after Argo Rollouts' AnalysisTemplate. Each metric
 * is measured `count` times, `interval` seconds apart; too many failed measurements fail the task,
 * too many inconclusive ones make it inconclusive (a failure unless `on_inconclusive: pass`).
 */
import { defineModule, errorMessage, gateProgress, httpRequest, kubeFor, sleep, Default, StringEnum, Type, type Args, type ModuleContext, type ModuleResult, type Static } from 'kplay/sdk';

const PrometheusProvider = Type.Object(
  {
    address: Type.String({ description: 'Base URL of the Prometheus server (templated per cluster, e.g. from an inventory variable).', examples: ['{{ prometheus_url }}'] }),
    query: Type.String({ description: 'PromQL instant query sent to `/api/v1/query` (templated).', examples: ['sum(rate(http_errors_total[1m])) / sum(rate(http_requests_total[1m]))'] }),
    token: Type.Optional(Type.String({ description: 'Bearer token sent as `Authorization: Bearer …`; registered as a secret and never shown.' })),
    validate_certs: Default(Type.Boolean({ description: 'Verify the server certificate.' }), true),
    ca_cert: Type.Optional(Type.String({ description: 'PEM file with the CA certificate(s) to trust; relative to the playbook directory.' })),
    timeout: Default(Type.Number({ exclusiveMinimum: 0, description: 'Timeout of one query, in seconds.' }), 10),
  },
  { additionalProperties: false, description: 'Query Prometheus; `result` is a number for one series, a list of numbers for several.' },
);

const HttpProvider = Type.Object(
  {
    url: Type.String({ description: 'URL (`http://` or `https://`) requested at each measurement.' }),
    requests: Default(Type.Integer({ minimum: 1, description: 'Requests sent per measurement.' }), 10),
    status: Default(Type.Array(Type.Integer({ minimum: 100, maximum: 599 }), { minItems: 1, description: 'Status codes counted as a success.' }), [200]),
    validate_certs: Default(Type.Boolean({ description: 'Verify the server certificate.' }), true),
    timeout: Default(Type.Number({ exclusiveMinimum: 0, description: 'Timeout of one request, in seconds (a timed-out request is a failed one).' }), 5),
  },
  {
    additionalProperties: false,
    description:
      'Send `requests` requests per measurement; `result` is `{success_rate, p95_ms, requests}` (success rate in percent, 95th percentile latency in ms).',
  },
);

const KubernetesProvider = Type.Object(
  {
    namespace: Type.String({ minLength: 1, description: 'Namespace of the pods and events (templated).', examples: ['web'] }),
    label_selector: Type.String({ minLength: 1, description: 'Label selector of the release\'s pods.', examples: ['app.kubernetes.io/instance=web'] }),
  },
  {
    additionalProperties: false,
    description:
      'Read the selected pods and the events of the namespace on the task\'s cluster; `result` is `{pods, ready, restarts, crash_looping, warning_events}`: container restarts and Warning events (of the pods or their owners) since the task started, pods in CrashLoopBackOff, and ready pods. Sampled at each interval, so readiness must hold for the whole window.',
  },
);

const Metric = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'Name of the metric, shown in measurements.' }),
    prometheus: Type.Optional(PrometheusProvider),
    http: Type.Optional(HttpProvider),
    kubernetes: Type.Optional(KubernetesProvider),
    success_condition: Type.String({
      minLength: 1,
      description: 'Expression (as in `when`) over `result` that is true for a good measurement, e.g. `result < 0.01`, `result | max < 0.01`, `result.success_rate >= 99`.',
    }),
    failure_condition: Type.Optional(
      Type.String({ description: 'Expression over `result` that marks a measurement failed; when both are given and neither holds, the measurement is inconclusive.' }),
    ),
  },
  { additionalProperties: false, description: 'One metric: exactly one provider (`prometheus`, `http` or `kubernetes`) and its success condition.' },
);

const schema = Type.Object(
  {
    metrics: Type.Array(Metric, { minItems: 1, description: 'The metrics measured at each interval.' }),
    interval: Default(Type.Number({ exclusiveMinimum: 0, description: 'Seconds between measurements.' }), 60),
    count: Default(Type.Integer({ minimum: 1, description: 'Measurements per metric.' }), 5),
    failure_limit: Default(Type.Integer({ minimum: 0, description: 'Failed measurements tolerated per metric; one more fails the gate at once.' }), 0),
    inconclusive_limit: Default(
      Type.Integer({ minimum: 0, description: 'Inconclusive measurements (no data, query errors) tolerated per metric; one more makes the gate inconclusive at once.' }),
      0,
    ),
    on_inconclusive: Default(StringEnum(['fail', 'pass'], { description: 'What an inconclusive gate does to the task: `fail` it (default) or `pass`.' }), 'fail'),
  },
  { additionalProperties: false },
);

/** Arguments of `analysis` (after defaults). */
export type AnalysisArgs = Args<typeof schema>;

/** The verdict of one measurement or of the whole gate. */
export type Verdict = 'successful' | 'failed' | 'inconclusive';

const Measurement = Type.Object({
  at: Type.String({ description: 'When it was taken (ISO 8601).' }),
  metric: Type.String({ description: 'The metric name.' }),
  value: Type.Unknown({ description: 'The `result` the conditions saw (null when there was none).' }),
  verdict: StringEnum(['successful', 'failed', 'inconclusive'], { description: 'The verdict of this measurement.' }),
  reason: Type.Optional(Type.String({ description: 'Why it is failed or inconclusive.' })),
});

const result = Type.Object({
  verdict: StringEnum(['successful', 'failed', 'inconclusive'], { description: 'The verdict of the gate.' }),
  measurements: Type.Array(Measurement, { description: 'Every measurement, in order.' }),
});

/** One measurement as registered. */
export type MeasurementRecord = Static<typeof Measurement>;
/** What `analysis` registers besides changed/failed/msg. */
export type AnalysisResult = Static<typeof result>;

/** A raw reading of a metric: a value for the conditions, or a reason it is inconclusive. */
export type Reading = { kind: 'value'; value: unknown } | { kind: 'inconclusive'; reason: string };

/** What the analysis loop needs: readings, conditions, a clock and a sleep (injected by tests). */
export interface AnalysisDeps {
  read(metric: number): Promise<Reading>;
  condition(expr: string, value: unknown): Promise<boolean>;
  wait(ms: number): Promise<boolean>;
  now(): Date;
  /** Called after each measurement with all so far (live progress). */
  measured?(all: readonly MeasurementRecord[]): void;
}

/** The loop's settings. */
export interface AnalysisPlan {
  metrics: { name: string; success_condition: string; failure_condition?: string | undefined }[];
  intervalMs: number;
  count: number;
  failureLimit: number;
  inconclusiveLimit: number;
}

/** Judge one reading: NaN compares false, so `result < x` fails on NaN, as in Argo Rollouts. */
export async function judge(reading: Reading, success: string, failure: string | undefined, condition: AnalysisDeps['condition']): Promise<{ verdict: Verdict; reason?: string }> {
  if (reading.kind === 'inconclusive') return { verdict: 'inconclusive', reason: reading.reason };
  try {
    if (failure !== undefined && (await condition(failure, reading.value))) return { verdict: 'failed', reason: `failure_condition ${JSON.stringify(failure)} is true` };
    if (await condition(success, reading.value)) return { verdict: 'successful' };
    if (failure !== undefined) return { verdict: 'inconclusive', reason: 'neither success_condition nor failure_condition is true' };
    return { verdict: 'failed', reason: `success_condition ${JSON.stringify(success)} is false` };
  } catch (e) {
    return { verdict: 'inconclusive', reason: `condition could not be evaluated: ${errorMessage(e)}` };
  }
}

/**
 * Measure every metric `count` times, `intervalMs` apart. Stops at once when a metric exceeds
 * its failure limit (`failed`) or its inconclusive limit (`inconclusive`); otherwise `successful`.
 */
export async function runAnalysis(plan: AnalysisPlan, deps: AnalysisDeps): Promise<AnalysisResult> {
  const measurements: MeasurementRecord[] = [];
  const failed = plan.metrics.map(() => 0);
  const inconclusive = plan.metrics.map(() => 0);
  for (let round = 0; round < plan.count; round++) {
    if (round > 0 && !(await deps.wait(plan.intervalMs))) return { verdict: 'inconclusive', measurements };
    for (const [i, m] of plan.metrics.entries()) {
      const reading = await deps.read(i);
      const j = await judge(reading, m.success_condition, m.failure_condition, deps.condition);
      const rec: MeasurementRecord = { at: deps.now().toISOString(), metric: m.name, value: reading.kind === 'value' ? reading.value : null, verdict: j.verdict };
      if (j.reason !== undefined) rec.reason = j.reason;
      measurements.push(rec);
      deps.measured?.(measurements);
      if (j.verdict === 'failed' && ++failed[i]! > plan.failureLimit) return { verdict: 'failed', measurements };
      if (j.verdict === 'inconclusive' && ++inconclusive[i]! > plan.inconclusiveLimit) return { verdict: 'inconclusive', measurements };
    }
  }
  return { verdict: 'successful', measurements };
}

/** Shape of Prometheus' `/api/v1/query` answer that matters here. */
interface PromAnswer {
  status?: string;
  error?: string;
  data?: { resultType?: string; result?: unknown };
}

function promNumber(s: unknown): number {
  return typeof s === 'string' ? Number(s) : Number.NaN;
}

/** Turn a Prometheus answer into a reading: no series → inconclusive, one → a number, several → a list. */
export function promReading(answer: PromAnswer): Reading {
  if (answer.status !== 'success' || !answer.data) return { kind: 'inconclusive', reason: `prometheus: ${answer.error ?? 'query failed'}` };
  const { resultType, result: r } = answer.data;
  if (resultType === 'scalar' && Array.isArray(r)) return { kind: 'value', value: promNumber(r[1]) };
  if (resultType === 'vector' && Array.isArray(r)) {
    const values = r.map((s: unknown) => promNumber(typeof s === 'object' && s !== null && Array.isArray((s as { value?: unknown }).value) ? (s as { value: unknown[] }).value[1] : undefined));
    if (values.length === 0) return { kind: 'inconclusive', reason: 'no data: the query returned no series' };
    return { kind: 'value', value: values.length === 1 ? values[0] : values };
  }
  return { kind: 'inconclusive', reason: `prometheus: unsupported result type ${String(resultType)} (use an instant vector or scalar query)` };
}

type Provided = Static<typeof Metric>;

async function readPrometheus(p: NonNullable<Provided['prometheus']>, ctx: ModuleContext): Promise<Reading> {
  const url = `${p.address.replace(/\/+$/, '')}/api/v1/query?query=${encodeURIComponent(p.query)}`;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (p.token !== undefined) headers.Authorization = `Bearer ${p.token}`;
  const caPath = p.ca_cert === undefined ? undefined : ctx.findFile(p.ca_cert, 'files');
  const res = await httpRequest({
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
  if (res.status < 0) return { kind: 'inconclusive', reason: ctx.mask(`prometheus unreachable: ${res.msg}`) };
  let answer: PromAnswer;
  try {
    answer = JSON.parse(res.body.toString('utf8')) as PromAnswer;
  } catch {
    return { kind: 'inconclusive', reason: `prometheus answered ${res.status} without JSON` };
  }
  return promReading(answer);
}

/** 95th percentile (nearest rank) of the latencies. */
export function p95(ms: number[]): number {
  const sorted = [...ms].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length * 0.95) - 1)] ?? 0;
}

async function readHttp(h: NonNullable<Provided['http']>, ctx: ModuleContext): Promise<Reading> {
  const requests = h.requests ?? 10;
  const accepted = h.status ?? [200];
  const latencies: number[] = [];
  let ok = 0;
  for (let n = 0; n < requests; n++) {
    const t0 = Date.now();
    const res = await httpRequest({ url: h.url, method: 'GET', headers: {}, followRedirects: 'safe', timeoutMs: (h.timeout ?? 5) * 1000, validateCerts: h.validate_certs ?? true, forceBasicAuth: false, decompress: true, signal: ctx.signal });
    latencies.push(Date.now() - t0);
    if (accepted.includes(res.status)) ok++;
  }
  return { kind: 'value', value: { success_rate: (ok / requests) * 100, p95_ms: p95(latencies), requests } };
}

/** A container's restart count, keyed by pod uid and container name. */
export type RestartBaseline = Map<string, number>;

interface PodLike {
  metadata?: { name?: string; uid?: string; ownerReferences?: { kind?: string; name?: string }[] };
  status?: {
    conditions?: { type?: string; status?: string }[];
    containerStatuses?: { name?: string; restartCount?: number; state?: { waiting?: { reason?: string } } }[];
    initContainerStatuses?: { name?: string; restartCount?: number; state?: { waiting?: { reason?: string } } }[];
  };
}
interface EventLike {
  type?: string;
  involvedObject?: { kind?: string; name?: string };
  lastTimestamp?: string | null;
  eventTime?: string | null;
  series?: { lastObservedTime?: string } | null;
  metadata?: { creationTimestamp?: string };
}

/** The Kubernetes signals of a set of pods since `since` (`baseline` is filled on first sight of a container). */
export function kubeSignals(pods: PodLike[], events: EventLike[], baseline: RestartBaseline, since: Date): { pods: number; ready: number; restarts: number; crash_looping: number; warning_events: number } {
  let restarts = 0;
  let crash = 0;
  let ready = 0;
  const names = new Set<string>();
  for (const p of pods) {
    const uid = p.metadata?.uid ?? p.metadata?.name ?? '';
    if (p.metadata?.name) names.add(`Pod/${p.metadata.name}`);
    for (const o of p.metadata?.ownerReferences ?? []) if (o.kind && o.name) names.add(`${o.kind}/${o.name}`);
    if ((p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')) ready++;
    let looping = false;
    for (const c of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]) {
      const key = `${uid}/${c.name ?? ''}`;
      const count = c.restartCount ?? 0;
      const base = baseline.get(key);
      if (base === undefined) baseline.set(key, count);
      else restarts += Math.max(0, count - base);
      if (c.state?.waiting?.reason === 'CrashLoopBackOff') looping = true;
    }
    if (looping) crash++;
  }
  const sinceSecond = Math.floor(since.getTime() / 1000) * 1000;
  const warnings = events.filter((e) => {
    if (e.type !== 'Warning') return false;
    if (!names.has(`${e.involvedObject?.kind ?? ''}/${e.involvedObject?.name ?? ''}`)) return false;
    const when = e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp;
    return when !== undefined && when !== null && Date.parse(when) >= sinceSecond;
  }).length;
  return { pods: pods.length, ready, restarts, crash_looping: crash, warning_events: warnings };
}

async function readKubernetes(k: NonNullable<Provided['kubernetes']>, ctx: ModuleContext, baseline: RestartBaseline, since: Date): Promise<Reading> {
  const client = await kubeFor(ctx);
  const pods = (await client.list('v1', 'Pod', { namespace: k.namespace, labelSelector: k.label_selector, signal: ctx.signal })).items as PodLike[];
  const events = (await client.list('v1', 'Event', { namespace: k.namespace, fieldSelector: 'type=Warning', signal: ctx.signal })).items as EventLike[];
  if (pods.length === 0) return { kind: 'inconclusive', reason: `no data: no pods match ${k.label_selector} in namespace ${k.namespace}` };
  return { kind: 'value', value: kubeSignals(pods, events, baseline, since) };
}

export default defineModule({
  name: 'analysis',
  summary: 'Gate a rollout on metrics: measure Prometheus queries or HTTP traffic over a window and pass, fail or report inconclusive',
  description: [
    'Modelled on Argo Rollouts\' AnalysisTemplate. Every metric is measured `count` times, `interval` seconds apart.',
    'A measurement is `successful` when `success_condition` holds over `result`, `failed` when it does not (or when',
    '`failure_condition` holds), and `inconclusive` when there is no data or the provider cannot be reached.',
    'More than `failure_limit` failed measurements of a metric fail the gate at once; more than `inconclusive_limit`',
    'inconclusive ones make it `inconclusive`, which fails the task unless `on_inconclusive: pass`.',
    '',
    'Kubernetes: `result` is `{pods, ready, restarts, crash_looping, warning_events}` for the pods of `label_selector`',
    '(restarts and Warning events of the pods or their owners since the task started); no matching pod is inconclusive.',
    '',
    'Prometheus: `result` is the number of a one-series answer and the list of numbers of a several-series one',
    '(use `result | max < 0.01` to bound every series); no series is inconclusive; NaN compares false, so',
    '`result < 0.01` fails on NaN, as in Argo Rollouts.',
    '',
    'The result has `verdict` and `measurements: [{at, metric, value, verdict, reason}]`; use it in `block`/`rescue`',
    'to roll a cluster back, and `serial` with `any_errors_fatal` or `max_fail_percentage: 0` to stop the rollout.',
    '',
    '**Check mode**: the queries are evaluated, but the task never fails on them.',
  ].join('\n'),
  schema,
  result,
  checkMode: 'supported',
  diffMode: 'unsupported',
  readOnly: true,
  usesCluster: true,
  examples: [
    {
      title: 'Error rate below 1 % for five minutes',
      yaml: [
        '- analysis:',
        '    interval: 60',
        '    count: 5',
        '    failure_limit: 1',
        '    metrics:',
        '      - name: error-rate',
        '        prometheus:',
        '          address: "{{ prometheus_url }}"',
        '          query: sum(rate(http_errors_total{app="web"}[1m])) / sum(rate(http_requests_total{app="web"}[1m]))',
        '          token: "{{ prometheus_token }}"',
        '        success_condition: result < 0.01',
      ].join('\n'),
    },
    {
      title: 'No restarts, crash loops or Warning events for the release\'s pods, all ready, for two minutes',
      yaml: [
        '- analysis:',
        '    interval: 10',
        '    count: 12',
        '    metrics:',
        '      - name: pods',
        '        kubernetes:',
        '          namespace: web',
        '          label_selector: app.kubernetes.io/instance=web',
        '        success_condition: result.restarts == 0 and result.crash_looping == 0 and result.warning_events == 0 and result.ready == result.pods',
      ].join('\n'),
    },
    {
      title: 'Traffic through the load balancer',
      yaml: [
        '- analysis:',
        '    interval: 10',
        '    count: 6',
        '    metrics:',
        '      - name: traffic',
        '        http:',
        '          url: https://web.example.com/',
        '          requests: 20',
        '        success_condition: result.success_rate >= 99 and result.p95_ms <= 300',
      ].join('\n'),
    },
  ],

  async run(args, ctx): Promise<ModuleResult<AnalysisResult>> {
    for (const m of args.metrics) {
      const n = (m.prometheus ? 1 : 0) + (m.http ? 1 : 0) + (m.kubernetes ? 1 : 0);
      if (n !== 1) return { status: 'failed', msg: `analysis: metric ${JSON.stringify(m.name)} needs exactly one provider (prometheus, http or kubernetes), got ${n}` };
      if (m.kubernetes) continue;
      if (m.prometheus?.token !== undefined) ctx.addSecret(m.prometheus.token);
      const url = m.prometheus?.address ?? m.http?.url ?? '';
      if (!/^https?:\/\/[^/]/.test(url)) {
        return { status: 'failed', msg: `analysis: metric ${JSON.stringify(m.name)}: ${JSON.stringify(ctx.mask(url))} is not an http:// or https:// URL; set the ${m.prometheus ? 'prometheus address' : 'http url'} (e.g. from an inventory variable)` };
      }
    }
    const since = new Date();
    const baselines = args.metrics.map((): RestartBaseline => new Map());
    const out = await runAnalysis(
      { metrics: args.metrics, intervalMs: args.interval * 1000, count: args.count, failureLimit: args.failure_limit, inconclusiveLimit: args.inconclusive_limit },
      {
        read: async (i) => {
          const m = args.metrics[i]!;
          try {
            if (m.prometheus) return await readPrometheus(m.prometheus, ctx);
            if (m.kubernetes) return await readKubernetes(m.kubernetes, ctx, baselines[i]!, since);
            return await readHttp(m.http!, ctx);
          } catch (e) {
            return { kind: 'inconclusive', reason: ctx.mask(errorMessage(e)) };
          }
        },
        condition: (expr, value) => ctx.evalCondition(expr, { result: value }),
        wait: (ms) => sleep(ms, ctx.signal),
        now: () => new Date(),
        measured: (all) => ctx.log.progress(gateProgress(all, args.count)),
      },
    );
    const last = out.measurements.at(-1);
    const why = last?.reason ? ` (${last.metric}: ${last.reason})` : '';
    const msg = `analysis ${out.verdict} after ${out.measurements.length} measurement(s)${out.verdict === 'successful' ? '' : why}`;
    const passes = out.verdict === 'successful' || (out.verdict === 'inconclusive' && args.on_inconclusive === 'pass');
    if (passes) return { status: 'ok', msg, data: out };
    if (ctx.checkMode) return { status: 'ok', msg: `check mode: ${msg} (not failing the run in check mode)`, data: out };
    return { status: 'failed', msg, data: out };
  },
});

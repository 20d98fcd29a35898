/**
 * `analysis`: an analysis gate between batches, after Argo Rollouts' AnalysisTemplate. Each metric
 * is measured `count` times, `interval` seconds apart; too many failed measurements fail the task,
 * too many inconclusive ones make it inconclusive (a failure unless `on_inconclusive: pass`), too
 * many errors in a row (the provider cannot be read) end it in `error`. The loop and the providers
 * are in src/analysis (exported by the SDK as `analysisGate`).
 */
import { analysisGate, defineModule, gateProgress, secretHeaderValues, sleep, Default, StringEnum, Type, type Args, type ModuleResult, type Static } from 'kplay/sdk';

const PrometheusProvider = Type.Object(
  {
    address: Type.String({ description: 'Base URL of the Prometheus server (templated per cluster, e.g. from an inventory variable).', examples: ['{{ prometheus_url }}'] }),
    query: Type.String({ description: 'PromQL instant query sent to `/api/v1/query` (templated).', examples: ['sum(rate(http_errors_total[1m])) / sum(rate(http_requests_total[1m]))'] }),
    token: Type.Optional(Type.String({ description: 'Bearer token sent as `Authorization: Bearer …`; registered as a secret and never shown.' })),
    validate_certs: Default(Type.Boolean({ description: 'Verify the server certificate.' }), true),
    ca_cert: Type.Optional(Type.String({ description: 'PEM file with the CA certificate(s) to trust; relative to the playbook directory.' })),
    timeout: Default(Type.Number({ exclusiveMinimum: 0, description: 'Timeout of one query, in seconds (a timed-out query is an error measurement).' }), 10),
  },
  {
    additionalProperties: false,
    description:
      'Query Prometheus; `result` is a number for one series, a list of numbers for several (in Prometheus\' order); `NaN`, `+Inf` and `-Inf` samples are the numbers they name. No series is no data (see `no_data`); an unreachable server, an error answer or a range result is an error measurement. The first measurement waits for Prometheus to have scraped every active target after the batch started, and no series counts as no data only once every target was scraped a full scrape interval after the gate started (both waits end with the gate\'s window, at least 30 s).',
  },
);

const HttpProvider = Type.Object(
  {
    url: Type.String({ description: 'URL (`http://` or `https://`) requested at each measurement: the service directly or through the load balancer.' }),
    method: Default(Type.String({ minLength: 1, description: 'HTTP method.' }), 'GET'),
    headers: Default(
      Type.Record(Type.String(), Type.String(), {
        description: 'Request headers, e.g. `Host` to reach a virtual host through a load balancer by address (TLS SNI follows `Host`). Credential-looking values (`Authorization`, tokens) are masked.',
      }),
      {},
    ),
    body: Type.Optional(Type.String({ description: 'Request body (with `method: POST` etc.).' })),
    requests: Default(Type.Integer({ minimum: 1, description: 'Requests sent per measurement.' }), 10),
    spread: Default(Type.Boolean({ description: 'Send the requests evenly over the interval (one every `interval / requests` seconds, not waiting for slow answers) instead of back to back.' }), false),
    status: Default(Type.Array(Type.Integer({ minimum: 100, maximum: 599 }), { minItems: 1, description: 'Status codes counted as a success.' }), [200]),
    validate_certs: Default(Type.Boolean({ description: 'Verify the server certificate.' }), true),
    ca_cert: Type.Optional(Type.String({ description: 'PEM file with the CA certificate(s) to trust; relative to the playbook directory.' })),
    timeout: Default(Type.Number({ exclusiveMinimum: 0, description: 'Timeout of one request, in seconds (a timed-out request is a failed one).' }), 5),
  },
  {
    additionalProperties: false,
    description:
      'Send `requests` requests per measurement; `result` is `{requests, failed, success_rate, p50_ms, p95_ms, max_ms, status_codes, errors}` (success rate in percent, nearest-rank latency percentiles in ms, answers per status code with `error` for no answer, up to 5 distinct failure reasons).',
  },
);

const WebProvider = Type.Object(
  {
    url: Type.String({ description: 'URL (`http://` or `https://`) of a JSON endpoint, requested once per measurement.' }),
    method: Default(Type.String({ minLength: 1, description: 'HTTP method.' }), 'GET'),
    headers: Default(Type.Record(Type.String(), Type.String(), { description: 'Request headers; credential-looking values (`Authorization`, tokens) are masked.' }), {}),
    body: Type.Optional(Type.String({ description: 'Request body.' })),
    json_body: Type.Optional(Type.Unknown({ description: 'Request body sent as JSON (with `Content-Type: application/json` unless set).' })),
    validate_certs: Default(Type.Boolean({ description: 'Verify the server certificate.' }), true),
    ca_cert: Type.Optional(Type.String({ description: 'PEM file with the CA certificate(s) to trust; relative to the playbook directory.' })),
    timeout: Default(Type.Number({ exclusiveMinimum: 0, description: 'Timeout of the request, in seconds (a timed-out request is an error measurement).' }), 10),
  },
  {
    additionalProperties: false,
    description:
      'Argo Rollouts\' web metric: `result` is the JSON answer (read it in the condition, e.g. `result.data.error_rate < 0.01`, where Argo needs a jsonPath). A status other than 2xx, an answer that is not JSON or no answer is an error measurement.',
  },
);

const KubeObjectRef = Type.Object(
  {
    kind: Type.String({ minLength: 1, description: 'Kind, e.g. `Deployment`.' }),
    name: Type.String({ minLength: 1, description: 'Name.' }),
    namespace: Type.Optional(Type.String({ description: 'Namespace (default: `namespace`).' })),
    api_version: Type.Optional(Type.String({ description: 'apiVersion (default: the usual one of a workload kind, e.g. `apps/v1`).' })),
  },
  { additionalProperties: false, description: 'An object to follow.' },
);

const KubernetesProvider = Type.Object(
  {
    from: Type.Optional(
      Type.Unknown({
        description:
          'A registered result whose objects to follow, e.g. `"{{ release }}"`: `k8s_apply`, `helm_release`, `kubernetes.core.k8s`, `k8s_info`, `kubernetes.core.helm` (the objects of its release manifest), a loop of them, or a list.',
      }),
    ),
    objects: Type.Optional(Type.Array(KubeObjectRef, { description: 'Objects to follow, listed.' })),
    namespace: Type.Optional(Type.String({ minLength: 1, description: 'Namespace of `label_selector`, and of `objects` without one.', examples: ['web'] })),
    label_selector: Type.Optional(Type.String({ minLength: 1, description: 'Label selector of pods to follow (with `namespace`).', examples: ['app.kubernetes.io/instance=web'] })),
    ignore_event_reasons: Default(Type.Array(Type.String(), { description: 'Warning event reasons not counted, e.g. `[Unhealthy]` to allow failed probes while pods start.' }), []),
  },
  {
    additionalProperties: false,
    description:
      'Follow the pods of the workloads (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, Pod) among the objects of `from`/`objects`, and the pods of `label_selector`, on the task\'s cluster. `result` is `{objects, missing, pods, ready, ready_flapped, restarts, crash_looping, warning_events, healthy, details}`: restarts and Warning events (of the objects, their pods and the pods\' owners) since the batch started, pods in CrashLoopBackOff, ready pods and pods that lost readiness between measurements, followed workloads that are gone; `healthy` is all of them clean, `details` says what is not.',
  },
);

const Metric = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'Name of the metric, shown in measurements.' }),
    prometheus: Type.Optional(PrometheusProvider),
    http: Type.Optional(HttpProvider),
    kubernetes: Type.Optional(KubernetesProvider),
    web: Type.Optional(WebProvider),
    success_condition: Type.String({
      minLength: 1,
      description: 'Expression (as in `when`) over `result` that is true for a good measurement, e.g. `result < 0.01`, `result | max < 0.01`, `result.success_rate >= 99`, `result.healthy`.',
    }),
    failure_condition: Type.Optional(
      Type.String({ description: 'Expression over `result` that marks a measurement failed; when both are given and neither holds, the measurement is inconclusive.' }),
    ),
    no_data: Default(
      StringEnum(['inconclusive', 'failed', 'successful'], { description: 'The verdict of a measurement without data (a query without series, no pods): `inconclusive` (default), `failed` or `successful`.' }),
      'inconclusive',
    ),
  },
  { additionalProperties: false, description: 'One metric: exactly one provider (`prometheus`, `http`, `web` or `kubernetes`) and its success condition.' },
);

const schema = Type.Object(
  {
    metrics: Type.Array(Metric, { minItems: 1, description: 'The metrics measured at each interval.' }),
    interval: Default(Type.Number({ exclusiveMinimum: 0, description: 'Seconds from the start of one round of measurements to the start of the next.' }), 60),
    count: Default(Type.Integer({ minimum: 1, description: 'Measurements per metric (errors do not count, as in Argo Rollouts).' }), 5),
    initial_delay: Default(Type.Number({ minimum: 0, description: 'Seconds to wait before the first measurement.' }), 0),
    failure_limit: Default(Type.Integer({ minimum: 0, description: 'Failed measurements tolerated per metric; one more fails the gate at once.' }), 0),
    inconclusive_limit: Default(
      Type.Integer({ minimum: 0, description: 'Inconclusive measurements (no data, neither condition true) tolerated per metric; one more makes the gate inconclusive at once.' }),
      0,
    ),
    consecutive_error_limit: Default(
      Type.Integer({
        minimum: 0,
        description:
          'Error measurements in a row tolerated per metric (provider unreachable, error answer, condition that cannot be evaluated); one more ends the gate in `error`, which fails the task. Argo Rollouts\' consecutiveErrorLimit.',
      }),
      4,
    ),
    on_inconclusive: Default(StringEnum(['fail', 'pass'], { description: 'What an inconclusive gate does to the task: `fail` it (default) or `pass`.' }), 'fail'),
  },
  { additionalProperties: false },
);

/** Arguments of `analysis` (after defaults). */
export type AnalysisArgs = Args<typeof schema>;

const verdictOf = (description: string) => StringEnum(['successful', 'failed', 'inconclusive', 'error'], { description });

const Measurement = Type.Object({
  at: Type.String({ description: 'When it was taken (ISO 8601).' }),
  metric: Type.String({ description: 'The metric name.' }),
  value: Type.Unknown({ description: 'The `result` the conditions saw (null when there was none); NaN and ±Inf as the strings `NaN`, `+Inf`, `-Inf`.' }),
  verdict: verdictOf('The verdict of this measurement.'),
  reason: Type.Optional(Type.String({ description: 'Why it is not successful.' })),
});

const MetricResult = Type.Object({
  name: Type.String({ description: 'The metric name.' }),
  verdict: StringEnum(['successful', 'failed', 'inconclusive', 'error', 'running'], { description: 'The metric\'s phase (`running`: the gate ended on another metric first).' }),
  count: Type.Integer({ description: 'Measurements that count towards `count` (all but errors).' }),
  successful: Type.Integer({ description: 'Successful measurements.' }),
  failed: Type.Integer({ description: 'Failed measurements.' }),
  inconclusive: Type.Integer({ description: 'Inconclusive measurements.' }),
  error: Type.Integer({ description: 'Error measurements.' }),
  consecutive_errors: Type.Integer({ description: 'Errors in a row at the end.' }),
});

const result = Type.Object({
  verdict: verdictOf('The verdict (phase) of the gate.'),
  measurements: Type.Array(Measurement, { description: 'Every measurement, in order.' }),
  metrics: Type.Array(MetricResult, { description: 'Per metric: its phase and counters (Argo\'s metric results).' }),
  reason: Type.Optional(Type.String({ description: 'Why the gate is not successful (the deciding metric and limit).' })),
  started: Type.String({ description: 'When the gate started (ISO 8601).' }),
  since: Type.String({ description: 'Start of the window of the Kubernetes signals: when the batch started (ISO 8601).' }),
});

/** The measuring loop and its types, for callers that drive it themselves (tests, reports). */
export const runAnalysis = analysisGate.runAnalysis;
/** See {@link analysisGate.AnalysisDeps}. */
export type AnalysisDeps = analysisGate.AnalysisDeps;
/** See {@link analysisGate.Reading}. */
export type Reading = analysisGate.Reading;

/** One measurement as registered. */
export type MeasurementRecord = Static<typeof Measurement>;
/** What `analysis` registers besides changed/failed/msg. */
export type AnalysisResult = Static<typeof result>;

type MetricArgs = AnalysisArgs['metrics'][number];

/** What a value is, for a message (`null`, `a list …`, `a map with keys …`). */
function shapeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return v.length ? 'a list without Kubernetes objects' : 'an empty list';
  if (typeof v === 'object') return `a map with keys ${Object.keys(v).slice(0, 6).join(', ') || '(none)'}`;
  return `a ${typeof v}`;
}

/** Why the arguments of a metric cannot work, or undefined. */
function metricProblem(m: MetricArgs, mask: (s: string) => string): string | undefined {
  const n = (m.prometheus ? 1 : 0) + (m.http ? 1 : 0) + (m.kubernetes ? 1 : 0) + (m.web ? 1 : 0);
  if (n !== 1) return `needs exactly one provider (prometheus, http, web or kubernetes), got ${n}`;
  const k = m.kubernetes;
  if (k) {
    if (k.from === undefined && k.objects === undefined && k.label_selector === undefined) {
      return 'kubernetes needs what to follow: `from` (a registered result, e.g. from: "{{ release }}"), `objects`, or `namespace` with `label_selector`';
    }
    if (k.label_selector !== undefined && k.namespace === undefined) return 'kubernetes.label_selector needs kubernetes.namespace';
    if (k.from !== undefined) {
      const found = analysisGate.targetsFrom(k.from);
      if (found.targets.length === 0 && found.helm.length === 0) {
        return `kubernetes.from names no Kubernetes objects (it is ${shapeOf(k.from)}); give the registered result of k8s_apply, helm_release, kubernetes.core.k8s/helm or k8s_info, e.g. from: "{{ release }}"`;
      }
    }
    const noNs = (k.objects ?? []).find((o) => !o.namespace && !k.namespace && analysisGate.WORKLOADS[o.kind] !== undefined);
    if (noNs) return `kubernetes.objects: ${noNs.kind} ${noNs.name} has no namespace; set its namespace or kubernetes.namespace`;
    return undefined;
  }
  const url = m.prometheus?.address ?? m.http?.url ?? m.web?.url ?? '';
  if (!/^https?:\/\/[^/]/.test(url)) return `${JSON.stringify(mask(url))} is not an http:// or https:// URL; set the ${m.prometheus ? 'prometheus address' : m.web ? 'web url' : 'http url'} (e.g. from an inventory variable)`;
  return undefined;
}

export default defineModule({
  name: 'analysis',
  summary: 'Gate a rollout: measure Prometheus queries, HTTP traffic, JSON endpoints or Kubernetes signals over a window and pass, fail or report inconclusive',
  description: [
    'Modelled on Argo Rollouts\' AnalysisTemplate. Every metric is measured `count` times, a round of measurements every `interval` seconds.',
    'A measurement is `successful` when `success_condition` holds over `result`, `failed` when it does not (or when',
    '`failure_condition` holds), `inconclusive` when there is no data (see `no_data`) or neither condition holds, and `error` when the',
    'provider cannot be read (unreachable, an error answer) or a condition cannot be evaluated. As in Argo Rollouts: more than',
    '`failure_limit` failed measurements of a metric fail the gate at once; more than `inconclusive_limit` inconclusive ones make it',
    '`inconclusive`, which fails the task unless `on_inconclusive: pass`; more than `consecutive_error_limit` errors in a row end it in',
    '`error`, which fails the task; an error does not count towards `count`.',
    '',
    'Prometheus: `result` is the number of a one-series answer and the list of numbers of a several-series one',
    '(use `result | max < 0.01` to bound every series; as Python\'s max it can skip a NaN, so when a NaN series must fail write',
    '`result | select(\'lt\', 0.01) | list | length == result | length`); NaN compares false, so `result < 0.01` fails on NaN, as in Argo Rollouts.',
    '',
    'Traffic (`http`): `requests` requests per measurement (back to back, or `spread` over the interval), `result.success_rate` in percent and',
    '`result.p95_ms`; `headers` (e.g. `Host` through a load balancer), `method`, `body`, `ca_cert`, `validate_certs`, `timeout`.',
    '',
    'Web (Argo\'s web metric): one request per measurement to a JSON endpoint; `result` is the JSON answer; a status other than 2xx is an error.',
    '',
    'Kubernetes: the objects a release or apply changed (`from: "{{ release }}"`, or `objects`), or pods by `label_selector`:',
    'Warning events and container restarts since the batch started, pods crash-looping, and readiness at every measurement and',
    'in between (`result.healthy` is all of it).',
    '',
    'The result has `verdict`, `measurements: [{at, metric, value, verdict, reason}]` and per-metric counters (`metrics`); use it in',
    '`block`/`rescue` to roll a cluster back, and `serial` with `any_errors_fatal` or `max_fail_percentage: 0` to stop the rollout.',
    '',
    '**Check mode**: the measurements are taken, but the task never fails on them.',
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
      title: 'The release\'s pods: no Warning event, restart or crash loop since the batch started, all ready all along, for two minutes',
      yaml: [
        '- helm_release:',
        '    name: web',
        '    namespace: web',
        '    chart: ./charts/web',
        '  register: release',
        '- analysis:',
        '    interval: 10',
        '    count: 12',
        '    metrics:',
        '      - name: pods',
        '        kubernetes:',
        '          from: "{{ release }}"',
        '        success_condition: result.healthy',
      ].join('\n'),
    },
    {
      title: 'Pods by label: restarts and readiness only',
      yaml: [
        '- analysis:',
        '    interval: 10',
        '    count: 6',
        '    metrics:',
        '      - name: pods',
        '        kubernetes:',
        '          namespace: web',
        '          label_selector: app.kubernetes.io/instance=web',
        '        success_condition: result.restarts == 0 and result.crash_looping == 0 and result.ready == result.pods',
      ].join('\n'),
    },
    {
      title: 'A JSON health endpoint (Argo\'s web metric)',
      yaml: [
        '- analysis:',
        '    interval: 30',
        '    count: 4',
        '    metrics:',
        '      - name: canary-score',
        '        web:',
        '          url: "https://kayenta.example.com/score?app=web&cluster={{ inventory_hostname }}"',
        '          headers: { Authorization: "Bearer {{ score_token }}" }',
        '        success_condition: result.score >= 90',
      ].join('\n'),
    },
    {
      title: 'Traffic through the load balancer: 99 % success and p95 under 300 ms',
      yaml: [
        '- analysis:',
        '    interval: 10',
        '    count: 6',
        '    metrics:',
        '      - name: traffic',
        '        http:',
        '          url: https://203.0.113.10/healthz',
        '          headers: { Host: web.example.com }',
        '          ca_cert: files/ca.pem',
        '          requests: 20',
        '          spread: true',
        '        success_condition: result.success_rate >= 99 and result.p95_ms <= 300',
      ].join('\n'),
    },
  ],

  async run(args, ctx): Promise<ModuleResult<AnalysisResult>> {
    for (const m of args.metrics) {
      if (m.prometheus?.token !== undefined) ctx.addSecret(m.prometheus.token);
      for (const v of secretHeaderValues({ ...(m.http?.headers ?? {}), ...(m.web?.headers ?? {}) })) ctx.addSecret(v);
      const problem = metricProblem(m, (s) => ctx.mask(s));
      if (problem) return { status: 'failed', msg: `analysis: metric ${JSON.stringify(m.name)}: ${problem}` };
    }
    const started = new Date();
    const since = ctx.batchStarted ?? started;
    const states = args.metrics.map(() => analysisGate.kubeState());
    const intervalMs = args.interval * 1000;
    // a Prometheus metric waits for data that can exist, at most for the gate's window
    const watches = args.metrics.map(() => analysisGate.scrapeWatch(since, started, args.initial_delay * 1000 + intervalMs * args.count));
    const out = await analysisGate.runAnalysis(
      {
        metrics: args.metrics,
        intervalMs,
        count: args.count,
        failureLimit: args.failure_limit,
        inconclusiveLimit: args.inconclusive_limit,
        consecutiveErrorLimit: args.consecutive_error_limit,
        initialDelayMs: args.initial_delay * 1000,
      },
      {
        read: (i) => {
          const m = args.metrics[i]!;
          if (m.prometheus) return analysisGate.readPrometheusWatched(m.prometheus, ctx, watches[i]!);
          if (m.kubernetes) return analysisGate.readKubernetes(m.kubernetes, ctx, states[i]!, since);
          if (m.web) return analysisGate.readWeb(m.web, ctx);
          return analysisGate.readTraffic(m.http!, ctx, intervalMs);
        },
        condition: (expr, value) => ctx.evalCondition(expr, { result: value }),
        wait: (ms) => sleep(ms, ctx.signal),
        now: () => new Date(),
        measured: (all) => ctx.log.progress(gateProgress(all, args.count)),
      },
    );
    const data: AnalysisResult = { ...out, started: started.toISOString(), since: since.toISOString() };
    const last = out.measurements.at(-1);
    const why = out.reason === undefined ? '' : ` (${out.reason}${last?.reason ? `; last: ${last.reason}` : ''})`;
    const msg = ctx.mask(`analysis ${out.verdict} after ${out.measurements.length} measurement(s)${why}`);
    const passes = out.verdict === 'successful' || (out.verdict === 'inconclusive' && args.on_inconclusive === 'pass');
    if (passes) return { status: 'ok', msg, data };
    if (ctx.checkMode) return { status: 'ok', msg: `check mode: ${msg} (not failing the run in check mode)`, data };
    return { status: 'failed', msg, data };
  },
});

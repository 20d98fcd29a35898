/** The `analysis` gate's engine: the measuring loop and its providers (Prometheus, traffic, Kubernetes signals). */
export { judge, jsonSafe, runAnalysis, type AnalysisDeps, type AnalysisOutcome, type AnalysisPlan, type MeasurementRecord, type MetricSummary, type NoData, type PlanMetric, type Reading, type Verdict } from './loop.js';
export { promGet, promNumber, promReading, readPrometheus, type PromAnswer, type PromGet, type PrometheusArgs } from './prometheus.js';
export { labelKey, MIN_WAIT_MS, promDurationMs, readPrometheusWatched, scrapeTargets, scrapeWatch, storedScrapes, type ScrapeTarget, type ScrapeWatch } from './scrapes.js';
export { p95, percentile, readTraffic, trafficValue, type TrafficArgs, type TrafficValue } from './traffic.js';
export { kubeSignals, kubeState, readKubernetes, WORKLOADS, type EventLike, type KubeSignalArgs, type KubeSignals, type KubeState, type PodLike } from './kube.js';
export { selectorString, targetsFrom, type HelmRef, type KubeTarget } from './targets.js';
export { readWeb, webReading, type WebArgs } from './web.js';

/** Types of prometheus.mjs: a real Prometheus, a stand-in exporter, and waits on Prometheus' answers. */

/** Seconds between two scrapes of every target. */
export const SCRAPE_INTERVAL_S: number;

/** Path of the prometheus binary; throws (never skips) with install instructions when missing. */
export function requirePrometheus(): string;

/** A stand-in exporter serving `app_error_ratio{series="…"}` gauges. */
export interface Exporter {
  server: {
    /** Base URL, e.g. `http://127.0.0.1:41234`. */
    url: string;
    port: number;
    /** Stop the server (drops open connections). */
    close(): Promise<void>;
  };
  /** Current values per series label (set, change or delete them while Prometheus scrapes). */
  ratios: Map<string, number>;
}

/** Start the exporter with one series `a` at `ratio`. */
export function startExporter(ratio: number): Promise<Exporter>;

/** A running Prometheus. */
export interface PrometheusInstance {
  url: string;
  pid: number | undefined;
  /** Stop it (SIGTERM, then SIGKILL after 10 s); a temp directory is removed. */
  stop(): Promise<void>;
  /** What it logged so far. */
  output(): string;
}

/** Where and how Prometheus runs (defaults: a temp directory, a free port, job `app`). */
export interface PrometheusOptions {
  /** Directory for its config, TSDB (emptied first) and prometheus.log; kept after stop(). */
  dir?: string;
  port?: number;
  /** The scrape job's name. */
  job?: string;
}

/**
 * Start Prometheus scraping every SCRAPE_INTERVAL_S seconds: one `host:port` target, or targets
 * keyed by a `cluster` label value. Resolves once it is ready.
 */
export function startPrometheus(target: string | Record<string, string>, o?: PrometheusOptions): Promise<PrometheusInstance>;

/** Poll Prometheus until `query` returns a vector whose values satisfy `ok` (no fixed sleeps). */
export function waitForQuery(url: string, query: string, ok: (values: number[]) => boolean, timeoutMs?: number): Promise<void>;

/** A stored sample: when Prometheus scraped it (ms since the epoch, its own timestamp) and the value. */
export interface Sample {
  ms: number;
  value: number;
}

/** The samples Prometheus stored for one series over the last `window` (e.g. `5m`), oldest first. */
export function samples(url: string, selector: string, window?: string): Promise<Sample[]>;

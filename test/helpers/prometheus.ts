/**
 * Real Prometheus for tests (Debian's `prometheus` binary, started here with a temp config and
 * TSDB, never the system service) scraping a stand-in exporter whose values the test sets.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './haproxy.js';
import { startHttp, type TestServer } from './http.js';

/** Path of the prometheus binary; throws (never skips) with install instructions when missing. */
export function requirePrometheus(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v prometheus'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('prometheus is not installed, but the analysis gate tests need a real Prometheus: run `apt-get update && apt-get install -y prometheus`');
  }
}

/** An exporter serving `app_error_ratio{series="…"}` gauges the test sets. */
export interface Exporter {
  server: TestServer;
  /** Current values per series label. */
  ratios: Map<string, number>;
}

/** Start the exporter with one series `a` at `ratio`. */
export async function startExporter(ratio: number): Promise<Exporter> {
  const ratios = new Map<string, number>([['a', ratio]]);
  const server = await startHttp((_req, res) => {
    const lines = ['# TYPE app_error_ratio gauge', ...[...ratios].map(([s, v]) => `app_error_ratio{series="${s}"} ${Number.isNaN(v) ? 'NaN' : String(v)}`)];
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(`${lines.join('\n')}\n`);
  });
  return { server, ratios };
}

/** Seconds between two scrapes of every target (the tests' bounds use it). */
export const SCRAPE_INTERVAL_S = 1;

/** A running Prometheus. */
export interface PrometheusInstance {
  url: string;
  /** Stop it (SIGTERM, then SIGKILL) and remove its temp directory. */
  stop(): Promise<void>;
  output(): string;
}

/**
 * Start Prometheus scraping every {@link SCRAPE_INTERVAL_S} seconds: one `host:port` target, or targets keyed by a `cluster`
 * label value (`{sandbox-1: 'host:port', …}`). Resolves once it is ready.
 */
export async function startPrometheus(target: string | Record<string, string>): Promise<PrometheusInstance> {
  const bin = requirePrometheus();
  const dir = mkdtempSync(join(tmpdir(), 'kplay-prom-'));
  const port = await freePort();
  const cfg = join(dir, 'prometheus.yml');
  const statics =
    typeof target === 'string'
      ? `      - targets: ['${target}']\n`
      : Object.entries(target)
          .map(([cluster, t]) => `      - targets: ['${t}']\n        labels: { cluster: '${cluster}' }\n`)
          .join('');
  writeFileSync(cfg, `global:\n  scrape_interval: ${SCRAPE_INTERVAL_S}s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: app\n    static_configs:\n${statics}`);
  const proc = spawn(bin, [`--config.file=${cfg}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--query.lookback-delta=3s'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let exited = false;
  proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (out += c.toString()));
  proc.on('exit', () => (exited = true));
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (!exited) {
      const gone = new Promise<void>((r) => proc.once('exit', () => r()));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  for (;;) {
    if (exited) throw new Error(`prometheus exited at start:\n${out}`);
    try {
      if ((await fetch(`${url}/-/ready`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, stop, output: () => out };
}

/** Poll Prometheus until `query` returns a vector whose values satisfy `ok` (no fixed sleeps). */
export async function waitForQuery(url: string, query: string, ok: (values: number[]) => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(query)}`);
    last = await res.text();
    const body = JSON.parse(last) as { data?: { result?: { value: [number, string] }[] } };
    const values = (body.data?.result ?? []).map((s) => Number(s.value[1]));
    if (ok(values)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`prometheus never answered ${query} as expected; last answer: ${last}`);
}

/** A stored sample: when Prometheus scraped it (ms since the epoch, its own timestamp) and the value. */
export interface Sample {
  ms: number;
  value: number;
}

/**
 * The samples Prometheus stored for one series over the last `window` (a range selector, e.g.
 * `5m`), oldest first: their timestamps are the scrapes' own, taken by Prometheus, so they do
 * not depend on when this test process got to run.
 */
export async function samples(url: string, selector: string, window = '10m'): Promise<Sample[]> {
  const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(`${selector}[${window}]`)}`);
  const text = await res.text();
  const body = JSON.parse(text) as { data?: { resultType?: string; result?: { values?: [number, string][] }[] } };
  const series = body.data?.result ?? [];
  if (body.data?.resultType !== 'matrix' || series.length !== 1) throw new Error(`expected one series for ${selector}[${window}], got: ${text.slice(0, 500)}`);
  return (series[0]?.values ?? []).map(([t, v]) => ({ ms: Math.round(t * 1000), value: Number(v) }));
}

// A real Prometheus for the tests, the demo and the benchmark — one implementation, plain JS so the
// demo and the bench harness run it under node without a TypeScript loader (types:
// prometheus.d.mts). Debian's `prometheus` binary (test/sandbox/install.sh installs it), started
// here with its own config and TSDB, never the system service; plus a stand-in exporter whose
// `app_error_ratio` values a test sets, and helpers that wait on Prometheus' own answers.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Seconds between two scrapes of every target. */
export const SCRAPE_INTERVAL_S = 1;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Path of the prometheus binary; throws (never skips) with install instructions when missing. */
export function requirePrometheus() {
  try {
    return execFileSync('sh', ['-c', 'command -v prometheus'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('prometheus is not installed: run `bash test/sandbox/install.sh`, or `apt-get update && apt-get install -y prometheus`');
  }
}

/** A free TCP port on 127.0.0.1. @returns {Promise<number>} */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}

/**
 * Start an exporter serving `app_error_ratio{series="…"}` gauges, one series `a` at `ratio`; set
 * values with `exporter.ratios.set(series, value)`.
 * @param {number} ratio
 */
export async function startExporter(ratio) {
  const ratios = new Map([['a', ratio]]);
  const server = http.createServer((_req, res) => {
    const lines = ['# TYPE app_error_ratio gauge', ...[...ratios].map(([s, v]) => `app_error_ratio{series="${s}"} ${Number.isNaN(v) ? 'NaN' : String(v)}`)];
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(`${lines.join('\n')}\n`);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(undefined));
  });
  const port = /** @type {net.AddressInfo} */ (server.address()).port;
  const close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve(undefined));
    });
  return { server: { url: `http://127.0.0.1:${port}`, port, close }, ratios };
}

/**
 * Start Prometheus scraping every SCRAPE_INTERVAL_S: one `host:port` target, or targets keyed by a
 * `cluster` label value (`{'sandbox-1': 'host:port', …}`). Resolves once it is ready.
 *
 * `dir` (default: a temp directory, removed by stop()) holds the config, the TSDB (emptied first:
 * counters of an earlier run would only confuse rate()) and `prometheus.log`; `port` defaults to a
 * free one; `job` is the scrape job's name (default `app`).
 * @param {string | Record<string, string>} target
 * @param {{dir?: string, port?: number, job?: string}} [o]
 */
export async function startPrometheus(target, o = {}) {
  const bin = requirePrometheus();
  const dir = o.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'kplay-prom-'));
  fs.mkdirSync(dir, { recursive: true });
  const port = o.port ?? (await freePort());
  const cfg = path.join(dir, 'prometheus.yml');
  const statics =
    typeof target === 'string'
      ? `      - targets: ['${target}']\n`
      : Object.entries(target)
          .map(([cluster, t]) => `      - targets: ['${t}']\n        labels: { cluster: '${cluster}' }\n`)
          .join('');
  fs.writeFileSync(cfg, `global:\n  scrape_interval: ${SCRAPE_INTERVAL_S}s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: ${o.job ?? 'app'}\n    static_configs:\n${statics}`);
  const data = path.join(dir, 'data');
  fs.rmSync(data, { recursive: true, force: true });
  const logFile = path.join(dir, 'prometheus.log');
  const log = fs.openSync(logFile, 'a');
  const proc = spawn(bin, [`--config.file=${cfg}`, `--storage.tsdb.path=${data}`, `--web.listen-address=127.0.0.1:${port}`, '--query.lookback-delta=3s'], { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  let exited = false;
  proc.on('exit', () => (exited = true));
  const url = `http://127.0.0.1:${port}`;
  const output = () => {
    try {
      return fs.readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  const stop = async () => {
    if (!exited) {
      const gone = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    }
    if (o.dir === undefined) fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`prometheus exited at start (${logFile}):\n${output().slice(-2000)}`);
    if (Date.now() > deadline) {
      const out = output();
      await stop();
      throw new Error(`prometheus not ready after 60 s:\n${out.slice(-2000)}`);
    }
    try {
      if ((await fetch(`${url}/-/ready`)).ok) break;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  return { url, pid: proc.pid, stop, output };
}

/**
 * Poll Prometheus until the instant `query` returns a vector whose values satisfy `ok` (no fixed sleeps).
 * @param {string} url @param {string} query @param {(values: number[]) => boolean} ok @param {number} [timeoutMs]
 */
export async function waitForQuery(url, query, ok, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(query)}`);
    last = await res.text();
    const values = (JSON.parse(last).data?.result ?? []).map((s) => Number(s.value[1]));
    if (ok(values)) return;
    await sleep(200);
  }
  throw new Error(`prometheus never answered ${query} as expected; last answer: ${last}`);
}

/**
 * The samples Prometheus stored for one series over the last `window` (a range selector, e.g.
 * `5m`), oldest first, as `{ms, value}`: their timestamps are the scrapes' own, taken by
 * Prometheus, so they do not depend on when the caller got to run.
 * @param {string} url @param {string} selector @param {string} [window]
 */
export async function samples(url, selector, window = '10m') {
  const text = await (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(`${selector}[${window}]`)}`)).text();
  const body = JSON.parse(text);
  const series = body.data?.result ?? [];
  if (body.data?.resultType !== 'matrix' || series.length !== 1) throw new Error(`expected one series for ${selector}[${window}], got: ${text.slice(0, 500)}`);
  return (series[0].values ?? []).map(([t, v]) => ({ ms: Math.round(t * 1000), value: Number(v) }));
}

// A real Prometheus (Debian's `prometheus` binary, temp config and TSDB, never the system service)
// scraping a stand-in exporter whose error ratio the benchmark sets: B12, the analysis gate's stop
// latency. The same set-up as test/helpers/prometheus.ts, for the plain-JS harness.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Seconds between two scrapes. */
export const SCRAPE_INTERVAL_S = 1;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** An exporter serving `app_error_ratio` = `ratio` (set it with exporter.ratio = x). */
export async function startExporter(ratio) {
  const ex = { ratio, url: '', close: () => Promise.resolve() };
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(`# TYPE app_error_ratio gauge\napp_error_ratio ${ex.ratio}\n`);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  ex.url = `http://127.0.0.1:${server.address().port}`;
  ex.close = () => new Promise((r) => server.close(() => r()));
  return ex;
}

/** Start Prometheus scraping `target` (host:port) every SCRAPE_INTERVAL_S; resolves when ready. */
export async function startPrometheus(target) {
  let bin;
  try {
    bin = execFileSync('sh', ['-c', 'command -v prometheus'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('prometheus is not installed (B12 needs it): run test/bench/install.sh, or apt-get install -y prometheus');
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kplay-bench-prom-'));
  const port = await freePort();
  const cfg = path.join(dir, 'prometheus.yml');
  fs.writeFileSync(cfg, `global:\n  scrape_interval: ${SCRAPE_INTERVAL_S}s\nscrape_configs:\n  - job_name: app\n    static_configs:\n      - targets: ['${target}']\n`);
  const proc = spawn(bin, [`--config.file=${cfg}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--query.lookback-delta=3s'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let exited = false;
  proc.stdout.on('data', (c) => (out += c));
  proc.stderr.on('data', (c) => (out += c));
  proc.on('exit', () => (exited = true));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (!exited) {
      const gone = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`prometheus exited at start:\n${out}`);
    if (Date.now() > deadline) {
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
  return { url, stop };
}

/** Poll until the instant query's single value satisfies `ok`. */
export async function waitForValue(url, query, ok, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = await (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(query)}`)).text();
    const v = JSON.parse(last).data?.result?.[0]?.value?.[1];
    if (v !== undefined && ok(Number(v))) return;
    await sleep(200);
  }
  throw new Error(`prometheus never answered ${query} as expected; last answer: ${last}`);
}

/** The stored samples of `selector` over the last `window`, oldest first: [{ms, value}] (Prometheus' own scrape timestamps). */
export async function samples(url, selector, window = '10m') {
  const text = await (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(`${selector}[${window}]`)}`)).text();
  const body = JSON.parse(text);
  const series = body.data?.result ?? [];
  if (body.data?.resultType !== 'matrix' || series.length !== 1) throw new Error(`expected one series for ${selector}[${window}], got: ${text.slice(0, 500)}`);
  return series[0].values.map(([t, v]) => ({ ms: Math.round(t * 1000), value: Number(v) }));
}

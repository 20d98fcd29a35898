// Prometheus for the demo and its end-to-end test: Debian's `prometheus` binary (installed by
// test/sandbox/install.sh), started with its own config and TSDB in `dir`, never the system
// service. It scrapes every stand-in ingress's /metrics once a second, with a `cluster` label.
// (test/helpers/prometheus.ts is the same for the TypeScript tests; this one is plain JS because
// the demo runs under node without a TypeScript loader.)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Start Prometheus on 127.0.0.1:`port`, scraping `targets` (`{cluster: 'host:port'}`) every second.
 * Resolves once it is ready.
 * @param {{dir: string, port: number, targets: Record<string, string>}} o
 */
export async function startPrometheus(o) {
  let bin;
  try {
    bin = execFileSync('sh', ['-c', 'command -v prometheus'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('prometheus not found on PATH: run `bash test/sandbox/install.sh` (installs Debian prometheus)');
  }
  fs.mkdirSync(o.dir, { recursive: true });
  const cfg = path.join(o.dir, 'prometheus.yml');
  const statics = Object.entries(o.targets)
    .map(([cluster, t]) => `      - targets: ['${t}']\n        labels: { cluster: '${cluster}' }\n`)
    .join('');
  fs.writeFileSync(cfg, `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: webapp-ingress\n    static_configs:\n${statics}`);
  const data = path.join(o.dir, 'data');
  fs.rmSync(data, { recursive: true, force: true }); // counters of an earlier run would only confuse rate()
  const log = fs.openSync(path.join(o.dir, 'prometheus.log'), 'a');
  const child = spawn(bin, [`--config.file=${cfg}`, `--storage.tsdb.path=${data}`, `--web.listen-address=127.0.0.1:${o.port}`, '--query.lookback-delta=3s'], { stdio: ['ignore', log, log] });
  const url = `http://127.0.0.1:${o.port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}); see ${path.join(o.dir, 'prometheus.log')}`);
    try {
      if ((await fetch(`${url}/-/ready`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`prometheus not ready within 30s; see ${path.join(o.dir, 'prometheus.log')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/**
 * Poll Prometheus until `query` returns a vector whose values satisfy `ok` (no fixed sleeps).
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
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`prometheus never answered ${query} as expected; last answer: ${last}`);
}

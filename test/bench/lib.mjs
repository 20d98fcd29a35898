// Helpers of the benchmark harness (bench.mjs): processes with timing, request/write counting
// (apiserver audit log, KPLAY_STATS_FILE, kubectl -v=6), medians, the results table.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const kplayBin = path.join(repoRoot, 'dist/src/cli/main.js');

/**
 * Run a program; resolves {code, ms, stdout, stderr, rssKiB?}. `timeRss: true` wraps it in
 * GNU `/usr/bin/time -v` and reports the peak RSS. Never rejects on a non-zero exit.
 */
export function run(file, args, opts = {}) {
  return new Promise((resolve, reject) => {
    let cmd = file;
    let argv = args;
    let timeFile;
    if (opts.timeRss) {
      timeFile = path.join(opts.tmpDir ?? '/tmp', `time-${process.pid}-${Math.random().toString(36).slice(2)}.txt`);
      cmd = '/usr/bin/time';
      argv = ['-v', '-o', timeFile, file, ...args];
    }
    const t0 = performance.now();
    const child = spawn(cmd, argv, { cwd: opts.cwd ?? repoRoot, env: { ...process.env, NO_COLOR: '1', ...opts.env }, stdio: [opts.input !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    if (opts.onStdout) child.stdout.on('data', (d) => opts.onStdout(String(d)));
    child.stderr.on('data', (d) => (stderr += d));
    if (opts.input !== undefined) child.stdin.end(opts.input);
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 900_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const ms = performance.now() - t0;
      let rssKiB;
      if (timeFile && fs.existsSync(timeFile)) {
        const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(fs.readFileSync(timeFile, 'utf8'));
        if (m) rssKiB = Number(m[1]);
        fs.rmSync(timeFile, { force: true });
      }
      resolve({ code: code ?? (signal ? 128 : 1), signal, ms, stdout, stderr, rssKiB, endedAt: Date.now() });
    });
  });
}

/** Like run() but throws on a non-zero exit (setup and cleanup steps). */
export async function must(file, args, opts = {}) {
  const r = await run(file, args, opts);
  if (r.code !== 0) throw new Error(`${path.basename(file)} ${args.join(' ').slice(0, 300)} exited ${r.code}\n${(r.stderr || r.stdout).slice(-3000)}`);
  return r;
}

export function median(xs) {
  const v = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// ------------------------------------------------------------------ audit log

/** Line counts of the audit logs (a mark before an action). */
export function auditMark(clusters) {
  const m = {};
  for (const c of clusters) m[c.name] = fs.existsSync(c.auditLog) ? fs.readFileSync(c.auditLog, 'utf8').split('\n').length - 1 : 0;
  return m;
}

/**
 * Write events logged since `mark` whose userAgent starts with `agent` and that touch this
 * benchmark's objects (`belongs(event)`). Returns {writes, dryRuns, status429}.
 */
export function auditCount(clusters, mark, agent, belongs) {
  let writes = 0;
  let dryRuns = 0;
  let status429 = 0;
  for (const c of clusters) {
    if (!fs.existsSync(c.auditLog)) continue;
    const lines = fs.readFileSync(c.auditLog, 'utf8').split('\n').slice(mark[c.name] ?? 0);
    for (const line of lines) {
      if (!line) continue;
      let e;
      try {
        e = JSON.parse(line);
      } catch {
        continue;
      }
      if (typeof e.userAgent !== 'string' || !e.userAgent.toLowerCase().startsWith(agent.toLowerCase())) continue;
      if (!belongs(e)) continue;
      if (e.responseStatus?.code === 429) status429++;
      if (String(e.requestURI).includes('dryRun=')) dryRuns++;
      else writes++;
    }
  }
  return { writes, dryRuns, status429 };
}

/**
 * Sum of kplay's per-connection request counters written to KPLAY_STATS_FILE, and the schemas it
 * compiled at run time (none expected: built-in and static schemas are compiled at build time).
 */
export function readStats(file) {
  const s = { requests: 0, writes: 0, retries: 0, clients: 0, notFound: 0, byVerb: {}, schemaCompilations: 0 };
  if (!fs.existsSync(file)) return s;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const o = JSON.parse(line);
    if (typeof o.schemaCompilations === 'number') {
      s.schemaCompilations += o.schemaCompilations;
      continue;
    }
    s.requests += o.requests;
    s.writes += o.writes;
    s.retries += o.retries;
    s.notFound += o.notFound ?? 0;
    for (const [v, n] of Object.entries(o.byVerb ?? {})) s.byVerb[v] = (s.byVerb[v] ?? 0) + n;
    s.clients++;
  }
  return s;
}

/** kplay's requests by verb, e.g. `discovery 3, list 7, apply 300` (for a table's notes). */
export function verbs(stats) {
  const order = ['discovery', 'get', 'list', 'watch', 'dryrun', 'apply', 'create', 'update', 'patch', 'delete'];
  return order.filter((v) => stats.byVerb?.[v]).map((v) => `${v} ${stats.byVerb[v]}`).join(', ') || 'none';
}

/** Requests kubectl made, from its `-v=6` log lines ("Response" verb=… status=…). */
export function kubectlRequests(stderr) {
  let n = 0;
  for (const l of stderr.split('\n')) if (l.includes('"Response" verb=')) n++;
  return n;
}

// ------------------------------------------------------------------ table

const fmtMs = (v) => (v === null || v === undefined ? '-' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);
const fmtN = (v) => (v === null || v === undefined ? '-' : String(v));

/** The results table (markdown). */
export function table(rows, previousRows) {
  const prev = new Map((previousRows ?? []).map((r) => [r.bench, r]));
  const head = ['bench', 'kplay median', 'peer median', 'ratio', 'goal', 'met', 'kplay req/writes', 'peer req/writes', 'vs previous', 'notes'];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of rows) {
    lines.push(
      `| ${r.bench} | ${fmtMs(r.kplay_ms)} | ${fmtMs(r.peer_ms)} | ${r.ratio === null ? '-' : r.ratio.toFixed(3)} | ${r.goal} | ${r.met === null ? '-' : r.met ? 'yes' : 'NO'} | ${fmtN(r.kplay_requests)}/${fmtN(r.kplay_writes)} | ${fmtN(r.peer_requests)}/${fmtN(r.peer_writes)} | ${versus(r, prev.get(r.bench))} | ${r.notes ?? ''} |`,
    );
  }
  return lines.join('\n');
}

/** Ratio and request/write counts against the previous stored result of the same row. */
function versus(r, p) {
  if (!p) return 'new';
  const parts = [];
  if (typeof r.ratio === 'number' && typeof p.ratio === 'number') parts.push(`ratio ${p.ratio.toFixed(3)} → ${r.ratio.toFixed(3)}`);
  for (const k of ['kplay_requests', 'kplay_writes']) {
    if (typeof r[k] === 'number' && typeof p[k] === 'number' && r[k] !== p[k]) parts.push(`${k.replace('kplay_', '')} ${p[k]} → ${r[k]}${r[k] > p[k] ? ' (MORE)' : ''}`);
  }
  return parts.join(', ') || 'same';
}

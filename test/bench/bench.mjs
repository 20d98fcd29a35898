#!/usr/bin/env node
// kplay benchmarks against the tools users would pick instead (see test/bench/README.md).
//
//   npm run bench [-- --only B1,B3] [--quick] [--reps N] [--out results.json]
//
// Starts (or reuses) the sandbox, prepares inputs in a temp dir, runs kplay and the peer
// alternately on fresh namespaces (bench-<run>-…), prints the results table as the LAST lines
// of its output and writes the results as JSON to --out. Cleans up its namespaces.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { up } from '../sandbox/lib.mjs';
import { auditCount, auditMark, kplayBin, kubectlRequests, median, must, readStats, repoRoot, run, table } from './lib.mjs';
import { BENCHES } from './benches.mjs';

function parseArgs(argv) {
  const o = { only: null, quick: false, out: null, reps: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') o.quick = true;
    else if (a === '--only') o.only = argv[++i].split(',').map((s) => s.trim().toUpperCase());
    else if (a.startsWith('--only=')) o.only = a.slice(7).split(',').map((s) => s.trim().toUpperCase());
    else if (a === '--out') o.out = argv[++i];
    else if (a.startsWith('--out=')) o.out = a.slice(6);
    else if (a === '--reps') o.reps = Number(argv[++i]);
    else if (a === '--help' || a === '-h') {
      console.log('usage: node test/bench/bench.mjs [--only B1,B3] [--quick] [--reps N] [--out results.json]');
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(kplayBin)) throw new Error(`${kplayBin} missing: run npm run build`);
  const log = (m) => console.log(`[bench] ${m}`);
  const sb = await up({ clusters: 3, log: (l) => log(`sandbox: ${l}`) });
  const state = sb.state;
  const runId = `bench-${Date.now().toString(36).slice(-6)}`;
  const storeDir = process.env.KPLAY_BENCH_STORE ?? path.join(os.homedir(), '.cache/kplay-bench');
  fs.mkdirSync(storeDir, { recursive: true });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), `kplay-${runId}-`));
  const venv = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
  const env = {
    runId,
    work,
    quick: opts.quick,
    reps: opts.reps ?? (opts.quick ? 1 : 3),
    state,
    clusters: state.clusters,
    kubeconfig: state.kubeconfig,
    kubectlBin: path.join(state.binDir, 'kubectl'),
    helmBin: path.join(state.binDir, 'helm'),
    venv,
    log,
    repoRoot,
    /** Outside the repository: stored results, files kept from run to run. */
    store: storeDir,
    kplayBin,
    namespaces: new Set(),
    crdNames: new Set(),
    // helpers
    run,
    must,
    median,
    auditMark: () => auditMark(state.clusters),
    auditCount: (mark, agent, belongs) => auditCount(state.clusters, mark, agent, belongs),
    kubectlRequests,
    readStats,
    /** kubectl against the sandbox (context sandbox-1 unless given). */
    kubectl: (args, o = {}) => run(path.join(state.binDir, 'kubectl'), ['--kubeconfig', state.kubeconfig, '--context', o.context ?? 'sandbox-1', '--cache-dir', path.join(work, 'kube-cache'), ...args], o),
    /** kplay run; returns run() result plus stats (KPLAY_STATS_FILE). */
    kplay: async (args, o = {}) => {
      const statsFile = path.join(work, `stats-${Math.random().toString(36).slice(2)}.jsonl`);
      const r = await run(process.execPath, [kplayBin, ...args], { ...o, env: { KPLAY_HELM: path.join(state.binDir, 'helm'), ...o.env, KPLAY_STATS_FILE: statsFile } });
      r.stats = readStats(statsFile);
      return r;
    },
  };
  const selected = BENCHES.filter((b) => !opts.only || opts.only.includes(b.id));
  if (!selected.length) throw new Error(`no benchmark matches --only ${opts.only}`);
  log(`run ${runId}, ${opts.quick ? 'quick' : 'full'}, ${env.reps} repetition(s), work dir ${work}`);
  const rows = [];
  const errors = [];
  for (const b of selected) {
    const t0 = Date.now();
    log(`${b.id}: ${b.title}`);
    try {
      const r = await b.run(env);
      rows.push(...r);
      for (const row of r) log(`${row.bench}: kplay ${row.kplay_ms?.toFixed?.(0)} ms, peer ${row.peer_ms?.toFixed?.(0)} ms, ratio ${row.ratio?.toFixed?.(3)}`);
    } catch (e) {
      errors.push({ bench: b.id, error: String(e?.stack ?? e) });
      log(`${b.id} FAILED: ${e?.stack ?? e}`);
      for (const name of b.rows(opts.quick)) rows.push({ bench: name, kplay_ms: null, peer_ms: null, ratio: null, goal: '', met: null, notes: 'failed: see log' });
    } finally {
      await cleanup(env).catch((e) => log(`cleanup: ${e.message}`));
    }
    log(`${b.id}: ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
  const result = {
    runId,
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, kernel: os.release() },
    mode: opts.quick ? 'quick' : 'full',
    repetitions: env.reps,
    rows,
    errors,
  };
  if (opts.out) fs.writeFileSync(opts.out, JSON.stringify(result, null, 2));
  fs.rmSync(work, { recursive: true, force: true });
  // The previous result of the same mode on this machine (outside the repository), for the deltas.
  const store = path.join(env.store, `last-${result.mode}.json`);
  let previous;
  try {
    previous = JSON.parse(fs.readFileSync(store, 'utf8'));
  } catch {
    previous = undefined;
  }
  try {
    fs.mkdirSync(path.dirname(store), { recursive: true });
    if (!errors.length) fs.writeFileSync(store, JSON.stringify(result, null, 2));
  } catch (e) {
    log(`cannot store this result in ${store}: ${e.message}`);
  }
  console.log('');
  console.log(`kplay benchmarks (${result.mode}, ${env.reps} rep(s), ${result.machine.cpus} CPUs, ${result.date}); ratio = kplay / peer (medians)${previous ? `; "vs previous" compares with ${previous.runId} of ${previous.date}` : '; no previous result stored yet'}`);
  console.log(table(rows, previous?.rows));
  process.exitCode = errors.length ? 1 : 0;
}

/** Delete this run's namespaces and cluster-scoped objects (CRDs, APIServices, cluster roles; does not wait). */
export async function cleanup(env) {
  for (const c of env.clusters) {
    const mine = (await env.kubectl(['get', 'ns', '-o', 'name'], { context: c.context })).stdout
      .split('\n')
      .map((l) => l.replace('namespace/', '').trim())
      .filter((n) => n.startsWith(env.runId));
    for (let i = 0; i < mine.length; i += 50) await env.kubectl(['delete', 'ns', '--wait=false', '--ignore-not-found', ...mine.slice(i, i + 50)], { context: c.context });
    const cluster = (await env.kubectl(['get', 'apiservice,crd,clusterrolebinding,clusterrole', '-o', 'name'], { context: c.context })).stdout
      .split('\n')
      .map((l) => l.trim())
      .filter((n) => n.includes(env.runId));
    if (cluster.length) await env.kubectl(['delete', '--wait=false', '--ignore-not-found', ...cluster], { context: c.context });
  }
}

main().catch((e) => {
  console.error(e?.stack ?? e);
  process.exit(1);
});

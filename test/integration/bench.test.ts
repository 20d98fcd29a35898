// Proves the benchmark harness works end to end (`node test/bench/bench.mjs --quick`): every
// benchmark row is in the printed table and in the JSON, with numeric values. Asserts nothing
// about speed (this shared machine is too noisy for timed assertions).
// Needs test/bench/install.sh (Ansible venv, GNU time, haproxy) and a built dist/.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { sandboxEnv } from '../sandbox/env.js';

interface Row {
  bench: string;
  kplay_ms: number | null;
  peer_ms: number | null;
  ratio: number | null;
  kplay_writes: number | null;
  peer_writes: number | null;
  kplay_requests: number | null;
}

const EXPECTED = [
  /^B1 apply \d+ objects, cold$/,
  /^B1 apply \d+ objects, no-op$/,
  /^B2 \d+ tasks x \d+ clusters$/,
  /^B3 \d+ clusters x \d+ objects, forks 10$/,
  /^B3 \d+ clusters x \d+ objects, forks 25$/,
  /^B3 \d+ clusters x \d+ objects, forks 50$/,
  /^B4 helm_release \d+ releases, install$/,
  /^B4 helm_release \d+ releases, no-op$/,
  /^B4b helm_release ingress controller chart \(hooks, webhook\), install$/,
  /^B4b helm_release ingress controller chart \(hooks, webhook\), no-op$/,
  /^B5 wait_for \d+ rollouts \(latency after last ready\)$/,
  /^B6 lb_switch drain\+ready \d+ HAProxy servers$/,
  /^B7 kplay --help vs node -e 0$/,
  /^B7 kplay validate of 200 tasks vs kplay --help$/,
  /^B7 kplay validate of a 200-task role tree vs kplay --help$/,
  /^B7 kplay run of 1 local task vs node -e 0$/,
  /^B9 \d+ expressions$/,
  /^B8 big set \d+ objects \(\d+ large CRDs\), cold$/,
  /^B8 big set \d+ objects \(\d+ large CRDs\), no-op$/,
  /^B8b vendor shapes \d+ objects \(\d+ CRDs\), cold$/,
  /^B8b vendor shapes \d+ objects \(\d+ CRDs\), no-op$/,
  /^B10 kubernetes\.core playbook x \d+ clusters$/,
  /^B11 live board, window of \d+ clusters \(board vs plain, in a pty\)$/,
  /^B12 gate stop latency \(first bad scrape to gate failed\)$/,
  /^B13 fleet simulation: \d+ inventory entries, 10 shards vs 1 process$/,
  /^B14 kubernetes\.core targets x \d+ \(both engines pass\)$/,
];

function runBench(out: string, store: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'test/bench/bench.mjs'), '--quick', '--out', out], { cwd: repoRoot, env: { ...process.env, NO_COLOR: '1', KPLAY_BENCH_STORE: store }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // A bound against a hung harness, not a speed goal: on a slow, busy machine the quick run
    // (both tools, every benchmark) has taken 8 minutes; CI's whole budget is 90.
    const timer = setTimeout(() => child.kill('SIGKILL'), 1_500_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('benchmark harness (quick)', () => {
  it('runs every benchmark and reports numeric results as a table and JSON', { timeout: 1_600_000 }, async () => {
    sandboxEnv(); // the sandbox is up (global setup)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kplay-bench-test-'));
    const out = path.join(dir, 'results.json');
    const r = await runBench(out, dir);
    expect(r.code, `${r.stdout.slice(-6000)}\n${r.stderr.slice(-3000)}`).toBe(0);

    // the table is the last lines of the output
    const lines = r.stdout.trimEnd().split('\n');
    const tableLines = lines.slice(-(EXPECTED.length + 2));
    expect(tableLines[0]).toMatch(/^\| bench \| kplay median \| peer median \| ratio \|.*\| vs previous \|/);
    expect(r.stdout).toContain('no previous result stored yet');
    // the result is stored for the next run's comparison
    expect((JSON.parse(fs.readFileSync(path.join(dir, 'last-quick.json'), 'utf8')) as { rows: unknown[] }).rows).toHaveLength(EXPECTED.length);
    const cells = tableLines.slice(2).map((l) => l.split('|').map((c) => c.trim()));
    for (const [i, re] of EXPECTED.entries()) {
      const c = cells[i];
      expect(c?.[1], `table row ${i}`).toMatch(re);
      expect(c?.[2], `kplay median of ${c?.[1]}`).toMatch(/^-?\d+(\.\d+)? (ms|s)$/);
      expect(c?.[3], `peer median of ${c?.[1]}`).toMatch(/^-?\d+(\.\d+)? (ms|s)$/);
      expect(c?.[4], `ratio of ${c?.[1]}`).toMatch(/^-?\d+\.\d+$/);
    }

    const json = JSON.parse(fs.readFileSync(out, 'utf8')) as { rows: Row[]; errors: unknown[]; mode: string };
    expect(json.mode).toBe('quick');
    expect(json.errors).toEqual([]);
    expect(json.rows).toHaveLength(EXPECTED.length);
    for (const [i, re] of EXPECTED.entries()) {
      const row = json.rows[i];
      expect(row?.bench).toMatch(re);
      for (const k of ['kplay_ms', 'peer_ms', 'ratio'] as const) expect(typeof row?.[k], `${row?.bench} ${k}`).toBe('number');
    }
    // counts that do not depend on noise: a no-op k8s_apply writes nothing
    const noop = json.rows.find((x) => x.bench.startsWith('B1') && x.bench.endsWith('no-op'));
    expect(noop?.kplay_writes).toBe(0);
    expect(typeof noop?.kplay_requests).toBe('number');
    const bigNoop = json.rows.find((x) => x.bench.startsWith('B8') && x.bench.endsWith('no-op'));
    expect(bigNoop?.kplay_writes).toBe(0);
    // ... and a no-op helm_release runs no helm process and writes nothing; an install runs one helm per release
    const helmNoop = json.rows.find((x) => x.bench.startsWith('B4') && x.bench.endsWith('no-op')) as (Row & { notes: string }) | undefined;
    expect(helmNoop?.notes).toMatch(/^kplay helm processes 0;/);
    expect(helmNoop?.kplay_writes).toBe(0);
    const helmInstall = json.rows.find((x) => x.bench.startsWith('B4') && x.bench.endsWith('install')) as (Row & { notes: string }) | undefined;
    const m = /kplay helm processes (\d+) for (\d+) releases \(upgrade (\d+), version (\d+);/.exec(helmInstall?.notes ?? '');
    expect(m, helmInstall?.notes).not.toBeNull();
    const [processes, releases, upgrades, versions] = (m ?? []).slice(1).map(Number);
    expect(upgrades).toBe(releases); // one `helm upgrade --install` per release ...
    expect(processes).toBe((upgrades ?? 0) + (versions ?? 0)); // ... and nothing else but `helm version` the first time
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

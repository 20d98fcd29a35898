#!/usr/bin/env node
// The last step of `npm test`: every vitest project, in lanes that run at the same time.
//
//   node test/lanes.mjs [--lanes N] [--record] [--dry-run]
//
// Vitest on a 2-core machine runs one test file at a time (maxWorkers = cores - 1), and the
// integration project one file at a time by design (its files share the sandbox clusters), so the
// whole suite ran in series while the machine waited on apiservers, rollouts and child processes
// most of the time. Here each lane is its own vitest process:
//   - lanes `unit` and `parity`: those projects (nothing but Node, HAProxy and the Ansible venv);
//   - lanes `integration-1` … `integration-N` (N = --lanes, KPLAY_TEST_LANES, default 3): the
//     integration files split between them, each lane with a sandbox of its own
//     (KPLAY_SANDBOX_DIR: `~/.cache/kplay-sandbox/run` for the first, `run-lane-K` for lane K), so
//     files of different lanes never share a cluster; inside a lane files still run one at a time.
//     The sandboxes are started here one after another (see startSandboxes) and stopped at the end.
// Files are dealt to the integration lanes longest first (the durations recorded in
// test/lanes.json; a file not recorded there counts DEFAULT_SECONDS). `--record` writes the
// durations this run measured back to test/lanes.json. Every lane's output is printed with its
// name in front of each line; at the end, the lanes' results and the slowest files. The exit code
// is 0 only when every lane passed.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { down, status, up } from './sandbox/lib.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TABLE = path.join(REPO, 'test/lanes.json');
const INTEGRATION_DIR = 'test/integration';
/** What a file that test/lanes.json does not know yet is taken to last (seconds). */
const DEFAULT_SECONDS = 60;

const { values: o } = parseArgs({
  options: {
    lanes: { type: 'string', default: process.env.KPLAY_TEST_LANES ?? '3' },
    record: { type: 'boolean', default: false },
    'dry-run': { type: 'boolean', default: false },
  },
});
const laneCount = Number(o.lanes);
if (!Number.isInteger(laneCount) || laneCount < 1 || laneCount > 6) {
  console.error(`lanes: --lanes must be an integer from 1 to 6, got ${o.lanes}`);
  process.exit(2);
}

/** @returns {{ durations: Record<string, number> }} */
function readTable() {
  if (!existsSync(TABLE)) return { durations: {} };
  return JSON.parse(readFileSync(TABLE, 'utf8'));
}

/**
 * The integration files dealt to `count` lanes, longest first, each to the lane with the least
 * work so far (ties: the lower lane).
 * @param {string[]} files
 * @param {Record<string, number>} durations
 * @param {number} count
 */
export function deal(files, durations, count) {
  const lanes = Array.from({ length: count }, () => ({ files: /** @type {string[]} */ ([]), seconds: 0 }));
  const cost = (f) => durations[f] ?? DEFAULT_SECONDS;
  for (const f of [...files].sort((a, b) => cost(b) - cost(a) || a.localeCompare(b))) {
    const lane = lanes.reduce((best, l) => (l.seconds < best.seconds ? l : best), lanes[0]);
    lane.files.push(f);
    lane.seconds += cost(f);
  }
  for (const l of lanes) l.files.sort();
  return lanes;
}

// every project of vitest.config.ts must be in a lane, or npm test would silently not run it
const LANED = new Set(['unit', 'parity', 'integration']);
const projects = [...readFileSync(path.join(REPO, 'vitest.config.ts'), 'utf8').matchAll(/^\s*name: '([^']+)'/gm)].map((m) => m[1]);
const unlaned = projects.filter((p) => !LANED.has(p));
if (unlaned.length > 0 || projects.length === 0) {
  console.error(`lanes: vitest project(s) ${unlaned.join(', ') || '(none found in vitest.config.ts)'} in no lane: add them to the lanes of test/lanes.mjs`);
  process.exit(2);
}

const table = readTable();
const integrationFiles = readdirSync(path.join(REPO, INTEGRATION_DIR))
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => `${INTEGRATION_DIR}/${f}`);
const dealt = deal(integrationFiles, table.durations, laneCount);
const reports = mkdtempSync(path.join(os.tmpdir(), 'kplay-lanes-'));
const sandboxBase = process.env.KPLAY_SANDBOX_DIR ?? path.join(os.homedir(), '.cache', 'kplay-sandbox', 'run');

/** @type {{ name: string, args: string[], env: Record<string, string>, planned?: number }[]} */
const lanes = [
  { name: 'unit', args: ['--project', 'unit'], env: {} },
  { name: 'parity', args: ['--project', 'parity'], env: {} },
  ...dealt
    .filter((l) => l.files.length > 0)
    .map((l, i) => ({
      name: `integration-${i + 1}`,
      args: ['--project', 'integration', ...l.files],
      env: { KPLAY_SANDBOX_DIR: i === 0 ? sandboxBase : `${sandboxBase}-lane-${i + 1}` },
      planned: l.seconds,
    })),
];

if (o['dry-run']) {
  for (const l of lanes) console.log(`${l.name}${l.planned !== undefined ? ` (~${Math.round(l.planned / 60)} min)` : ''}: ${l.args.join(' ')}${l.env.KPLAY_SANDBOX_DIR ? `  [KPLAY_SANDBOX_DIR=${l.env.KPLAY_SANDBOX_DIR}]` : ''}`);
  process.exit(0);
}

/** One lane's vitest, its lines prefixed with the lane's name; resolves to its exit code. */
function runLane(lane, report) {
  const width = Math.max(...lanes.map((l) => l.name.length));
  const prefix = `[${lane.name.padEnd(width)}] `;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(REPO, 'node_modules/vitest/vitest.mjs'), 'run', ...lane.args, '--reporter=default', '--reporter=json', `--outputFile.json=${report}`], {
      cwd: REPO,
      // no colour codes in the interleaved lines unless asked for (FORCE_COLOR)
      env: { ...process.env, ...lane.env, ...(process.env.FORCE_COLOR ? {} : { NO_COLOR: '1' }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const [stream, out] of [[child.stdout, process.stdout], [child.stderr, process.stderr]]) {
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) out.write(`${prefix}${line}\n`);
      });
      stream.on('end', () => {
        if (rest) out.write(`${prefix}${rest}\n`);
      });
    }
    child.on('error', (e) => {
      process.stderr.write(`${prefix}could not start vitest: ${e.message}\n`);
      resolve(1);
    });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** Per-file wall time (seconds) from a vitest JSON report, keyed by the file's path in the repo. */
function fileSeconds(report) {
  if (!existsSync(report)) return {};
  const doc = JSON.parse(readFileSync(report, 'utf8'));
  /** @type {Record<string, number>} */
  const out = {};
  for (const r of doc.testResults ?? []) {
    const rel = path.relative(REPO, r.name);
    if (typeof r.startTime === 'number' && typeof r.endTime === 'number') out[rel] = Math.round((r.endTime - r.startTime) / 100) / 10;
  }
  return out;
}

/**
 * Starts each integration lane's sandbox, one after another: sandboxes started at the same time
 * pick their free ports at the same time and collide (an apiserver's `bind: address already in
 * use`). The lanes' vitest global setups then find them running and reuse them; the ones started
 * here are stopped at the end. Resolves the lane dirs to stop.
 */
async function startSandboxes() {
  const mine = [];
  for (const lane of lanes) {
    const dir = lane.env.KPLAY_SANDBOX_DIR;
    if (!dir) continue;
    process.env.KPLAY_SANDBOX_DIR = dir;
    const before = await status();
    await up({ clusters: 3, log: (line) => console.log(`[${lane.name}] sandbox: ${line}`) });
    if (!before.running) mine.push(dir);
  }
  return mine;
}

async function stopSandboxes(dirs) {
  for (const dir of dirs) {
    process.env.KPLAY_SANDBOX_DIR = dir;
    await down({ log: (line) => console.log(`sandbox ${path.basename(dir)}: ${line}`) }).catch((e) => console.error(`sandbox ${dir}: ${e.message}`));
  }
}

const started = Date.now();
console.log(`lanes: ${lanes.map((l) => `${l.name} (${l.planned === undefined ? `the ${l.args[1]} project` : `${l.args.length - 2} files, ~${Math.round(l.planned / 60)} min`})`).join(', ')}`);
// the lanes without a sandbox start at once, the integration lanes once their sandboxes are up
const report = (l) => path.join(reports, `${l.name}.json`);
const free = new Map(lanes.filter((l) => !l.env.KPLAY_SANDBOX_DIR).map((l) => [l, runLane(l, report(l))]));
let ours = [];
/** @type {number[]} */
let codes;
try {
  ours = await startSandboxes();
  codes = await Promise.all(lanes.map((l) => free.get(l) ?? runLane(l, report(l))));
} catch (e) {
  console.error(`lanes: the sandboxes did not start: ${e instanceof Error ? e.message : String(e)}`);
  codes = await Promise.all(lanes.map((l) => free.get(l) ?? Promise.resolve(1)));
} finally {
  await stopSandboxes(ours);
}
const wall = Math.round((Date.now() - started) / 1000);

const measured = Object.assign({}, ...lanes.map((l) => fileSeconds(path.join(reports, `${l.name}.json`))));
const slowest = Object.entries(measured).sort((a, b) => b[1] - a[1]).slice(0, 15);
console.log(`\nlanes: done in ${Math.floor(wall / 60)} min ${wall % 60} s`);
for (const [i, l] of lanes.entries()) console.log(`  ${l.name}: ${codes[i] === 0 ? 'passed' : `FAILED (exit ${codes[i]})`}`);
console.log('slowest files (s):');
for (const [f, s] of slowest) console.log(`  ${String(s).padStart(7)}  ${f}`);

if (o.record) {
  const durations = { ...table.durations };
  for (const [f, s] of Object.entries(measured)) if (f.startsWith(`${INTEGRATION_DIR}/`)) durations[f] = s;
  for (const f of Object.keys(durations)) if (!integrationFiles.includes(f)) delete durations[f];
  const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(TABLE, `${JSON.stringify({ comment: table.comment ?? 'seconds each integration file took (node test/lanes.mjs --record); test/lanes.mjs deals files to lanes by these', durations: sorted }, null, 2)}\n`);
  console.log(`recorded ${Object.keys(measured).length} durations in ${path.relative(REPO, TABLE)}`);
}
process.exit(codes.every((c) => c === 0) ? 0 : 1);

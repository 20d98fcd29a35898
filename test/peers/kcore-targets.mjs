#!/usr/bin/env node
// kubernetes.core's own integration targets, unchanged, run as their runme.sh runs them — under real
// `ansible-playbook` (the venv of test/bench/install.sh) and under kplay (an `ansible-playbook` on
// PATH that is `kplay run`) — against a sandbox cluster; prints a table of both outcomes.
//
//   node test/peers/kcore-targets.mjs --src DIR [--engine both|kplay|ansible] [--only a,b] [--cluster sandbox-1] [--timeout 900] [--json FILE]
//
// DIR is a checkout of github.com/ansible-collections/kubernetes.core at the tag the reference
// installs (6.2.0, see test/bench/install.sh); it is not in this repository (its code is not ours to
// ship), so this is a developer's tool, not part of `npm test`. The sandbox must be running
// (`npm run sandbox -- up`); `npm run build` first. Each engine gets its own copy of the targets and
// its own log per target under --logs (default: a temp dir, printed at the end).
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: o } = parseArgs({
  options: {
    src: { type: 'string' },
    engine: { type: 'string', default: 'both' },
    only: { type: 'string' },
    cluster: { type: 'string', default: 'sandbox-1' },
    timeout: { type: 'string', default: '900' },
    logs: { type: 'string' },
    json: { type: 'string' },
  },
});
if (!o.src || !existsSync(path.join(o.src, 'tests/integration/targets'))) {
  console.error('usage: kcore-targets.mjs --src KUBERNETES_CORE_CHECKOUT [--engine both|kplay|ansible] [--only a,b]');
  process.exit(2);
}
const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const state = JSON.parse(readFileSync(path.join(os.homedir(), '.cache/kplay-sandbox/run/state.json'), 'utf8'));
const kubeconfig = state.kubeconfig ?? path.join(os.homedir(), '.cache/kplay-sandbox/run/kubeconfig');
const targetsDir = path.join(o.src, 'tests/integration/targets');

/** The targets ansible-test would run here: a runme.sh, not disabled, not helm (helm 4 dropped flags they use). */
function defaultTargets() {
  return readdirSync(targetsDir)
    .filter((t) => existsSync(path.join(targetsDir, t, 'runme.sh')))
    .filter((t) => !/\bdisabled\b|\bunsupported\b/.test(readFileSync(path.join(targetsDir, t, 'aliases'), 'utf8')))
    .filter((t) => !t.startsWith('helm') && !t.includes('helm'))
    .sort();
}
const targets = o.only ? o.only.split(',') : defaultTargets();
const engines = o.engine === 'both' ? ['ansible', 'kplay'] : [o.engine];
const logs = o.logs ?? mkdtempSync(path.join(os.tmpdir(), 'kcore-targets-'));
mkdirSync(logs, { recursive: true });

/** A private copy of the targets, and a bin dir whose `ansible-playbook` is the engine. */
function workspace(engine) {
  const root = mkdtempSync(path.join(os.tmpdir(), `kcore-${engine}-`));
  cpSync(targetsDir, path.join(root, 'targets'), { recursive: true });
  const bin = path.join(root, 'bin');
  mkdirSync(bin);
  const shim = path.join(bin, 'ansible-playbook');
  if (engine === 'kplay') writeFileSync(shim, `#!/bin/sh\nexec node ${JSON.stringify(path.join(repo, 'dist/src/cli/main.js'))} run --no-lock "$@"\n`);
  else writeFileSync(shim, `#!/bin/sh\nexec ${JSON.stringify(path.join(VENV, 'bin/ansible-playbook'))} "$@"\n`);
  chmodSync(shim, 0o755);
  // the inventory ansible-test writes for controller-side targets (localhost, local connection)
  const inventory = path.join(root, 'inventory');
  writeFileSync(inventory, `localhost ansible_connection=local ansible_python_interpreter=${path.join(VENV, 'bin/python')}\n`);
  return { root, bin, inventory };
}

function run(engine, ws, target) {
  const cwd = path.join(ws.root, 'targets', target);
  const log = path.join(logs, `${target}.${engine}.log`);
  const env = {
    ...process.env,
    PATH: `${ws.bin}:${path.join(VENV, 'bin')}:${process.env.PATH}`,
    K8S_AUTH_KUBECONFIG: kubeconfig,
    K8S_AUTH_CONTEXT: o.cluster,
    KUBECONFIG: kubeconfig,
    ANSIBLE_NOCOLOR: '1',
    NO_COLOR: '1',
    ANSIBLE_HOME: path.join(ws.root, '.ansible'),
  };
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn('bash', ['runme.sh', '-i', ws.inventory, '-v'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const chunks = [];
    child.stdout.on('data', (d) => chunks.push(d));
    child.stderr.on('data', (d) => chunks.push(d));
    const timer = setTimeout(() => {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    }, Number(o.timeout) * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      writeFileSync(log, text);
      const lines = text.split('\n');
      const firstFailure = lines.find((l) => /^fatal: |^ERROR|^\[ERROR\]|FAILED!|Error: /.test(l)) ?? '';
      resolve({ engine, target, exit: code ?? (signal ? 128 : 1), seconds: Math.round((Date.now() - t0) / 1000), log, first: firstFailure.slice(0, 200) });
    });
  });
}

const results = [];
for (const engine of engines) {
  const ws = workspace(engine);
  for (const target of targets) {
    const r = await run(engine, ws, target);
    results.push(r);
    console.log(`${engine.padEnd(7)} ${target.padEnd(28)} exit ${String(r.exit).padEnd(3)} ${String(r.seconds).padStart(4)} s  ${r.exit ? r.first : ''}`);
  }
}
console.log('');
console.log(`| target | ${engines.join(' | ')} |`);
console.log(`|---|${engines.map(() => '---').join('|')}|`);
for (const t of targets) console.log(`| ${t} | ${engines.map((e) => { const r = results.find((x) => x.engine === e && x.target === t); return r.exit === 0 ? `pass (${r.seconds} s)` : `FAIL exit ${r.exit}`; }).join(' | ')} |`);
for (const e of engines) console.log(`${e}: ${results.filter((r) => r.engine === e && r.exit === 0).length}/${targets.length} passed, ${results.filter((r) => r.engine === e).reduce((a, r) => a + r.seconds, 0)} s`);
console.log(`logs: ${logs}`);
if (o.json) writeFileSync(o.json, JSON.stringify(results, null, 2));

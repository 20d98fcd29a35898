// kubernetes.core's own integration targets, run unchanged as their runme.sh runs them, with
// `ansible-playbook` on PATH being either the reference (the venv of test/bench/install.sh) or kplay.
// Shared by the developer's tool (kcore-targets.mjs: both engines, a table) and the `npm test` file
// (test/integration/kcore-targets.test.ts: kplay, the targets of kcore-targets.json).
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
/** Where test/peers/install.sh unpacks the targets (from the `ansible` 12.3.0 sdist: kubernetes.core 6.2.0). */
export const DEFAULT_SRC = path.join(process.env.KPLAY_PEERS_DIR ?? path.join(os.homedir(), '.cache/kplay-bench/peers'), 'kubernetes.core-6.2.0');

/** The targets directory of a kubernetes.core checkout or of the unpacked sdist. */
export function targetsDir(src = DEFAULT_SRC) {
  const dir = path.join(src, 'tests/integration/targets');
  if (!existsSync(dir)) throw new Error(`no kubernetes.core targets at ${dir}: run \`bash test/peers/install.sh\` (or pass --src CHECKOUT)`);
  return dir;
}

/** The targets ansible-test would run here: a runme.sh, not disabled, not helm (helm 4 dropped flags they use). */
export function defaultTargets(dir) {
  return readdirSync(dir)
    .filter((t) => existsSync(path.join(dir, t, 'runme.sh')))
    .filter((t) => !/\bdisabled\b|\bunsupported\b/.test(readFileSync(path.join(dir, t, 'aliases'), 'utf8')))
    .filter((t) => !t.startsWith('helm') && !t.includes('helm'))
    .sort();
}

/** The venv's Python version (`3.11`): its site-packages hold the reference's collections. */
function pythonVersion() {
  const lib = path.join(VENV, 'lib');
  const found = existsSync(lib) ? readdirSync(lib).find((d) => /^python\d+\.\d+$/.test(d)) : undefined;
  return found ? found.slice('python'.length) : '3.11';
}

/** A private copy of the targets, and a bin dir whose `ansible-playbook` is the engine. */
export function workspace(engine, dir) {
  const root = mkdtempSync(path.join(os.tmpdir(), `kcore-${engine}-`));
  // As ansible-test lays a collection out: the targets inside ansible_collections/kubernetes/core
  // (the collection's plugins and metadata linked from the venv's kubernetes.core 6.2.0), that tree
  // first on the collections path, so ansible-core reads the targets' unqualified module names
  // (`k8s_drain`) as the collection's.
  const collection = path.join(root, 'ansible_collections/kubernetes/core');
  const installed = path.join(VENV, 'lib', `python${pythonVersion()}`, 'site-packages/ansible_collections/kubernetes/core');
  mkdirSync(path.join(collection, 'tests/integration'), { recursive: true });
  for (const f of ['plugins', 'meta', 'MANIFEST.json', 'FILES.json']) if (existsSync(path.join(installed, f))) symlinkSync(path.join(installed, f), path.join(collection, f));
  cpSync(dir, path.join(collection, 'tests/integration/targets'), { recursive: true });
  symlinkSync(path.join(collection, 'tests/integration/targets'), path.join(root, 'targets'));
  const bin = path.join(root, 'bin');
  mkdirSync(bin);
  const shim = path.join(bin, 'ansible-playbook');
  if (engine === 'kplay') writeFileSync(shim, `#!/bin/sh\nexec node ${JSON.stringify(path.join(repo, 'dist/src/cli/main.js'))} run --no-lock "$@"\n`);
  else writeFileSync(shim, `#!/bin/sh\nexec ${JSON.stringify(path.join(VENV, 'bin/ansible-playbook'))} "$@"\n`);
  chmodSync(shim, 0o755);
  // the inventory ansible-test writes for controller-side targets (localhost, local connection)
  const inventory = path.join(root, 'inventory');
  writeFileSync(inventory, `localhost ansible_connection=local ansible_python_interpreter=${path.join(VENV, 'bin/python')}\n`);
  return { engine, root, bin, inventory };
}

/**
 * Runs one target's runme.sh in the workspace: resolves {engine, target, exit, seconds, log, first}
 * (`first`: the first line that looks like a failure). The whole process group is killed after
 * `timeoutSeconds` (exit 137).
 */
export function runTarget(ws, target, { kubeconfig, context, logs, timeoutSeconds = 900 }) {
  const cwd = path.join(ws.root, 'ansible_collections/kubernetes/core/tests/integration/targets', target);
  mkdirSync(logs, { recursive: true });
  const log = path.join(logs, `${target}.${ws.engine}.log`);
  // the cluster is ~/.kube/config's current context, as in ansible-test's Kubernetes environment
  // (no K8S_AUTH_* nor KUBECONFIG: k8s_full checks that a missing default kubeconfig fails)
  const { K8S_AUTH_KUBECONFIG: _a, K8S_AUTH_CONTEXT: _c, KUBECONFIG: _k, ...inherited } = process.env;
  const env = {
    ...inherited,
    PATH: `${ws.bin}:${path.join(VENV, 'bin')}:${process.env.PATH}`,
    ANSIBLE_NOCOLOR: '1',
    NO_COLOR: '1',
    ANSIBLE_HOME: path.join(ws.root, '.ansible'),
    ANSIBLE_COLLECTIONS_PATH: ws.root,
  };
  // a private HOME whose ~/.kube/config is the sandbox's, at `context`
  const home = path.join(ws.root, 'home');
  mkdirSync(path.join(home, '.kube'), { recursive: true });
  const kc = YAML.parse(readFileSync(kubeconfig, 'utf8'));
  writeFileSync(path.join(home, '.kube/config'), YAML.stringify({ ...kc, 'current-context': context }), { mode: 0o600 });
  env.HOME = home;
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn('bash', ['runme.sh', '-i', ws.inventory, '-v'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const chunks = [];
    child.stdout.on('data', (d) => chunks.push(d));
    child.stderr.on('data', (d) => chunks.push(d));
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    }, timeoutSeconds * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      writeFileSync(log, text);
      const lines = text.split('\n');
      const first = killed ? `killed after ${timeoutSeconds} s` : (lines.find((l) => /^fatal: |^ERROR|^\[ERROR\]|FAILED!|Error: /.test(l)) ?? '').slice(0, 200);
      resolve({ engine: ws.engine, target, exit: code ?? (signal ? 137 : 1), seconds: Math.round((Date.now() - t0) / 1000), log, first, text });
    });
  });
}

/**
 * Waits until the cluster has no namespace being deleted and no pod being deleted (bounded by
 * `timeoutSeconds`), so a target starts on a settled cluster: a target's clean-up deletes its
 * namespace without waiting, and k8s_drain, which lists every pod on the node, would otherwise see
 * the previous target's pods going away. Resolves what was still going away when the bound passed
 * ('' when settled).
 */
export async function settle({ kubectl, kubeconfig, context, timeoutSeconds = 120 }) {
  const run = promisify(execFile);
  const deadline = Date.now() + timeoutSeconds * 1000;
  let left = '';
  for (;;) {
    const q = async (what) => JSON.parse((await run(kubectl, ['--kubeconfig', kubeconfig, '--context', context, 'get', what, '-A', '-o', 'json'], { maxBuffer: 64 << 20 })).stdout).items;
    const going = [...(await q('namespaces')), ...(await q('pods'))].filter((o) => o.metadata.deletionTimestamp);
    left = going.map((o) => `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`).join(', ');
    if (!left || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

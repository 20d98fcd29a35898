// ansible-core's own integration targets (test/integration/targets of the ansible-core sdist), run as
// `ansible-test integration` runs them on the controller — the same layout, inventory, environment and
// command — under an engine: real `ansible-playbook` (the venv of test/bench/install.sh) or kplay (an
// `ansible-playbook` on PATH that is `kplay run`). Used by test/peers/acore-targets.mjs (the developer's
// table) and test/parity/acore-targets.test.ts (npm test). Mirrors, in ansible-core 2.19.14's
// test/lib/ansible_test/_internal: commands/integration/__init__.py (integration_test_environment,
// command_integration_script, command_integration_role, integration_environment), ansible_util.py
// (ansible_environment), inventory.py (create_controller_inventory) and target.py (aliases, dependencies).
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
export const CORE_VERSION = '2.19.14';
/** Where test/peers/install.sh unpacks the peers' sdists (outside the repository: their code is not ours to ship). */
export const SDIST_CACHE = process.env.KPLAY_PEERS_DIR ?? path.join(os.homedir(), '.cache/kplay-bench/peers');
/** The unpacked ansible-core sdist (its test/integration) in that cache. */
export const defaultSrc = () => path.join(SDIST_CACHE, `ansible-core-${CORE_VERSION}`);

/** A target's aliases file as a list of words (comments dropped); `null` when the target has none. */
function aliases(targetsDir, name) {
  const p = path.join(targetsDir, name, 'aliases');
  if (!existsSync(p)) return null;
  return readFileSync(p, 'utf8').split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean);
}

/** The targets the given one needs copied beside it (needs/target/, setup/, hidden roles its meta names), transitively. */
export function dependencies(targetsDir, name) {
  const all = readdirSync(targetsDir);
  const hidden = all.filter((t) => { const a = aliases(targetsDir, t); return a === null || a.includes('hidden'); });
  const direct = (t) => {
    const a = aliases(targetsDir, t) ?? [];
    const out = new Set(a.filter((x) => /^(needs\/target|setup\/(always|once))\//.test(x)).map((x) => x.split('/').slice(2).join('/').replace(/\/$/, '')));
    const meta = path.join(targetsDir, t, 'meta');
    if (existsSync(meta)) {
      for (const f of readdirSync(meta)) {
        let text;
        try { text = readFileSync(path.join(meta, f), 'utf8'); } catch { continue; }
        for (const line of text.split('\n')) {
          if (/^ *#/.test(line) || !line.trim()) continue;
          for (const h of hidden) if (line.includes(h)) out.add(h);
        }
      }
    }
    return out;
  };
  const seen = new Set();
  const todo = [...direct(name)];
  while (todo.length) {
    const t = todo.pop();
    if (seen.has(t) || t === name || !all.includes(t)) continue;
    seen.add(t);
    todo.push(...direct(t));
  }
  return [...seen].sort();
}

/** setup/always/X and setup/once/X of a target: run before it, as ansible-test does. */
export function setupTargets(targetsDir, name) {
  return (aliases(targetsDir, name) ?? []).filter((x) => /^setup\/(always|once)\//.test(x)).map((x) => x.split('/')[2]);
}

/** A bin dir whose `ansible-playbook` is the engine (the other ansible-* tools are the venv's). */
export function engineBin(engine, dir) {
  const bin = path.join(dir, `bin-${engine}`);
  mkdirSync(bin, { recursive: true });
  const shim = path.join(bin, 'ansible-playbook');
  // kplay prints ansible-core's default output as a user asks for it: ansible-core's default
  // stdout callback (`default`) unless the caller's environment names another
  if (engine === 'kplay') writeFileSync(shim, `#!/bin/sh\nANSIBLE_STDOUT_CALLBACK="\${ANSIBLE_STDOUT_CALLBACK:-default}" exec ${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(repo, 'dist/src/cli/main.js'))} run --no-lock "$@"\n`);
  else writeFileSync(shim, `#!/bin/sh\nexec ${JSON.stringify(path.join(VENV, 'bin/ansible-playbook'))} "$@"\n`);
  chmodSync(shim, 0o755);
  return bin;
}

/**
 * Run one target (and its setup targets first) under `engine` in a fresh temporary tree laid out as
 * ansible-test's: <tmp>/test/integration/{inventory,integration.cfg,targets/<t>+deps}, OUTPUT_DIR fresh.
 * Resolves {target, engine, exit, seconds, output, first} (first: the first failure-looking line).
 */
export async function runTarget({ src, target, engine, bin, timeoutS = 600, verbose = false }) {
  const targetsDir = path.join(src, 'test/integration/targets');
  const t0 = Date.now();
  const parts = [];
  let exit = 0;
  for (const name of [...setupTargets(targetsDir, target), target]) {
    const r = await runOne({ src, targetsDir, name, bin, timeoutS, verbose });
    parts.push(`=== ${name}\n${r.output}`);
    exit = r.exit;
    if (exit !== 0) break;
  }
  const output = parts.join('\n');
  const first = output.split('\n').find((l) => /^fatal: |^ERROR|^\[ERROR\]|FAILED!|^Error: |^kplay: /.test(l)) ?? '';
  return { target, engine, exit, seconds: Math.round((Date.now() - t0) / 100) / 10, output, first: first.slice(0, 240) };
}

function runOne({ src, targetsDir, name, bin, timeoutS, verbose }) {
  const base = mkdtempSync(path.join(os.tmpdir(), 'acore-'));
  // ansible-test's temporary tree: the target's name as prefix and a non-ASCII suffix
  const root = mkdtempSync(path.join(base, `${name}-`)) + '-\u00c5\u00d1\u015a\u00cc\u03b2\u0141\u00c8';
  const integration = path.join(root, 'test/integration');
  const targets = path.join(integration, 'targets');
  mkdirSync(targets, { recursive: true });
  for (const t of [name, ...dependencies(targetsDir, name)]) cpSync(path.join(targetsDir, t), path.join(targets, t), { recursive: true, verbatimSymlinks: true });
  const inventory = path.join(integration, 'inventory');
  writeFileSync(inventory, `[testgroup]\ntesthost ansible_connection=local ansible_pipelining=yes ansible_python_interpreter=${path.join(VENV, 'bin/python')}\n`);
  const cfg = path.join(integration, 'integration.cfg');
  writeFileSync(cfg, '');
  const outputDir = path.join(base, 'output_dir');
  mkdirSync(outputDir);
  const al = aliases(targetsDir, name) ?? [];
  const envSet = Object.fromEntries(al.filter((a) => a.startsWith('env/set/')).map((a) => { const [, , k, ...v] = a.split('/'); return [k, v.join('/')]; }));
  const support = path.join(src, 'test/support/integration/plugins');
  const env = {
    ...process.env,
    PATH: `${bin}:${path.join(VENV, 'bin')}:${process.env.PATH}`,
    ANSIBLE_FORCE_COLOR: 'false',
    ANSIBLE_NOCOLOR: '1',
    NO_COLOR: '1',
    ANSIBLE_FORCE_HANDLERS: 'true',
    ANSIBLE_HOST_PATTERN_MISMATCH: 'error',
    ANSIBLE_INVENTORY: '/dev/null',
    ANSIBLE_DEPRECATION_WARNINGS: 'false',
    ANSIBLE_HOST_KEY_CHECKING: 'false',
    ANSIBLE_RETRY_FILES_ENABLED: 'false',
    ANSIBLE_CONFIG: cfg,
    // configure_plugin_paths: of test/support/integration/plugins/*, only modules/ exists
    ANSIBLE_LIBRARY: existsSync(path.join(support, 'modules')) ? path.join(support, 'modules') : '/dev/null',
    ANSIBLE_DEVEL_WARNING: 'false',
    ANSIBLE_PYTHON_INTERPRETER: '/set/ansible_python_interpreter/in/inventory',
    PAGER: '/bin/cat',
    ANSIBLE_HOME: path.join(base, '.ansible'),
    ANSIBLE_TEST_CI: 'local',
    ANSIBLE_TEST_COVERAGE: '',
    ANSIBLE_TEST_ANSIBLE_VERSION: CORE_VERSION,
    OUTPUT_DIR: outputDir,
    INVENTORY_PATH: inventory,
    JUNIT_OUTPUT_DIR: path.join(base, 'junit'),
    ...envSet,
  };
  let cmd;
  let args;
  let cwd;
  if (existsSync(path.join(targetsDir, name, 'runme.sh'))) {
    cwd = path.join(targets, name);
    env.ANSIBLE_PLAYBOOK_DIR = cwd;
    cmd = './runme.sh';
    args = verbose ? ['-v'] : [];
  } else {
    cwd = integration;
    env.ANSIBLE_PLAYBOOK_DIR = cwd;
    env.ANSIBLE_ROLES_PATH = targets;
    const gather = al.includes('gather_facts/no') ? false : true;
    const play = { gather_facts: gather, hosts: 'testhost', roles: [name], vars: { output_dir: outputDir }, vars_files: [] };
    const pb = `${name}-${Math.random().toString(36).slice(2, 10)}.yml`;
    writeFileSync(path.join(integration, pb), JSON.stringify([play], null, 4));
    cmd = path.join(bin, 'ansible-playbook');
    args = [pb, '-i', 'inventory', ...(verbose ? ['-v'] : [])];
  }
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const chunks = [];
    child.stdout.on('data', (d) => chunks.push(d));
    child.stderr.on('data', (d) => chunks.push(d));
    const timer = setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } }, timeoutS * 1000);
    child.on('error', (e) => chunks.push(Buffer.from(String(e))));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      rmSync(base, { recursive: true, force: true });
      resolve({ exit: code ?? (signal ? 128 : 1), seconds: (Date.now() - t0) / 1000, output: Buffer.concat(chunks).toString('utf8') });
    });
  });
}

/** Run `fn` over `items`, `jobs` at a time, results in the items' order. */
export async function pool(items, jobs, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, async () => {
    while (next < items.length) { const i = next++; out[i] = await fn(items[i], i); }
  }));
  return out;
}

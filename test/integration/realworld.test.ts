// Real-world corpus at run time: fixtures of test/fixtures/realworld (condensed copies of public
// Ansible playbooks/roles for Kubernetes, `hosts: localhost`) run unchanged under kplay and under
// ansible-playbook (kubernetes.core from the bench venv) against sandbox-1, through $KUBECONFIG's
// current context as both engines' implicit localhost does. The same exit code and the same
// ok/failed/skipped/rescued counts in the recap (changed is not compared: the engines share the
// fixtures' rw-* namespaces, so the second one finds the objects in place, and kplay's changed is
// honest anyway). Order matters: 04 creates what 05 scales and 06 verifies.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kplay, repoRoot } from '../helpers/cli.js';
import { kubectl, sandboxEnv } from '../sandbox/env.js';

const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const ANSIBLE = path.join(VENV, 'bin/ansible-playbook');
const DIR = path.join(repoRoot, 'test/fixtures/realworld');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-realworld-'));
const kubeconfig = path.join(tmp, 'kubeconfig');

/** The namespaces the run fixtures create (all rw-*), removed afterwards. */
const NAMESPACES = ['rw-hello', 'rw-platform', 'rw-secrets', 'rw-netpol', 'rw-ingress', 'rw-jobs', 'rw-render', 'rw-team-a', 'rw-handlers', 'rw-app', 'rw-operator', 'rw-found'];
const run = randomBytes(3).toString('hex');

const FIXTURES = [
  '04-hello-go.yml',
  '05-scale.yml',
  '06-molecule-verify.yml',
  '07-platform-role.yml',
  '13-operator-wait.yml',
  '14-rolling-nodes.yml',
  '15-env-kubeconfig.yml',
  '16-wait-secret.yml',
  '17-netpol-summary.yml',
  '20-module-defaults.yml',
  '22-include-role.yml',
  '40-render-then-apply.yml',
  '41-loops-legacy.yml',
  '43-handlers-rollout.yml',
  '44-operator-cluster-info.yml',
  '45-find-apply.yml',
];

/**
 * Fixtures whose outcome depends on whether the objects exist already (a handler runs only after
 * a change): each engine gets its own namespace through this variable (`-e`).
 */
const OWN_NAMESPACE: Record<string, string> = { '07-platform-role.yml': 'k8s_argocd_namespace', '22-include-role.yml': 'app_namespace', '43-handlers-rollout.yml': 'ns' };

const env = (): NodeJS.ProcessEnv => ({ KUBECONFIG: kubeconfig, K8S_AUTH_KUBECONFIG: undefined, K8S_AUTH_CONTEXT: undefined, KPLAY_RECORD_DIR: path.join(tmp, 'runs') });

beforeAll(() => {
  const doc = parse(readFileSync(sandboxEnv().kubeconfig, 'utf8')) as Record<string, unknown>;
  writeFileSync(kubeconfig, stringify({ ...doc, 'current-context': 'sandbox-1' }));
});

afterAll(async () => {
  for (const ns of NAMESPACES) await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found'], { context: 'sandbox-1', check: false });
  rmSync(tmp, { recursive: true, force: true });
});

interface Recap {
  code: number;
  ok: number;
  failed: number;
  skipped: number;
  rescued: number;
}

function recapOf(code: number, out: string): Recap {
  const m = /^localhost\s+:\s+ok=(\d+)\s+changed=\d+\s+unreachable=\d+\s+failed=(\d+)\s+skipped=(\d+)\s+rescued=(\d+)/m.exec(out);
  if (!m) throw new Error(`no PLAY RECAP line for localhost in:\n${out.slice(-2000)}`);
  return { code, ok: Number(m[1]), failed: Number(m[2]), skipped: Number(m[3]), rescued: Number(m[4]) };
}

/** `-e var=rw-<fixture number>-<engine>-<run>` for a fixture of {@link OWN_NAMESPACE}. */
function ownNamespace(fixture: string, engine: 'kplay' | 'ansible'): string[] {
  const v = OWN_NAMESPACE[fixture];
  if (!v) return [];
  const ns = `rw-${fixture.slice(0, 2)}-${engine}-${run}`;
  NAMESPACES.push(ns);
  return ['-e', `${v}=${ns}`];
}

function runAnsible(file: string, extra: string[]): Promise<Recap> {
  return new Promise((resolve, reject) => {
    execFile(
      ANSIBLE,
      [...extra, file],
      { cwd: DIR, env: { ...process.env, ...env(), ANSIBLE_NOCOLOR: '1', ANSIBLE_LOCALHOST_WARNING: 'False' }, maxBuffer: 64 << 20, timeout: 400_000 },
      (err, stdout, stderr) => {
        try {
          resolve(recapOf(typeof err?.code === 'number' ? err.code : 0, stdout + stderr));
        } catch (e) {
          reject(e instanceof Error ? e : new Error(String(e)));
        }
      },
    );
  });
}

describe('real-world fixtures: kplay and ansible-playbook agree', () => {
  it.each(FIXTURES)('%s', async (file) => {
    const k = await kplay(['run', ...ownNamespace(file, 'kplay'), path.join(DIR, file)], { env: env(), cwd: DIR });
    const kr = recapOf(k.code ?? -1, k.stdout + k.stderr);
    const ar = await runAnsible(path.join(DIR, file), ownNamespace(file, 'ansible'));
    expect(kr).toEqual(ar);
    expect(kr.failed).toBe(0);
  }, 600_000);
});

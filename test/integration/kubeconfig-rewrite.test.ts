// One run, one view of each cluster (issue 51 item 1), against the real sandbox. The inventory's
// cluster `prod` is context `prod` of a private copy of the sandbox kubeconfig, pointing at
// sandbox-1. The run writes to it (and so locks it), then a task re-points `prod` at sandbox-2 with
// `kubectl config set-context` — as an operator's shell or a credentials helper does mid-window —
// then installs releases with helm_release and kubernetes.core's helm, and reads one with
// helm_info. Every release must land on sandbox-1, the cluster the run locked, and nothing on
// sandbox-2 (which has the namespace too: a misdirected helm succeeds there, exit 0, as reported).
// helm's private kubeconfig is gone when the run is over.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { kplay } from '../helpers/cli.js';
import { kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const suffix = randomBytes(3).toString('hex');
const ns = `kc-rewrite-${suffix}`;
let env: SandboxEnv;
let tmp: string;
let kubeconfig: string;
let inventory: string;
let chart: string;

interface Kubeconfig {
  contexts: { name: string; context: { cluster: string; user: string } }[];
}

beforeAll(async () => {
  env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-kc-rewrite-'));
  const kc = YAML.parse(readFileSync(env.kubeconfig, 'utf8')) as Kubeconfig;
  const one = kc.contexts.find((c) => c.name === 'sandbox-1');
  if (!one) throw new Error('the sandbox kubeconfig has no context sandbox-1');
  kc.contexts.push({ name: 'prod', context: { ...one.context } });
  kubeconfig = path.join(tmp, 'kubeconfig');
  writeFileSync(kubeconfig, YAML.stringify(kc), { mode: 0o600 });
  inventory = path.join(tmp, 'inventory.yml');
  writeFileSync(inventory, YAML.stringify({ all: { clusters: { prod: { context: 'prod', kubeconfig } } } }));
  chart = path.join(tmp, 'chart');
  mkdirSync(path.join(chart, 'templates'), { recursive: true });
  writeFileSync(path.join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: rewrite\nversion: 0.1.0\n');
  await kubectl(['create', 'namespace', ns], { context: 'sandbox-2' });
  writeFileSync(path.join(chart, 'templates/cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  release: {{ .Release.Name }}\n');
});

afterAll(async () => {
  for (const context of ['sandbox-1', 'sandbox-2']) await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context, check: false });
  rmSync(tmp, { recursive: true, force: true });
});

describe('a kubeconfig rewritten mid-run', () => {
  it('does not send helm to another cluster than the one the run locked', async () => {
    const two = (YAML.parse(readFileSync(env.kubeconfig, 'utf8')) as Kubeconfig).contexts.find((c) => c.name === 'sandbox-2')?.context;
    if (!two) throw new Error('the sandbox kubeconfig has no context sandbox-2');
    const pb = path.join(tmp, 'pb.yml');
    writeFileSync(
      pb,
      YAML.stringify([
        {
          hosts: 'all',
          tasks: [
            { name: 'first change', k8s_apply: { definition: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } } },
            { name: 're-point prod', command: { argv: [path.join(env.binDir, 'kubectl'), '--kubeconfig', kubeconfig, 'config', 'set-context', 'prod', `--cluster=${two.cluster}`, `--user=${two.user}`] } },
            { name: 'helm_release', helm_release: { name: 'hr', namespace: ns, chart, create_namespace: true, wait: false } },
            { name: 'kubernetes.core.helm', 'kubernetes.core.helm': { name: 'kh', release_namespace: ns, chart_ref: chart, create_namespace: true } },
            { name: 'helm_info', 'kubernetes.core.helm_info': { name: 'hr', release_namespace: ns }, register: 'info' },
            { name: 'show', debug: { msg: 'hr is {{ info.status.status }}' } },
          ],
        },
      ]),
    );
    const tmpdir = path.join(tmp, 'tmpdir');
    mkdirSync(tmpdir);
    const r = await kplay(['run', pb, '-i', inventory, '-vv', '--record-dir', path.join(tmp, 'records')], {
      env: { TMPDIR: tmpdir, KPLAY_HELM: path.join(env.binDir, 'helm'), HELM_CACHE_HOME: path.join(tmp, 'hc'), HELM_CONFIG_HOME: path.join(tmp, 'hcfg'), HELM_DATA_HOME: path.join(tmp, 'hd') },
      timeoutMs: 240_000,
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/ok: \[prod\] => hr is deployed/);
    // the file was rewritten for real: kubectl now takes `prod` to sandbox-2
    const rewritten = YAML.parse(readFileSync(kubeconfig, 'utf8')) as Kubeconfig;
    expect(rewritten.contexts.find((c) => c.name === 'prod')?.context.cluster).toBe(two.cluster);
    // both releases (and their objects) are on sandbox-1, the cluster the run locked…
    for (const release of ['hr', 'kh']) {
      const secrets = await kubectl(['-n', ns, 'get', 'secrets', '-l', `owner=helm,name=${release}`, '-o', 'name'], { context: 'sandbox-1' });
      expect(secrets.stdout, release).toContain(`sh.helm.release.v1.${release}.v1`);
      await kubectl(['-n', ns, 'get', 'configmap', `${release}-cm`], { context: 'sandbox-1' });
    }
    // …and nothing reached sandbox-2 (where the namespace exists too, so a misdirected helm would succeed there)
    const other = await kubectl(['-n', ns, 'get', 'secrets,configmaps', '-o', 'name'], { context: 'sandbox-2' });
    expect(other.stdout).not.toMatch(/sh\.helm\.release|hr-cm|kh-cm/);
    // helm was handed the private kubeconfig, and it is gone now the run is over
    expect(r.stdout).toMatch(new RegExp(`--kube-context prod --kubeconfig ${tmpdir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/kplay-conn-\\w+/kubeconfig-1\\.json`));
    expect(r.stdout).not.toContain(`--kubeconfig ${kubeconfig}`);
    expect(readdirSync(tmpdir).filter((n) => n.startsWith('kplay-conn-'))).toEqual([]);
  });
});

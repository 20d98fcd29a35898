// `hosts: localhost` against the real sandbox, as Ansible users write it (kubernetes.core.k8s there):
// the implicit localhost connects through the CURRENT context of $KUBECONFIG (here sandbox-2),
// with and without -i; changes take the cluster lock and leave a run record in that cluster.
// An Ansible inventory host connects the same way (or through kplay_context).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay } from '../helpers/cli.js';
import { kubectl, sandboxEnv } from '../sandbox/env.js';

const ns = `inventory-localhost-${randomBytes(3).toString('hex')}`;
const dir = mkdtempSync(path.join(tmpdir(), 'kplay-localhost-it-'));
const kubeconfig = path.join(dir, 'kubeconfig');
const runEnv = { KUBECONFIG: kubeconfig, K8S_AUTH_KUBECONFIG: undefined, K8S_AUTH_CONTEXT: undefined, KPLAY_RECORD_DIR: path.join(dir, 'runs') };

beforeAll(async () => {
  const env = sandboxEnv();
  const doc = parse(readFileSync(env.kubeconfig, 'utf8')) as Record<string, unknown>;
  writeFileSync(kubeconfig, stringify({ ...doc, 'current-context': 'sandbox-2' }));
  for (const context of ['sandbox-2', 'sandbox-3']) await kubectl(['create', 'namespace', ns], { context });
});

afterAll(async () => {
  for (const context of ['sandbox-2', 'sandbox-3']) await kubectl(['delete', 'namespace', ns, '--wait=false'], { context, check: false });
  rmSync(dir, { recursive: true, force: true });
});

const playbook = (name: string): string => {
  const file = path.join(dir, `${name}.yml`);
  writeFileSync(
    file,
    `- hosts: localhost
  tasks:
    - name: apply
      k8s_apply:
        definition:
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: ${name}, namespace: ${ns}}
          data: {from: "{{ inventory_hostname }}"}
`,
  );
  return file;
};

async function configMap(context: string, name: string): Promise<string> {
  const r = await kubectl(['-n', ns, 'get', 'configmap', name, '-o', 'jsonpath={.data.from}', '--ignore-not-found'], { context, check: false });
  return r.stdout.trim();
}

describe('hosts: localhost on the current kubeconfig context', () => {
  it('without -i: changes the current context\u2019s cluster, under its lock, with a run record there', async () => {
    const r = await kplay(['run', playbook('no-inventory'), '-o', 'json'], { cwd: dir, env: runEnv });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stderr.match(/No inventory was parsed/g)).toHaveLength(1);
    const result = jsonEvents(r.stdout).find((e) => e.type === 'task_result' && e.task === 'apply');
    expect(result).toMatchObject({ cluster: 'localhost', status: 'changed' });
    expect(await configMap('sandbox-2', 'no-inventory')).toBe('localhost');
    expect(await configMap('sandbox-1', 'no-inventory')).toBe('');
    const runId = String(jsonEvents(r.stdout).find((e) => e.type === 'run_start')?.run_id);
    const records = await kubectl(['-n', 'kplay-system', 'get', 'configmaps', '-l', `kplay.dev/run-id=${runId}`, '-o', 'name'], { context: 'sandbox-2' });
    expect(records.stdout.trim()).not.toBe('');
    expect(r.stderr).not.toContain('could not write');
  });

  it('with an Ansible inventory without localhost, and an inventory host with kplay_context', async () => {
    const inv = path.join(dir, 'hosts.yml');
    writeFileSync(inv, `all:\n  hosts:\n    web1:\n      kplay_context: sandbox-3\n`);
    const pb = playbook('with-inventory');
    const r = await kplay(['run', pb, '-i', inv, '-o', 'json'], { cwd: dir, env: runEnv });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stderr).not.toContain('No inventory was parsed');
    expect(await configMap('sandbox-2', 'with-inventory')).toBe('localhost');

    const onHost = path.join(dir, 'on-host.yml');
    writeFileSync(onHost, readFileSync(pb, 'utf8').replace('hosts: localhost', 'hosts: all').replace('name: with-inventory', 'name: on-host'));
    const h = await kplay(['run', onHost, '-i', inv, '-o', 'json'], { cwd: dir, env: runEnv });
    expect(h.code, h.stdout + h.stderr).toBe(0);
    expect(await configMap('sandbox-3', 'on-host')).toBe('web1');
    expect(await configMap('sandbox-2', 'on-host')).toBe('');
  });
});

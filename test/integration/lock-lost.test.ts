// A run that loses its cluster lock mid-run (issue 32 item 1): the Lease is deleted (as an
// operator or another tool might) while the run holds it. The run must notice at once — not at
// its next renewal — and write nothing more to that cluster: the cluster fails with a clear
// error, the next change is never sent. The run waits between its two changes for a marker the
// test writes only once kplay has said the lock is lost, so the order does not depend on timing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { kplay } from '../helpers/cli.js';
import { kubectl, sandboxEnv } from '../sandbox/env.js';

const CONTEXT = 'sandbox-2';
const suffix = Math.random().toString(16).slice(2, 8);
const ns = `lock-lost-${suffix}`;
let tmp: string;
let inventory: string;

beforeAll(async () => {
  const env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-lock-lost-'));
  inventory = path.join(tmp, 'inventory.yml');
  writeFileSync(inventory, YAML.stringify({ all: { clusters: { [CONTEXT]: { context: CONTEXT, kubeconfig: env.kubeconfig } } } }));
  await kubectl(['create', 'namespace', ns], { context: CONTEXT });
});

afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  rmSync(tmp, { recursive: true, force: true });
});

const cm = (name: string): unknown => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { by: name } });

describe('a lost cluster lock', () => {
  /** Run: change, wait for the marker (the Lease is deleted meanwhile), change again. */
  async function run(tag: string, ignoreErrors: boolean): Promise<Awaited<ReturnType<typeof kplay>>> {
    const marker = path.join(tmp, `go-${tag}`);
    const pb = path.join(tmp, `${tag}.yml`);
    writeFileSync(pb, YAML.stringify([{ hosts: 'all', tasks: [
      { name: 'first change', k8s_apply: { definition: cm(`before-${tag}`) } },
      { name: 'between', command: { argv: ['sh', '-c', `while [ ! -e '${marker}' ]; do sleep 0.1; done`] }, ignore_errors: ignoreErrors },
      { name: 'second change', k8s_apply: { definition: cm(`after-${tag}`) } },
    ] }]));
    let deleted = false;
    let told = false;
    const r = await kplay(['run', pb, '-i', inventory, '--record-dir', path.join(tmp, 'records')], {
      timeoutMs: 200_000,
      onSpawn: (child) => {
        let seen = '';
        child.stdout?.on('data', (d: Buffer) => {
          seen += d.toString();
          if (!deleted && seen.includes('TASK [between]')) {
            deleted = true;
            void kubectl(['-n', 'kplay-system', 'delete', 'lease', 'kplay-lock'], { context: CONTEXT });
          }
          if (!told && /the cluster lock was lost \(lease deleted\)/.test(seen)) {
            told = true;
            writeFileSync(marker, '');
          }
        });
      },
    });
    expect(told, r.stdout + r.stderr).toBe(true);
    return r;
  }

  it('stops the run writing to the cluster at once, with a clear error', async () => {
    const r = await run('stop', false);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    // the task running when the lock went is stopped (it may be changing the cluster: a helm
    // upgrade, a kubectl command), and the cluster fails: the next change never runs
    expect(r.stdout).toMatch(/TASK \[between\][^]*fatal: \[sandbox-2\]: FAILED! => the cluster lock was lost \(lease deleted\): this run writes nothing more to the cluster/);
    expect(r.stdout).not.toContain('TASK [second change]');
    await kubectl(['-n', ns, 'get', 'configmap', 'before-stop'], { context: CONTEXT });
    const after = await kubectl(['-n', ns, 'get', 'configmap', 'after-stop'], { context: CONTEXT, check: false });
    expect(after.code).not.toBe(0); // never written
  });

  it('with ignore_errors, a later change on that cluster still fails without being sent', async () => {
    const r = await run('ignored', true);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stdout).toMatch(/TASK \[second change\][^]*fatal: \[sandbox-2\]: FAILED! => the cluster lock was lost \(lease deleted\)/);
    const after = await kubectl(['-n', ns, 'get', 'configmap', 'after-ignored'], { context: CONTEXT, check: false });
    expect(after.code).not.toBe(0);
  });
});

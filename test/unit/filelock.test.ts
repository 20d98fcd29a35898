// The local lock file used for inventory entries without a cluster to hold a Lease in
// (load-balancer-only inventories): one holder at a time, a waiting run names the holder, a
// holder whose pid is gone on this host is taken over at once, release removes only our file.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileLock } from '../../src/audit/filelock.js';
import type { HolderInfo } from '../../src/audit/lock.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-filelock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const holder = (runId: string, pid = process.pid): HolderInfo => ({ runId, user: 'ops', host: os.hostname(), playbook: 'lb.yml', pid });

describe('FileLock', () => {
  it('is exclusive, names the holder when it gives up, and is free again after release', async () => {
    const a = await FileLock.acquire('edge-1', { holder: holder('run-a'), dir });
    expect(existsSync(a.file)).toBe(true);
    const waits: string[] = [];
    const err = await FileLock.acquire('edge-1', { holder: holder('run-b'), dir, timeoutMs: 600, onWait: (m) => waits.push(m) }).catch((e: unknown) => e);
    expect(String(err)).toMatch(/edge-1 is locked on this machine by run run-a \(ops@.*, playbook lb\.yml, pid \d+\).*gave up after waiting 1s \(--lock-timeout\)/);
    expect(waits[0]).toMatch(/waiting for the local lock .*held by run run-a/);
    await a.release();
    expect(existsSync(a.file)).toBe(false);
    const b = await FileLock.acquire('edge-1', { holder: holder('run-b'), dir, timeoutMs: 600 });
    await b.release();
  });

  it('takes over at once from a holder whose pid is gone on this host', async () => {
    const dead = spawnSync('true').pid ?? 999_999; // a pid that has exited
    await FileLock.acquire('edge-2', { holder: holder('run-dead', dead), dir });
    const notes: string[] = [];
    const started = Date.now();
    const lock = await FileLock.acquire('edge-2', { holder: holder('run-new'), dir, timeoutMs: 5000, onTakeOver: (m) => notes.push(m) });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(notes[0]).toMatch(new RegExp(`took over the local lock .* of run run-dead .*: pid ${dead} on this host is gone`));
    await lock.release();
  });
});

describe('a load-balancer-only inventory (no kubeconfig) runs without --no-lock', () => {
  it('locks the entry with a local lock file, says so, and gets to the task', async () => {
    const { writeFileSync } = await import('node:fs');
    const { kplay } = await import('../helpers/cli.js');
    const inv = path.join(dir, 'lb-inv.yml');
    writeFileSync(inv, `all:\n  clusters:\n    edge-9: { context: nowhere, kubeconfig: ${path.join(dir, 'no-kubeconfig.yaml')} }\n`);
    const pb = path.join(dir, 'lb.yml');
    writeFileSync(pb, `- hosts: all\n  tasks:\n    - lb_switch: { provider: haproxy, socket: ${path.join(dir, 'no-haproxy.sock')}, backend: be, server: edge-9, state: drain }\n`);
    const r = await kplay(['run', pb, '-i', inv], { env: { XDG_CACHE_HOME: path.join(dir, 'cache') } });
    expect(r.stdout).toContain('[edge-9] no kubeconfig context "nowhere" for edge-9: locking with a local lock file');
    // the failure is the task's own (no HAProxy here), not a lock or kubeconfig error
    expect(r.stdout).toMatch(/cannot connect to HAProxy runtime API/);
    expect(r.code).toBe(2);
    expect(existsSync(path.join(dir, 'cache/kplay/locks/edge-9.lock'))).toBe(false); // released
  });
});

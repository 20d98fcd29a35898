// A lock that a skewed clock cannot steal (issue 51 item 2), against the real sandbox. The test
// plays another operator's run: it holds the cluster's Lease `kplay-system/kplay-lock` and renews
// it, writing renewTimes from a clock 10 minutes behind (as a waiting operator whose clock runs 10
// minutes fast sees them) or 10 minutes ahead. A kplay run that wants the cluster must wait for
// that live holder and give up at its --lock-timeout, saying the clocks look skewed — not take the
// lock. A holder that stopped renewing is taken over once kplay has seen its Lease unrenewed for its
// lease duration, and kplay says it waited to tell.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { kplay } from '../helpers/cli.js';
import { kubectl, sandboxEnv } from '../sandbox/env.js';
import { connect } from '../../src/k8s/client.js';
import { ensureSystemNamespace } from '../../src/audit/system.js';
import { microTime } from '../../src/audit/lock.js';
import { KubeApiError } from '../../src/k8s/errors.js';
import type { KubeObject } from '../../src/k8s/types.js';

const CONTEXT = 'sandbox-3';
const suffix = randomBytes(3).toString('hex');
const ns = `lock-skew-${suffix}`;
const MINUTE = 60_000;
const ref = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: 'kplay-lock', namespace: 'kplay-system' };
let tmp: string;
let inventory: string;
let client: Awaited<ReturnType<typeof connect>>;
const mine = new Set<string>();

beforeAll(async () => {
  const env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-lock-skew-'));
  inventory = path.join(tmp, 'inventory.yml');
  writeFileSync(inventory, YAML.stringify({ all: { clusters: { [CONTEXT]: { context: CONTEXT, kubeconfig: env.kubeconfig } } } }));
  await kubectl(['create', 'namespace', ns], { context: CONTEXT });
  client = await connect({ name: CONTEXT, context: CONTEXT, kubeconfig: env.kubeconfig });
  await ensureSystemNamespace(client);
});

afterAll(async () => {
  // never leave the cluster locked by this test's holders
  const live = await client.get(ref).catch(() => undefined);
  if (live && mine.has(String((live.spec as { holderIdentity?: string } | undefined)?.holderIdentity))) await client.replace({ ...live, spec: { ...(live.spec as Record<string, unknown>), holderIdentity: '' } }).catch(() => undefined);
  client.close();
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  rmSync(tmp, { recursive: true, force: true });
});

const holderOf = (o: KubeObject | undefined): string => String((o?.spec as { holderIdentity?: string } | undefined)?.holderIdentity ?? '');

/**
 * Take the Lease for `holder` (renewTime from a clock `skewMs` off), once no other run holds it (other
 * tests share the sandbox), and renew it every 500 ms while `renew` — as a live run on another host would.
 */
async function hold(holder: string, skewMs: number, seconds: number, renew: boolean): Promise<() => void> {
  mine.add(holder);
  const spec = (): Record<string, unknown> => ({ holderIdentity: holder, leaseDurationSeconds: seconds, acquireTime: microTime(new Date(Date.now() + skewMs)), renewTime: microTime(new Date(Date.now() + skewMs)), leaseTransitions: 0 });
  const metadata = { name: 'kplay-lock', namespace: 'kplay-system', annotations: { 'kplay.dev/holder-info': JSON.stringify({ runId: holder, user: 'operator', host: 'other-host', playbook: 'window.yml', pid: 4242 }) } };
  const deadline = Date.now() + 180_000;
  let seen = { rv: '', at: Date.now() };
  for (;;) {
    const live = await client.get(ref);
    try {
      if (live && live.metadata.resourceVersion !== seen.rv) seen = { rv: live.metadata.resourceVersion ?? '', at: Date.now() };
      // another test's run holds it: wait for it to finish — or, if it stopped renewing (killed), for its lease duration
      const dead = live !== undefined && Date.now() - seen.at > (Number((live.spec as { leaseDurationSeconds?: number } | undefined)?.leaseDurationSeconds) || 60) * 1000 + 2000;
      if (!live) await client.create({ ...ref, metadata, spec: spec() });
      else if (holderOf(live) === '' || mine.has(holderOf(live)) || dead) await client.replace({ ...live, metadata: { ...live.metadata, ...metadata }, spec: spec() });
      else if (Date.now() > deadline) throw new Error(`the sandbox's lock stayed held by ${holderOf(live)}`);
      else {
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      break;
    } catch (e) {
      if (!(e instanceof KubeApiError && e.status === 409)) throw e;
    }
  }
  if (!renew) return () => undefined;
  const timer = setInterval(() => {
    void (async () => {
      const live = await client.get(ref);
      if (live && holderOf(live) === holder) await client.replace({ ...live, spec: { ...(live.spec as Record<string, unknown>), renewTime: microTime(new Date(Date.now() + skewMs)) } });
    })().catch(() => undefined);
  }, 500);
  return () => clearInterval(timer);
}

function playbook(tag: string): string {
  const pb = path.join(tmp, `${tag}.yml`);
  writeFileSync(pb, YAML.stringify([{ hosts: 'all', tasks: [{ name: 'change', k8s_apply: { definition: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${tag}`, namespace: ns }, data: { a: '1' } } } }] }]));
  return pb;
}

const configMapExists = async (tag: string): Promise<boolean> => (await kubectl(['-n', ns, 'get', 'configmap', `cm-${tag}`], { context: CONTEXT, check: false })).code === 0;

describe('a cluster lock and a skewed clock', () => {
  it('a live holder whose renewTimes are 10 minutes behind our clock (we run fast) keeps its lock', async () => {
    const holder = `slow-clock-${suffix}`;
    const stop = await hold(holder, -10 * MINUTE, 30, true);
    try {
      const r = await kplay(['run', playbook('behind'), '-i', inventory, '--lock-timeout', '3', '--record-dir', path.join(tmp, 'records')], { timeoutMs: 120_000 });
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(r.stdout).toContain(`locked by run ${holder}`);
      expect(r.stdout).toContain('gave up after waiting 3s (--lock-timeout)');
      expect(r.stdout).toMatch(/taken over only once this machine has seen its Lease unrenewed for its lease duration \(30 s\), never by comparing clocks\. Its renewTime is (59\d|60\d) s old by this machine's clock — a dead run, or a skewed clock: waiting 30 s to tell/);
      expect(r.stdout).toMatch(new RegExp(`holder \\(run ${holder}\\) renewed the cluster lock just now, but its renewTime is (59\\d|60\\d) s behind this machine's clock: one of the two clocks looks skewed`));
      expect(r.stdout).not.toContain('took over');
      expect(holderOf(await client.get(ref))).toBe(holder);
      expect(await configMapExists('behind')).toBe(false);
    } finally {
      stop();
    }
  });

  it('a live holder whose renewTimes are 10 minutes ahead keeps its lock, and the skew is said', async () => {
    const holder = `fast-clock-${suffix}`;
    const stop = await hold(holder, 10 * MINUTE, 30, true);
    try {
      const r = await kplay(['run', playbook('ahead'), '-i', inventory, '--lock-timeout', '2', '--record-dir', path.join(tmp, 'records')], { timeoutMs: 120_000 });
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(r.stdout).toMatch(new RegExp(`holder \\(run ${holder}\\) wrote a renewTime (59\\d|60\\d) s ahead of this machine's clock`));
      expect(holderOf(await client.get(ref))).toBe(holder);
      expect(await configMapExists('ahead')).toBe(false);
    } finally {
      stop();
    }
  });

  it('a holder that stopped renewing is taken over after its lease duration, saying why', async () => {
    const holder = `dead-${suffix}`;
    await hold(holder, -10 * MINUTE, 3, false);
    const r = await kplay(['run', playbook('dead'), '-i', inventory, '--lock-timeout', '60', '--record-dir', path.join(tmp, 'records')], { timeoutMs: 120_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/a dead run, or a skewed clock: waiting 3 s to tell/);
    expect(r.stdout).toMatch(new RegExp(`took over the cluster lock of run ${holder} \\(operator@other-host, playbook window\\.yml, pid 4242\\) since .*: its Lease was not renewed for 3 s \\(its lease duration\\), as observed by this machine`));
    expect(await configMapExists('dead')).toBe(true);
    expect(holderOf(await client.get(ref))).not.toBe(holder); // taken over, and released by the run
  });
});

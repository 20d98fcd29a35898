// The terminal goes away mid-run (issue 32 item 6): kplay runs in a real terminal (tmux), holding
// a sandbox cluster's lock, and the tmux session is killed — the process gets SIGHUP, then EIO
// on every write to its terminal. It must stop as on SIGTERM: the running step cancelled, the
// lock released, the run recorded (interrupted), exit 130 — not die holding the Lease.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { kplayBin } from '../helpers/cli.js';
import { kubectl, sandboxEnv } from '../sandbox/env.js';

const pexec = promisify(execFile);
const CONTEXT = 'sandbox-1';
const suffix = Math.random().toString(16).slice(2, 8);
const ns = `hangup-${suffix}`;
const session = `kplay-hangup-${suffix}`;
let tmp: string;

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-hangup-'));
  await kubectl(['create', 'namespace', ns], { context: CONTEXT });
});
afterAll(async () => {
  await pexec('tmux', ['kill-session', '-t', session]).catch(() => undefined);
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  rmSync(tmp, { recursive: true, force: true });
});

/** Poll `check` every 200 ms until it is true, at most `ms`. */
async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('a terminal hangup', () => {
  it('stops the run like SIGTERM: lock released, run recorded, exit 130', async () => {
    const env = sandboxEnv();
    const inventory = path.join(tmp, 'inventory.yml');
    writeFileSync(inventory, YAML.stringify({ all: { clusters: { [CONTEXT]: { context: CONTEXT, kubeconfig: env.kubeconfig } } } }));
    const pb = path.join(tmp, 'pb.yml');
    writeFileSync(pb, YAML.stringify([{ hosts: 'all', tasks: [
      { name: 'change', k8s_apply: { definition: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: ns }, data: { a: '1' } } } },
      { name: 'hold', command: { argv: ['sleep', '600'] } },
    ] }]));
    const records = path.join(tmp, 'records');
    const pidFile = path.join(tmp, 'pid');
    // the shell records its pid and becomes kplay (exec): kplay itself runs in the terminal
    await pexec('tmux', ['new-session', '-d', '-s', session, '-x', '120', '-y', '40', `sh -c 'echo $$ > ${pidFile}; exec node ${kplayBin} run ${pb} -i ${inventory} --record-dir ${records} --progress plain'`]);
    await until(async () => (await pexec('tmux', ['capture-pane', '-p', '-t', session]).catch(() => ({ stdout: '' }))).stdout.includes('TASK [hold]'), 120_000, 'the run to reach the task that holds');
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    const holder = async (): Promise<string> => (await kubectl(['-n', 'kplay-system', 'get', 'lease', 'kplay-lock', '-o', 'jsonpath={.spec.holderIdentity}'], { context: CONTEXT, check: false })).stdout.trim();
    expect(await holder()).not.toBe('');

    await pexec('tmux', ['kill-session', '-t', session]); // SIGHUP to the terminal's processes; the terminal is gone
    const alive = (): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await until(() => !alive(), 60_000, 'kplay to exit');
    expect(await holder()).toBe(''); // released, not left to expire
    const rec = existsSync(records) ? readdirSync(records).find((f) => f.endsWith('.jsonl')) : undefined;
    expect(rec, 'a run record').toBeDefined();
    const lines = readFileSync(path.join(records, rec ?? ''), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; interrupted?: boolean; exit_code?: number });
    expect(lines.find((l) => l.type === 'recap')?.exit_code).toBe(130);
    expect(lines.find((l) => l.type === 'recap')?.interrupted).toBe(true);
  });
});

// No child process outlives kplay by more than ~2 s, however kplay dies: here `kill -9`, where no
// handler of kplay's runs. Both kinds of children are checked: a `command` (its whole process
// group) and helm (a stand-in helm whose `upgrade` hangs, as `helm upgrade --wait` does).
import { execSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kplayBin, repoRoot } from '../helpers/cli.js';
import { startHttp } from '../helpers/http.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-tether-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitForFile(file: string, ms = 15_000): Promise<number> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (existsSync(file)) {
      const pid = Number(readFileSync(file, 'utf8').trim());
      if (pid > 0) return pid;
    }
    await sleep(50);
  }
  throw new Error(`${file} never appeared`);
}

/**
 * Start kplay, wait for the child's pid file, kill -9 kplay, and report whether the child is gone
 * within 2 s (polled up to 3 s on a loaded machine; `ps` output is kept for the failure message).
 */
async function killKplayAndCheck(playbook: string, pidFile: string, env: Record<string, string> = {}): Promise<{ before: boolean; after: boolean; ps: string }> {
  const child = spawn(process.execPath, [kplayBin, 'run', playbook, '-i', path.join(repoRoot, 'playbooks/examples/inventories/demo.yml'), '--limit', 'prod-eu-1', '--no-lock'], { env: { ...process.env, ...env }, stdio: 'ignore' });
  const pid = await waitForFile(pidFile);
  const before = alive(pid);
  child.kill('SIGKILL');
  const deadline = Date.now() + 3000;
  await sleep(2000);
  while (alive(pid) && Date.now() < deadline) await sleep(100);
  const after = alive(pid);
  const ps = after ? execSync('ps -ef | grep -E "trap|sleep 60|kplay" | grep -v grep || true').toString() : '';
  if (after) process.kill(pid, 'SIGKILL');
  return { before, after, ps };
}

describe('children are tethered to kplay', () => {
  it('a command (and its process group) is stopped when kplay is killed with SIGKILL', async () => {
    const pidFile = path.join(tmp, 'cmd.pid');
    const pb = path.join(tmp, 'cmd.yml');
    writeFileSync(pb, `- hosts: all\n  tasks:\n    - command: "sh -c 'echo $$ > ${pidFile}; exec sleep 60'"\n`);
    const r = await killKplayAndCheck(pb, pidFile);
    expect(r.before).toBe(true);
    expect(r.after, r.ps).toBe(false);
  });

  it('a hanging helm upgrade is stopped when kplay is killed with SIGKILL', async () => {
    const pidFile = path.join(tmp, 'helm.pid');
    const fakeHelm = path.join(tmp, 'helm');
    writeFileSync(fakeHelm, `#!/bin/sh\ncase "$1" in\n  version) echo v4.1.4 ;;\n  status|history|get) echo "Error: release: not found" >&2; exit 1 ;;\n  upgrade) echo $$ > ${pidFile}; exec sleep 60 ;;\nesac\n`);
    chmodSync(fakeHelm, 0o755);
    const pb = path.join(tmp, 'helm.yml');
    writeFileSync(pb, `- hosts: all\n  tasks:\n    - helm_release: { name: web, namespace: web, chart: ${path.join(repoRoot, 'playbooks/charts/webapp-1.0.0')}, wait: true }\n`);
    // HELM_DRIVER=sql: releases are read with helm itself. kplay resolves and checks the cluster's
    // connection before helm runs (the private kubeconfig it hands helm), so a stand-in apiserver
    // answers that check (`/version`); nothing else is asked of it
    const api = await startHttp((req, res) => {
      const version = req.url?.startsWith('/version') === true;
      res.writeHead(version ? 200 : 404, { 'Content-Type': 'application/json' }).end(version ? '{"major":"1","minor":"34","gitVersion":"v1.34.4"}' : '{"kind":"Status","code":404}');
    });
    const kubeconfig = path.join(tmp, 'kubeconfig');
    writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\nclusters: [{ name: c, cluster: { server: "${api.url}", insecure-skip-tls-verify: true } }]\nusers: [{ name: u, user: { token: t } }]\ncontexts: [{ name: prod-eu-1, context: { cluster: c, user: u } }]\ncurrent-context: prod-eu-1\n`);
    try {
      const r = await killKplayAndCheck(pb, pidFile, { KPLAY_HELM: fakeHelm, HELM_DRIVER: 'sql', KUBECONFIG: kubeconfig });
      expect(r.before).toBe(true);
      expect(r.after, r.ps).toBe(false);
    } finally {
      await api.close();
    }
  });
});

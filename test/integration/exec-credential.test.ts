// Kubeconfig exec credential plugins (issue 32 item 5), against the real sandbox: a plugin that
// answers (an ExecCredential with the sandbox admin's client certificate) connects; a plugin that
// never answers is killed after KPLAY_EXEC_TIMEOUT_SECONDS and fails only its cluster, naming the
// plugin, while the other cluster goes on.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { kplay } from '../helpers/cli.js';
import { sandboxEnv } from '../sandbox/env.js';

interface Kubeconfig {
  contexts: { name: string; context: { cluster: string; user: string } }[];
  clusters: { name: string; cluster: Record<string, unknown> }[];
  users: { name: string; user: Record<string, unknown> }[];
}

let tmp: string;
let kubeconfig: string;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-exec-'));
  const kc = YAML.parse(readFileSync(sandboxEnv().kubeconfig, 'utf8')) as Kubeconfig;
  const userOf = (context: string): Record<string, unknown> => {
    const name = kc.contexts.find((c) => c.name === context)?.context.user;
    const u = kc.users.find((x) => x.name === name);
    if (!u) throw new Error(`no user for ${context}`);
    return u.user;
  };
  // sandbox-1: a plugin that answers with the admin's certificate (as a cloud CLI would with a token)
  const admin = userOf('sandbox-1');
  const pem = (k: string): string => Buffer.from(String(admin[k]), 'base64').toString();
  writeFileSync(path.join(tmp, 'cred.json'), JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { clientCertificateData: pem('client-certificate-data'), clientKeyData: pem('client-key-data') } }));
  writeFileSync(path.join(tmp, 'good-plugin'), `#!/bin/sh\n[ -n "$KUBERNETES_EXEC_INFO" ] || exit 3\ncat "${path.join(tmp, 'cred.json')}"\n`);
  // sandbox-2: a plugin that never answers (waits for a login that never comes)
  writeFileSync(path.join(tmp, 'hung-plugin'), `#!/bin/sh\necho $$ > "${path.join(tmp, 'hung.pid')}"\nexec sleep 600\n`);
  for (const f of ['good-plugin', 'hung-plugin']) chmodSync(path.join(tmp, f), 0o755);
  const exec = (script: string): Record<string, unknown> => ({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: `./${script}`, interactiveMode: 'Never' } });
  kc.users = kc.users.map((u) => {
    const ctx = kc.contexts.find((c) => c.context.user === u.name)?.name;
    return ctx === 'sandbox-1' ? { name: u.name, user: exec('good-plugin') } : ctx === 'sandbox-2' ? { name: u.name, user: exec('hung-plugin') } : u;
  });
  kubeconfig = path.join(tmp, 'kubeconfig');
  writeFileSync(kubeconfig, YAML.stringify(kc));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('exec credential plugins', () => {
  it('a plugin that answers connects; a hung one is killed after the bound and fails only its cluster', async () => {
    const inventory = path.join(tmp, 'inventory.yml');
    writeFileSync(inventory, YAML.stringify({ all: { clusters: { 'sandbox-1': { context: 'sandbox-1', kubeconfig }, 'sandbox-2': { context: 'sandbox-2', kubeconfig } } } }));
    const pb = path.join(tmp, 'pb.yml');
    writeFileSync(pb, YAML.stringify([{ hosts: 'all', tasks: [{ name: 'read', k8s_info: { kind: 'Namespace', name: 'default' }, register: 'ns' }, { name: 'show', debug: { msg: 'found {{ ns.resources | length }}' } }] }]));
    const r = await kplay(['run', pb, '-i', inventory, '--no-lock'], { env: { KPLAY_EXEC_TIMEOUT_SECONDS: '2' }, timeoutMs: 120_000 });
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.stdout).toMatch(/ok: \[sandbox-1\] => found 1/);
    expect(r.stdout).toMatch(/sandbox-2.*credential plugin "\.\/hung-plugin" did not answer within 2 s and was killed \(KPLAY_EXEC_TIMEOUT_SECONDS/);
    const pid = Number(readFileSync(path.join(tmp, 'hung.pid'), 'utf8').trim());
    expect(existsSync(`/proc/${pid}`)).toBe(false); // killed, not left behind
  });
});

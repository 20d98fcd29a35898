// One run, one view of each cluster (issue 51 item 1): a kubeconfig context is resolved once, when
// its connection opens — server, CA, client credentials, exec plugin, proxy, TLS server name,
// namespace — and helm is handed exactly that, as a private kubeconfig (0600 in a 0700 directory,
// removed at the end of the run). A kubeconfig rewritten afterwards (the context re-pointed at
// another cluster, as `kubectl config` or a credentials helper does) changes neither kplay's
// client, nor a later client of the same context, nor a credential refresh, nor helm.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import YAML from 'yaml';
import { loadCredentials } from '../../src/k8s/credentials.js';
import { connect } from '../../src/k8s/client.js';
import { openResolution } from '../../src/k8s/pool.js';
import { planConnection } from '../../src/k8s/connection.js';
import { resolvedKubeconfig, type ResolvedContext } from '../../src/k8s/resolved.js';
import { PRIVATE_KUBECONFIGS, PrivateKubeconfigs } from '../../src/helm/private-kubeconfig.js';
import { helmConnection } from '../../src/helm/auth.js';

let dir: string;
const b64 = (s: string): string => Buffer.from(s).toString('base64');
const read = (file: string): unknown => YAML.parse(readFileSync(file, 'utf8'));

/** A kubeconfig whose context `prod` names `prodCluster` (prod: files, exec plugin, proxy, TLS name, namespace) and another context `other`. */
function kubeconfig(prodCluster: 'prod-cluster' | 'other-cluster', prodServer = 'https://prod.example:6443'): string {
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'other',
    clusters: [
      { name: 'prod-cluster', cluster: { server: prodServer, 'certificate-authority': 'ca.pem', 'tls-server-name': 'prod.internal', 'proxy-url': 'http://proxy.example:3128', extensions: [{ name: 'x', extension: { a: 1 } }] } },
      { name: 'other-cluster', cluster: { server: 'https://other.example:6443', 'insecure-skip-tls-verify': true } },
    ],
    users: [
      { name: 'prod-user', user: { 'client-certificate': 'certs/client.pem', 'client-key': 'certs/client-key.pem', exec: { apiVersion: 'client.authentication.k8s.io/v1', command: './plugin-1', args: ['get-token'], env: [{ name: 'PLUGIN_MODE', value: 'prod' }], interactiveMode: 'Never' } } },
      { name: 'other-user', user: { token: 'other-secret-token', exec: { apiVersion: 'client.authentication.k8s.io/v1', command: './plugin-2', interactiveMode: 'Never' } } },
    ],
    contexts: [
      { name: 'prod', context: { cluster: prodCluster, user: prodCluster === 'prod-cluster' ? 'prod-user' : 'other-user', namespace: 'apps' } },
      { name: 'other', context: { cluster: 'other-cluster', user: 'other-user' } },
    ],
  });
}

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-resolved-'));
  writeFileSync(path.join(dir, 'ca.pem'), 'CA-ONE');
  mkdirSync(path.join(dir, 'certs'));
  writeFileSync(path.join(dir, 'certs/client.pem'), 'CERT-ONE');
  writeFileSync(path.join(dir, 'certs/client-key.pem'), 'KEY-ONE');
  for (const n of ['1', '2']) {
    writeFileSync(path.join(dir, `cred-${n}.json`), JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: `tok-${n}` } }));
    writeFileSync(path.join(dir, `plugin-${n}`), `#!/bin/sh\necho run >> "${path.join(dir, `runs-${n}`)}"\ncat "${path.join(dir, `cred-${n}.json`)}"\n`);
    chmodSync(path.join(dir, `plugin-${n}`), 0o755);
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const runs = (n: string): number => (existsSync(path.join(dir, `runs-${n}`)) ? readFileSync(path.join(dir, `runs-${n}`), 'utf8').split('\n').filter(Boolean).length : 0);

describe('a resolved kubeconfig context', () => {
  it('holds exactly the resolved cluster and user, files read in, and survives a rewrite of the kubeconfig', async () => {
    const file = path.join(dir, 'config-a');
    writeFileSync(file, kubeconfig('prod-cluster'));
    const creds = await loadCredentials({ name: 'prod', context: 'prod', kubeconfig: file });
    const expected: ResolvedContext = {
      context: 'prod',
      cluster: { server: 'https://prod.example:6443', 'certificate-authority-data': b64('CA-ONE'), 'tls-server-name': 'prod.internal', 'proxy-url': 'http://proxy.example:3128' },
      user: {
        'client-certificate-data': b64('CERT-ONE'),
        'client-key-data': b64('KEY-ONE'),
        // the command made absolute: helm runs it from a kubeconfig in another directory
        exec: { apiVersion: 'client.authentication.k8s.io/v1', command: path.join(dir, 'plugin-1'), args: ['get-token'], env: [{ name: 'PLUGIN_MODE', value: 'prod' }], interactiveMode: 'Never' },
      },
      namespace: 'apps',
    };
    expect(creds.resolved).toEqual(expected);
    expect(creds.tls.ca).toEqual(Buffer.from('CA-ONE')); // kplay's client uses the same bytes

    const files = new PrivateKubeconfigs();
    onTestFinished(() => files.endOfRun());
    const target = files.target(creds.resolved);
    expect(target.kubeContext).toBe('prod');
    const privateFile = target.kubeconfig ?? '';
    expect(statSync(privateFile).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(privateFile)).mode & 0o777).toBe(0o700);
    // exactly the resolved cluster: one cluster, one user, one context — nothing of `other`
    expect(read(privateFile)).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      preferences: {},
      'current-context': 'prod',
      clusters: [{ name: 'prod', cluster: expected.cluster }],
      users: [{ name: 'prod', user: expected.user }],
      contexts: [{ name: 'prod', context: { cluster: 'prod', user: 'prod', namespace: 'apps' } }],
    });
    expect(readFileSync(privateFile, 'utf8')).not.toContain('other');

    // the kubeconfig rewritten: `prod` re-pointed at the other cluster, the CA file replaced
    writeFileSync(file, kubeconfig('other-cluster'));
    writeFileSync(path.join(dir, 'ca.pem'), 'CA-TWO');
    onTestFinished(() => writeFileSync(path.join(dir, 'ca.pem'), 'CA-ONE'));
    const before = readFileSync(privateFile, 'utf8');
    expect(files.target(creds.resolved)).toEqual(target); // the same file, written once
    expect(readFileSync(privateFile, 'utf8')).toBe(before);

    // a credential refresh (the token expired, a 401) runs the plugin the context had, not the new one
    const first = runs('1');
    creds.auth.invalidate?.();
    expect(await creds.auth.headers()).toMatchObject({ Authorization: 'Bearer tok-1' });
    expect(runs('1')).toBe(first + 1);
    expect(runs('2')).toBe(0);
    expect(creds.server).toBe('https://prod.example:6443');

    // the end of the run removes the private directory
    await files.endOfRun();
    expect(existsSync(path.dirname(privateFile))).toBe(false);
  });

  it('one view per connection: a later client of the same context (other limits) reaches the first server; settings over the task cluster start from it', async () => {
    const servers = await Promise.all([0, 1].map(() => versionServer()));
    const [a, b] = servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`) as [string, string];
    onTestFinished(() => servers.forEach((s) => (s.closeAllConnections(), s.close())));
    const file = path.join(dir, 'config-b');
    const plain = (server: string): string => YAML.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }], users: [{ name: 'u', user: { token: 'tok' } }], contexts: [{ name: 'prod', context: { cluster: 'c', user: 'u' } }] });
    writeFileSync(file, plain(a));
    const ref = { name: 'prod', context: 'prod', kubeconfig: file };
    const first = await connect(ref, { qps: 5 });
    writeFileSync(file, plain(b)); // re-pointed mid-run
    const second = await connect(ref, { qps: 7 }); // another pool entry (other limits): the same resolution
    expect(second.server).toBe(a);
    expect(second.resolved).toBe(first.resolved);
    expect(await openResolution(ref)).toBe(first.resolved);
    // kubernetes.core settings over the task's cluster (validate_certs, impersonation, …) start from the resolved context
    const plan = planConnection({ impersonateUser: 'jane' }, ref, (rel) => path.resolve(dir, rel), await openResolution(ref));
    expect(plan).toMatchObject({ kind: 'built', config: { clusters: [{ cluster: { server: a } }], users: [{ user: { token: 'tok', as: 'jane' } }] } });
    // …and so does a kubernetes.core helm task's own kubeconfig (api_key over the inventory cluster's)
    const conn = await helmConnection({ api_key: 'key-x' }, ref, dir, {});
    onTestFinished(() => conn.cleanup());
    expect(read(conn.kubeconfig ?? '')).toMatchObject({ clusters: [{ cluster: { server: a } }] });
    expect(conn.kubeContext).toBe('prod');
    // once every client of the context is closed (the run is over), the next connection reads the file again
    first.close();
    second.close();
    const third = await connect(ref, { qps: 5 });
    onTestFinished(() => third.close());
    expect(third.server).toBe(b);
  });

  it('helm_release hands helm the private kubeconfig of its client\'s connection, without KUBECONFIG or HELM_KUBE*', async () => {
    const { default: mod } = await import('../../modules/helm_release.js');
    const { makeCtx, runModule } = await import('../helpers/ctx.js');
    const log = mkdtempSync(path.join(dir, 'helm-log-'));
    const fakeHelm = path.join(log, 'helm');
    writeFileSync(
      fakeHelm,
      [
        '#!/bin/sh',
        'if [ "$1" = version ]; then echo v3.14.4; exit 0; fi',
        `echo "$@" > "${log}/argv"`,
        `env | grep -E '^(KUBECONFIG|HELM_KUBE)' > "${log}/env"`,
        `while [ $# -gt 0 ]; do if [ "$1" = --kubeconfig ]; then cp "$2" "${log}/seen.json"; fi; shift; done`,
        'echo "Error: release: not found" >&2; exit 1',
      ].join('\n'),
    );
    chmodSync(fakeHelm, 0o755);
    const saved = { HELM_DRIVER: process.env.HELM_DRIVER, KUBECONFIG: process.env.KUBECONFIG, HELM_KUBEAPISERVER: process.env.HELM_KUBEAPISERVER };
    // releases read with helm (a driver kplay does not read itself); an environment pointing elsewhere
    Object.assign(process.env, { HELM_DRIVER: 'sql', KUBECONFIG: path.join(dir, 'config-a'), HELM_KUBEAPISERVER: 'https://wrong.example:6443' });
    onTestFinished(() => {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    });
    const resolved: ResolvedContext = { context: 'prod', cluster: { server: 'https://prod.example:6443', 'certificate-authority-data': b64('CA') }, user: { token: 'tok-resolved' }, namespace: 'apps' };
    const ctx = makeCtx({ cluster: { name: 'prod', context: 'prod', kubeconfig: path.join(dir, 'config-a') }, baseDir: log });
    void ctx.adapter('k8s', () => Promise.resolve({ name: 'prod', server: 'https://prod.example:6443', resolved }));
    expect(await runModule(mod, { name: 'web', state: 'absent', helm_binary: fakeHelm }, ctx)).toMatchObject({ status: 'ok', msg: 'release default/web is not installed' });
    const argv = readFileSync(path.join(log, 'argv'), 'utf8');
    const m = /--kube-context (\S+) --kubeconfig (\S+)/.exec(argv);
    expect(m?.[1]).toBe('prod');
    expect(m?.[2]).not.toBe(path.join(dir, 'config-a'));
    expect(read(path.join(log, 'seen.json'))).toEqual(resolvedKubeconfig(resolved));
    expect(readFileSync(path.join(log, 'env'), 'utf8')).toBe('');
    expect(ctx.logs.debug.join('\n')).not.toContain('tok-resolved');
    // the run ends the adapter: the private kubeconfig is gone
    const files = await ctx.adapter<PrivateKubeconfigs>(PRIVATE_KUBECONFIGS, () => Promise.reject(new Error('created by the task')));
    await files.endOfRun();
    expect(existsSync(m?.[2] ?? '')).toBe(false);
  });

  it('names a context that had no name (in-cluster) kplay', () => {
    expect(resolvedKubeconfig({ context: '', cluster: { server: 'https://x' }, user: {} })).toMatchObject({ 'current-context': 'kplay', clusters: [{ name: 'kplay' }], contexts: [{ name: 'kplay', context: { cluster: 'kplay', user: 'kplay' } }] });
  });
});

/** An HTTP server answering /version like an apiserver. */
async function versionServer(): Promise<http.Server> {
  const s = http.createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ gitVersion: 'v1.34.0' }));
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return s;
}

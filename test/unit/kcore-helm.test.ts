// Pure logic of the kubernetes.core helm adapters: helm list rows, state filters, Go durations and
// times, argument aliases, set_values flags, the repositories file, connection overrides.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { helmConnection, overriddenKubeconfig, withAuthEnv } from '../../src/helm/auth.js';
import { ansicTime, releaseSummaryText, shellWord } from '../../src/helm/cli.js';
import { aliased, kcoreMessage, parseGoDuration, parseRepositories, repositoryConfigPath, setValuesFlags, yamlDocuments } from '../../src/helm/kcore.js';
import { goTimeString, listedRelease, statusMatches } from '../../src/helm/list.js';
import { syncDir } from '../../src/helm/sync-dir.js';
import { parseHelmVersion, upgradeFlags } from '../../src/helm/version.js';

const dirs: string[] = [];
const tmpdir = (): string => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'kcore-helm-unit-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('helm list rows', () => {
  it('prints times as Go does', () => {
    expect(goTimeString('2026-11-26T12:44:54.375103124Z')).toBe('2026-11-26 12:44:54.375103124 +0000 UTC');
    expect(goTimeString('2026-11-26T12:44:54.500Z')).toBe('2026-11-26 12:44:54.5 +0000 UTC');
    expect(goTimeString('2026-11-26T12:44:54Z')).toBe('2026-11-26 12:44:54 +0000 UTC');
    expect(goTimeString('2026-11-26T13:44:54.1+01:00')).toBe('2026-11-26 13:44:54.1 +0100 +0100');
    expect(goTimeString('')).toBe('-');
  });

  it('filters states as helm list (default: deployed and failed)', () => {
    expect(statusMatches('deployed', [])).toBe(true);
    expect(statusMatches('failed', [])).toBe(true);
    expect(statusMatches('pending-upgrade', [])).toBe(false);
    expect(statusMatches('pending-upgrade', ['pending'])).toBe(true);
    expect(statusMatches('uninstalled', ['all'])).toBe(true);
    expect(statusMatches('superseded', ['deployed', 'failed'])).toBe(false);
  });

  it('builds the row, values, notes and hooks of a release', () => {
    const r = listedRelease({
      name: 'web',
      namespace: 'apps',
      version: 3,
      info: { status: 'deployed', last_deployed: '2026-01-02T03:04:05Z', notes: 'hi\n' },
      chart: { metadata: { name: 'webapp', version: '1.1.0', appVersion: '2.0' }, values: { a: 1 } },
      config: { b: 2 },
      manifest: '---\nkind: X\n',
      hooks: [{ path: 'webapp/templates/job.yaml', manifest: 'kind: Job' }, 'junk'],
    });
    expect(r.entry).toEqual({ name: 'web', namespace: 'apps', revision: '3', updated: '2026-01-02 03:04:05 +0000 UTC', status: 'deployed', chart: 'webapp-1.1.0', app_version: '2.0' });
    expect(r.config).toEqual({ b: 2 });
    expect(r.chartValues).toEqual({ a: 1 });
    expect(r.notes).toBe('hi\n');
    expect(r.hooks).toEqual([{ path: 'webapp/templates/job.yaml', manifest: 'kind: Job' }]);
  });

  it('is safe on odd shapes (null config, no chart, no info)', () => {
    const r = listedRelease({ name: 'x', config: null, chart: null });
    expect(r.entry).toMatchObject({ name: 'x', revision: '', status: 'unknown', chart: '-', updated: '-' });
    expect(r.config).toEqual({});
    expect(listedRelease(null).hooks).toEqual([]);
  });
});

describe('arguments', () => {
  it('parses Go durations', () => {
    expect(parseGoDuration('5m')).toBe(300);
    expect(parseGoDuration('1h30m')).toBe(5400);
    expect(parseGoDuration('5m0s')).toBe(300);
    expect(parseGoDuration('1.5s')).toBe(1.5);
    expect(parseGoDuration('500ms')).toBe(0.5);
    expect(parseGoDuration('120')).toBe(120);
    expect(() => parseGoDuration('5 minutes')).toThrow(/not a duration/);
    expect(() => parseGoDuration('')).toThrow(/not a duration/);
  });

  it('resolves aliases as Ansible (the alias wins, with a warning)', () => {
    expect(aliased({ release_name: 'a' }, 'release_name', 'name')).toEqual({ value: 'a' });
    expect(aliased({ name: 'b' }, 'release_name', 'name')).toEqual({ value: 'b' });
    expect(aliased({ release_name: 'a', name: 'b' }, 'release_name', 'name')).toEqual({ value: 'b', warning: 'Both option release_name and its alias name are set.' });
    expect(aliased({}, 'release_name', 'name')).toEqual({ value: undefined });
  });

  it('turns set_values into helm flags, in order', () => {
    expect(setValuesFlags([{ value: 'a=1' }, { value: 'b=2', value_type: 'string' }, { value: 'c={"x":1}', value_type: 'json' }, { value: 'd=a,b', value_type: 'literal' }, { value: 'e=f.txt', value_type: 'file' }])).toEqual([
      '--set', 'a=1', '--set-string', 'b=2', '--set-json', 'c={"x":1}', '--set-literal', 'd=a,b', '--set-file', 'e=f.txt',
    ]);
  });

  it('reads the version of a helm built from source (no patch number)', () => {
    expect(parseHelmVersion('v3.19')).toMatchObject({ major: 3, minor: 19, patch: 0 });
  });

  it('adds --reuse-values and extra flags to an upgrade', () => {
    const base = { wait: false, atomic: false, force: false, skipCrds: false, dependencyUpdate: false, createNamespace: false };
    expect(upgradeFlags(4, { ...base, reuseValues: true, extra: ['--history-max', '3', '--no-hooks'] })).toEqual(['--install', '--reuse-values', '--force-conflicts', '--history-max', '3', '--no-hooks']);
    expect(upgradeFlags(3, base)).toEqual(['--install', '--reset-values']);
  });

  it('names binary_path in helm-not-found messages', () => {
    expect(kcoreMessage("helm not found on PATH; install helm ≥ 3.14 or set helm_binary / KPLAY_HELM")).toBe('helm not found on PATH; install helm ≥ 3.14 or set binary_path / KPLAY_HELM');
  });

  it('reads YAML lists as PyYAML safe_load_all (YAML 1.1)', () => {
    expect(yamlDocuments('---\n# Source: x\na: yes\n---\nb: 1\n')).toEqual([{ a: true }, { b: 1 }]);
    expect(yamlDocuments('')).toEqual([]);
  });
});

describe('repositories file', () => {
  it('reads entries; empty or missing parts are safe', () => {
    const text = 'apiVersion: ""\ngenerated: "0001-01-01T00:00:00Z"\nrepositories:\n- name: a\n  url: http://x\n  username: u\n  password: p\n  pass_credentials_all: true\n- caFile: ""\n  name: b\n  url: http://y\n';
    expect(parseRepositories(text)).toEqual([
      { name: 'a', url: 'http://x', username: 'u', password: 'p', pass_credentials_all: true, insecure_skip_tls_verify: false },
      { name: 'b', url: 'http://y', username: '', password: '', pass_credentials_all: false, insecure_skip_tls_verify: false },
    ]);
    expect(parseRepositories('')).toEqual([]);
    expect(parseRepositories('repositories: null\n')).toEqual([]);
  });

  it('finds the file in helm env output', () => {
    expect(repositoryConfigPath('HELM_CACHE_HOME="/c"\nHELM_REPOSITORY_CONFIG="/cfg/repositories.yaml"\n')).toBe('/cfg/repositories.yaml');
    expect(() => repositoryConfigPath('HELM_CACHE_HOME="/c"\n')).toThrow(/HELM_REPOSITORY_CONFIG/);
  });
});

describe('helm output', () => {
  it('summarises an upgrade as helm prints it', () => {
    const text = releaseSummaryText({ name: 'web', namespace: 'apps', version: 2, info: { status: 'deployed', last_deployed: '2026-11-26T12:45:02Z', description: 'Upgrade complete', notes: 'Visit it\n' } }, 4);
    expect(text).toBe(`Release "web" has been upgraded. Happy Helming!\nNAME: web\nLAST DEPLOYED: ${ansicTime('2026-11-26T12:45:02Z')}\nNAMESPACE: apps\nSTATUS: deployed\nREVISION: 2\nDESCRIPTION: Upgrade complete\nTEST SUITE: None\nNOTES:\nVisit it\n`);
    expect(releaseSummaryText({ name: 'web', version: 1, info: {} }, 3)).toMatch(/^Release "web" does not exist\. Installing it now\.\n.*TEST SUITE: None\n$/s);
  });

  it('prints times in ANSIC layout', () => {
    const d = new Date('2026-11-06T01:02:03Z');
    const expected = `${['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][d.getDay()]} Nov ${String(d.getDate()).padStart(2, ' ')} ${String(d.getHours()).padStart(2, '0')}:02:03 2026`;
    expect(ansicTime('2026-11-06T01:02:03Z')).toBe(expected);
    expect(ansicTime('garbage')).toBe('garbage');
  });

  it('quotes command-line words for display', () => {
    expect(shellWord('--set')).toBe('--set');
    expect(shellWord('a=b,c')).toBe('a=b,c');
    expect(shellWord('Upgrade complete (x)')).toBe("'Upgrade complete (x)'");
    expect(shellWord("it's")).toBe("'it'\\''s'");
  });
});

describe('connection arguments', () => {
  it('fills K8S_AUTH_* fallbacks only where an argument is not given', () => {
    const env = { K8S_AUTH_CONTEXT: 'c1', K8S_AUTH_KUBECONFIG: '/k', K8S_AUTH_HOST: 'https://h', K8S_AUTH_API_KEY: 't', K8S_AUTH_VERIFY_SSL: 'no', K8S_AUTH_SSL_CA_CERT: '/ca' };
    expect(withAuthEnv({ context: 'mine' }, env)).toEqual({ context: 'mine', kubeconfig: '/k', host: 'https://h', api_key: 't', ca_cert: '/ca', validate_certs: false });
    expect(withAuthEnv({}, { K8S_AUTH_VERIFY_SSL: 'true' }).validate_certs).toBe(true);
    expect(withAuthEnv({}, {}).validate_certs).toBeUndefined();
  });

  it('overrides server, CA, TLS check and token as kubernetes.core', () => {
    const base = {
      clusters: [{ name: 'c', cluster: { server: 'https://old', 'certificate-authority-data': 'AAA' } }],
      users: [{ name: 'u', user: { 'client-certificate-data': 'X' } }, { name: 'other', user: {} }],
      contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'ctx',
    };
    const { config, context } = overriddenKubeconfig(base, { host: 'https://new', ca_cert: '/ca.pem', validate_certs: false, api_key: 'tok' });
    expect(context).toBe('ctx');
    expect(config.clusters).toEqual([{ name: 'c', cluster: { server: 'https://new', 'certificate-authority': '/ca.pem', 'insecure-skip-tls-verify': true } }]);
    expect(config.users).toEqual([{ name: 'u', user: { 'client-certificate-data': 'X', token: 'tok' } }, { name: 'other', user: {} }]);
    expect(base.clusters[0]?.cluster.server).toBe('https://old'); // not mutated
    const generated = overriddenKubeconfig(undefined, { host: 'https://h', api_key: 't' });
    expect(generated.context).toBe('generated-context');
    expect(generated.config.clusters).toEqual([{ name: 'generated-cluster', cluster: { server: 'https://h' } }]);
    expect(generated.config.users).toEqual([{ name: 'generated-user', user: { token: 't' } }]);
  });

  it('writes a private temporary kubeconfig only when needed, and removes it', async () => {
    const none = await helmConnection({}, { context: 'inv', kubeconfig: '/inv/kubeconfig' }, '/base');
    expect(none).toMatchObject({ kubeContext: 'inv', kubeconfig: '/inv/kubeconfig' });
    const d = tmpdir();
    writeFileSync(path.join(d, 'kc'), 'apiVersion: v1\nkind: Config\ncurrent-context: here\ncontexts: [{name: here, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: "https://s"}}]\nusers: [{name: u, user: {}}]\n');
    const file = await helmConnection({ kubeconfig: 'kc' }, { context: 'inv' }, d);
    expect(file).toMatchObject({ kubeContext: 'here', kubeconfig: path.join(d, 'kc') });
    const tok = await helmConnection({ kubeconfig: 'kc', api_key: 'secret-token' }, { context: 'inv' }, d);
    expect(tok.kubeContext).toBe('here');
    const written = tok.kubeconfig ?? '';
    expect(written).not.toBe(path.join(d, 'kc'));
    expect(statSync(written).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(written, 'utf8')).users).toEqual([{ name: 'u', user: { token: 'secret-token' } }]);
    await tok.cleanup();
    expect(existsSync(written)).toBe(false);
    await expect(helmConnection({ kubeconfig: 'missing', host: 'https://x' }, { context: 'inv' }, d)).rejects.toThrow(/kubeconfig .*missing: cannot read it/);
  });
});

describe('output_dir', () => {
  it('writes only new or different files', async () => {
    const src = tmpdir();
    const dest = tmpdir();
    mkdirSync(path.join(src, 'c/templates'), { recursive: true });
    writeFileSync(path.join(src, 'c/templates/a.yaml'), 'a: 1\n');
    writeFileSync(path.join(src, 'c/templates/b.yaml'), 'b: 1\n');
    expect(await syncDir(src, dest, true)).toEqual(['c/templates/a.yaml', 'c/templates/b.yaml']);
    expect(existsSync(path.join(dest, 'c'))).toBe(false);
    expect(await syncDir(src, dest, false)).toEqual(['c/templates/a.yaml', 'c/templates/b.yaml']);
    expect(await syncDir(src, dest, false)).toEqual([]);
    writeFileSync(path.join(src, 'c/templates/b.yaml'), 'b: 2\n');
    expect(await syncDir(src, dest, false)).toEqual(['c/templates/b.yaml']);
    expect(readFileSync(path.join(dest, 'c/templates/b.yaml'), 'utf8')).toBe('b: 2\n');
  });
});

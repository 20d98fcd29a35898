// The connection arguments of the kubernetes.core modules: arguments, then K8S_AUTH_* variables,
// then the task's cluster (src/k8s/connection.ts), as kubernetes.core's module_utils/k8s/client.py.
import { bypassesProxy } from '../../src/k8s/proxy.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { authSecrets, planConnection, resolveAuth } from '../../src/k8s/connection.js';
import type { ClusterRef } from '../../src/core/module.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-conn-'));
const kubeconfig = path.join(dir, 'config');
writeFileSync(
  kubeconfig,
  [
    'apiVersion: v1',
    'kind: Config',
    'current-context: one',
    'clusters:',
    '- name: c1',
    '  cluster: { server: "https://one.example:6443", certificate-authority: ca.pem }',
    '- name: c2',
    '  cluster: { server: "https://two.example:6443" }',
    'users:',
    '- name: u1',
    '  user: { token: tok-one }',
    'contexts:',
    '- name: one',
    '  context: { cluster: c1, user: u1, namespace: team }',
    '- name: two',
    '  context: { cluster: c2, user: u1 }',
  ].join('\n'),
);
const task: ClusterRef = { name: 'prod', context: 'two', kubeconfig };
const find = (rel: string): string => path.resolve(dir, rel);

describe('resolveAuth', () => {
  it('takes an argument before its K8S_AUTH_ variable, and the variable when the argument is absent', () => {
    const env = { K8S_AUTH_CONTEXT: 'from-env', K8S_AUTH_HOST: 'https://env.example', K8S_AUTH_API_KEY: 'env-token' };
    expect(resolveAuth({ context: 'from-arg' }, env)).toEqual({ context: 'from-arg', host: 'https://env.example', apiKey: 'env-token' });
  });

  it('reads both names of renamed settings (VERIFY_SSL/VALIDATE_CERTS, SSL_CA_CERT, CERT_FILE, KEY_FILE) and aliases of arguments', () => {
    const env = { K8S_AUTH_VERIFY_SSL: 'no', K8S_AUTH_SSL_CA_CERT: '/ca', K8S_AUTH_CERT_FILE: '/crt', K8S_AUTH_KEY_FILE: '/key' };
    expect(resolveAuth({}, env)).toEqual({ validateCerts: false, caCert: '/ca', clientCert: '/crt', clientKey: '/key' });
    expect(resolveAuth({ verify_ssl: true, ssl_ca_cert: '/a', cert_file: '/b', key_file: '/c' }, env)).toEqual({ validateCerts: true, caCert: '/a', clientCert: '/b', clientKey: '/c' });
    // the argument's own name first
    expect(resolveAuth({}, { K8S_AUTH_VALIDATE_CERTS: 'false', K8S_AUTH_VERIFY_SSL: 'true' }).validateCerts).toBe(false);
  });

  it('reads booleans as kubernetes.core does (only 0/false/no are false) and ignores empty variables', () => {
    expect(resolveAuth({}, { K8S_AUTH_VERIFY_SSL: 'False' }).validateCerts).toBe(false);
    expect(resolveAuth({}, { K8S_AUTH_VERIFY_SSL: '0' }).validateCerts).toBe(false);
    expect(resolveAuth({}, { K8S_AUTH_VERIFY_SSL: 'off' }).validateCerts).toBe(true);
    expect(resolveAuth({}, { K8S_AUTH_HOST: '', K8S_AUTH_CONTEXT: '' })).toEqual({});
  });

  it('splits K8S_AUTH_IMPERSONATE_GROUPS and a string argument on commas', () => {
    expect(resolveAuth({}, { K8S_AUTH_IMPERSONATE_GROUPS: 'a,b,,c' }).impersonateGroups).toEqual(['a', 'b', 'c']);
    expect(resolveAuth({ impersonate_groups: 'x,y' }, {}).impersonateGroups).toEqual(['x', 'y']);
    expect(resolveAuth({ impersonate_groups: ['z'] }, { K8S_AUTH_IMPERSONATE_GROUPS: 'a' }).impersonateGroups).toEqual(['z']);
  });

  it('names the secrets: api_key, password and the credentials of an inline kubeconfig', () => {
    const auth = resolveAuth({ password: 'pw', kubeconfig: { users: [{ name: 'u', user: { token: 'inline-token', 'client-key-data': 'S0VZ' } }] } }, { K8S_AUTH_API_KEY: 'env-token' });
    expect(authSecrets(auth).sort()).toEqual(['S0VZ', 'env-token', 'inline-token', 'pw']);
  });
});

describe('planConnection', () => {
  it('uses the task cluster when nothing is set', () => {
    expect(planConnection(resolveAuth({}, {}), task, find)).toEqual({ kind: 'task' });
  });

  it('uses a kubeconfig file as it is, with its current context or the given one', () => {
    expect(planConnection(resolveAuth({}, { K8S_AUTH_KUBECONFIG: 'config' }), task, find)).toEqual({ kind: 'kubeconfig', kubeconfig, context: 'one' });
    expect(planConnection(resolveAuth({ kubeconfig: 'config', context: 'two' }, {}), task, find)).toEqual({ kind: 'kubeconfig', kubeconfig, context: 'two' });
    // a context alone: a context of the task cluster's kubeconfig
    expect(planConnection(resolveAuth({ context: 'one' }, {}), task, find)).toEqual({ kind: 'kubeconfig', kubeconfig, context: 'one' });
  });

  it('builds a kubeconfig from host + api_key without reading any kubeconfig', () => {
    const plan = planConnection(resolveAuth({ host: 'https://api.example:6443/', api_key: 'secret', validate_certs: false }, { K8S_AUTH_KUBECONFIG: '/nonexistent' }), task, find);
    expect(plan).toEqual({
      kind: 'built',
      config: expect.objectContaining({
        'current-context': 'kplay',
        clusters: [{ name: 'kplay', cluster: { server: 'https://api.example:6443', 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'kplay', user: { token: 'secret' } }],
      }) as unknown,
    });
  });

  it('applies overrides to the selected context, with its relative files made absolute', () => {
    const plan = planConnection(resolveAuth({ context: 'one', impersonate_user: 'alice', impersonate_groups: ['g1', 'g2'] }, { K8S_AUTH_HOST: 'https://other.example' }), task, find);
    expect(plan).toEqual({
      kind: 'built',
      config: expect.objectContaining({
        clusters: [{ name: 'kplay', cluster: { server: 'https://other.example', 'certificate-authority': path.join(dir, 'ca.pem') } }],
        users: [{ name: 'kplay', user: { token: 'tok-one', as: 'alice', 'as-groups': ['g1', 'g2'] } }],
        contexts: [{ name: 'kplay', context: { cluster: 'kplay', user: 'kplay', namespace: 'team' } }],
      }) as unknown,
    });
  });

  it('overrides the task cluster itself when only overrides are set (validate_certs: false drops the CA)', () => {
    const plan = planConnection(resolveAuth({ validate_certs: false }, {}), { ...task, context: 'one' }, find);
    expect(plan.kind === 'built' && plan.config.clusters).toEqual([{ name: 'kplay', cluster: { server: 'https://one.example:6443', 'insecure-skip-tls-verify': true } }]);
  });

  it('puts the proxy (K8S_AUTH_PROXY, HTTPS_PROXY) and its headers on the cluster unless no_proxy matches', () => {
    const cluster = (auth: Parameters<typeof resolveAuth>[1], args: Parameters<typeof resolveAuth>[0] = {}): unknown => {
      const plan = planConnection(resolveAuth(args, auth), { ...task, context: 'one' }, find);
      return plan.kind === 'built' ? (plan.config.clusters as { cluster: unknown }[])[0]?.cluster : plan.kind;
    };
    expect(cluster({ K8S_AUTH_PROXY: 'http://proxy:3128' }, { proxy_headers: { proxy_basic_auth: 'u:p', user_agent: 'ua' } })).toMatchObject({ 'proxy-url': 'http://proxy:3128', 'kplay-proxy-headers': { 'proxy-authorization': 'Basic dTpw', 'user-agent': 'ua' } });
    expect(cluster({ K8S_AUTH_PROXY: 'http://proxy:3128', K8S_AUTH_NO_PROXY: '.example' })).not.toHaveProperty('proxy-url');
    expect(cluster({ https_proxy: 'http://low:1', HTTPS_PROXY: 'http://up:1' })).toMatchObject({ 'proxy-url': 'http://low:1' });
    expect(cluster({ HTTP_PROXY: 'http://plain:1' })).not.toHaveProperty('proxy-url'); // the server is https
    expect(cluster({ HTTPS_PROXY: 'http://up:1', NO_PROXY: 'one.example:6443' })).not.toHaveProperty('proxy-url');
    expect(cluster({ NO_PROXY: '*' })).toBe('task');
  });

  it('reads no_proxy rules as the Python client does', () => {
    expect(bypassesProxy('https://10.1.2.3:6443', '10.0.0.0/8')).toBe(true);
    expect(bypassesProxy('https://10.1.2.3:6443', '10.1.2.4')).toBe(false);
    expect(bypassesProxy('https://api.corp.example:6443', '.corp.example')).toBe(true);
    expect(bypassesProxy('https://api.corp.example:6443', 'corp.example')).toBe(true);
    expect(bypassesProxy('https://notcorp.example:6443', 'corp.example')).toBe(false);
    expect(bypassesProxy('https://[::1]:6443', '::1/128')).toBe(true);
    expect(bypassesProxy('https://h:6443', ' , *')).toBe(true);
    expect(bypassesProxy('https://h:6443', undefined)).toBe(false);
  });

  it('fails clearly for unknown contexts', () => {
    expect(() => planConnection(resolveAuth({ kubeconfig: 'config', context: 'nope', validate_certs: true }, {}), task, find)).toThrow(/no context "nope"/);
  });

  it('merges several kubeconfig files joined with ":" (first definition wins)', () => {
    const second = path.join(dir, 'second');
    writeFileSync(second, 'clusters: [{name: c9, cluster: {server: "https://nine.example"}}]\nusers: [{name: u9, user: {token: t9}}]\ncontexts: [{name: nine, context: {cluster: c9, user: u9}}, {name: one, context: {cluster: c9, user: u9}}]\n');
    const plan = planConnection(resolveAuth({ kubeconfig: `config${path.delimiter}second`, context: 'nine' }, {}), task, find);
    expect(plan.kind === 'built' && plan.config.clusters).toEqual([{ name: 'kplay', cluster: { server: 'https://nine.example' } }]);
    const first = planConnection(resolveAuth({ kubeconfig: `config${path.delimiter}second`, context: 'one' }, {}), task, find);
    expect(first.kind === 'built' && first.config.clusters).toEqual([{ name: 'kplay', cluster: { server: 'https://one.example:6443', 'certificate-authority': path.join(dir, 'ca.pem') } }]);
  });
});

// kubernetes.core's chart-download and connection arguments on kplay's helm modules:
// `plain_http`, `insecure_skip_tls_verify` (alias `skip_tls_certs_check`) on `helm`, the
// connection arguments on `helm_repository`, and the helm flags they map to (the same in helm 3.13+
// and helm 4, on every command that fetches the chart); and their results registered without `msg`.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chartArgs, downloadFlags } from '../../src/helm/cli.js';
import { registeredValue } from '../../src/executor/register.js';
import { validateArgs } from '../../src/load/schema.js';
import { resolveAction } from '../../src/playbook/names.js';
import { listFlags } from '../../src/helm/list.js';
import type { AnyModule } from '../../src/core/module.js';
import { repoRoot } from '../helpers/cli.js';

async function mod(name: string): Promise<AnyModule> {
  return ((await import(path.join(repoRoot, 'modules', `${name}.ts`))) as { default: AnyModule }).default;
}

describe('chart download flags', () => {
  it('maps each setting to its helm flag, in a fixed order, and nothing when unset', () => {
    expect(downloadFlags(undefined)).toEqual([]);
    expect(downloadFlags({})).toEqual([]);
    expect(downloadFlags({ insecureSkipTlsVerify: false, plainHttp: false, passCredentials: false })).toEqual([]);
    expect(downloadFlags({ plainHttp: true, insecureSkipTlsVerify: true })).toEqual(['--insecure-skip-tls-verify', '--plain-http']);
    expect(downloadFlags({ passCredentials: true, caFile: '/ca.pem', certFile: '/c.pem', keyFile: '/k.pem' })).toEqual(['--pass-credentials', '--ca-file', '/ca.pem', '--cert-file', '/c.pem', '--key-file', '/k.pem']);
  });

  it('are part of the chart arguments every chart-fetching helm command gets', () => {
    expect(chartArgs({ chart: 'oci://reg:5000/charts/app', version: '1.2.3', download: { plainHttp: true } })).toEqual(['oci://reg:5000/charts/app', '--version', '1.2.3', '--plain-http']);
    expect(chartArgs({ chart: 'app', repoUrl: 'https://charts.example', download: { insecureSkipTlsVerify: true } })).toEqual(['app', '--repo', 'https://charts.example', '--insecure-skip-tls-verify']);
    expect(chartArgs({ chart: '/charts/app' })).toEqual(['/charts/app']);
  });
});

describe('helm module arguments', () => {
  it('accepts plain_http and insecure_skip_tls_verify (and its alias), with kubernetes.core defaults', async () => {
    const helm = await mod('helm');
    const base = { name: 'web', chart_ref: 'oci://reg/app', release_namespace: 'web' };
    const r = validateArgs(helm.schema, { ...base, plain_http: true, skip_tls_certs_check: true }, { defaults: true });
    expect(r).toMatchObject({ ok: true, value: { plain_http: true, skip_tls_certs_check: true } });
    const d = validateArgs(helm.schema, base, { defaults: true });
    expect(d).toMatchObject({ ok: true, value: { plain_http: false } });
    expect(d.ok && (d.value as Record<string, unknown>).insecure_skip_tls_verify).toBeUndefined();
    expect(validateArgs(helm.schema, { ...base, plain_http: 'sometimes' }, { defaults: true }).ok).toBe(false);
  });

  it('helm_repository takes kubernetes.core connection arguments (module_defaults for group/k8s fill them in)', async () => {
    const repo = await mod('helm_repository');
    const r = validateArgs(repo.schema, { name: 'r', repo_url: 'https://charts.example', kubeconfig: '~/.kube/config', context: 'prod', validate_certs: false, pass_credentials: true, insecure_skip_tls_verify: true }, { defaults: true });
    expect(r).toMatchObject({ ok: true, value: { kubeconfig: '~/.kube/config', context: 'prod', pass_credentials: true, insecure_skip_tls_verify: true } });
  });

  it('helm_template keeps plain_http and insecure_registry', async () => {
    const tpl = await mod('helm_template');
    expect(validateArgs(tpl.schema, { chart_ref: 'oci://reg/app', plain_http: true, insecure_registry: true }, { defaults: true })).toMatchObject({ ok: true, value: { plain_http: true, insecure_registry: true } });
  });
});

describe('registered msg', () => {
  it('registerMsg: false keeps msg out of the registered value (kubernetes.core helm results have none), not out of failures', () => {
    expect(registeredValue({ status: 'changed', msg: 'installed ns/web', registerMsg: false, data: { status: null } })).toEqual({ status: null, changed: true, failed: false });
    expect(registeredValue({ status: 'ok', msg: 'up to date', registerMsg: false })).toEqual({ changed: false, failed: false });
    expect(registeredValue({ status: 'ok', msg: 'up to date' })).toEqual({ changed: false, failed: false, msg: 'up to date' });
    expect(registeredValue({ status: 'failed', msg: 'boom' })).toEqual({ changed: false, failed: true, msg: 'boom' });
  });
});

describe("kubernetes.core's other helm modules", () => {
  it('helm_plugin, helm_plugin_info, helm_pull and helm_registry_auth are refused with the reason and what to do instead', () => {
    const known = (short: string): boolean => ['helm', 'helm_info', 'helm_repository', 'helm_template', 'command'].includes(short);
    for (const [name, why, hint] of [
      ['helm_plugin', /installs helm plugins/, /helm plugin install/],
      ['helm_plugin_info', /lists the controller's helm plugins/, /helm plugin list/],
      ['helm_pull', /downloads a chart archive/, /chart_ref takes repo\/chart/],
      ['helm_registry_auth', /OCI registry/, /helm registry login/],
    ] as const) {
      for (const key of [`kubernetes.core.${name}`, name]) {
        const r = resolveAction(key, known);
        expect(r.kind, key).toBe('unsupported');
        if (r.kind !== 'unsupported') continue;
        expect(r.why).toMatch(new RegExp(`kubernetes\\.core\\.${name} is not supported by kplay: `));
        expect(r.why).toMatch(why);
        expect(r.hint).toMatch(hint);
      }
    }
  });
});

describe('helm list state flags', () => {
  it('all is --all on helm 3 and every state on helm 4 (which has no --all)', () => {
    expect(listFlags(['all'], 3)).toEqual(['--all']);
    expect(listFlags(['all'], 4)).toEqual(['--deployed', '--failed', '--pending', '--superseded', '--uninstalled', '--uninstalling']);
    expect(listFlags(['superseded', 'all'], 4)).toEqual(['--superseded', '--deployed', '--failed', '--pending', '--uninstalled', '--uninstalling']);
    expect(listFlags(['deployed', 'failed'], 4)).toEqual(['--deployed', '--failed']);
    expect(listFlags([], 4)).toEqual([]);
  });
});

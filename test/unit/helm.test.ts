/** Pure unit tests of src/helm: values building, version/flag selection, JSON parsing, stderr trimming, temp files. */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, onTestFinished, expect, it } from 'vitest';
import YAML from 'yaml';
import { HelmCli, withValuesFile } from '../../src/helm/cli.js';
import { HelmError, isReleaseNotFound, trimHelmStderr } from '../../src/helm/errors.js';
import { isHook, parseRendered, removedObjects, withHelmOwnership } from '../../src/helm/manifests.js';
import { lastGoodRevision, parseChartYaml, parseHelmJson, parseHistory, parseMetadata, parseReleaseInfo, parseValues } from '../../src/helm/release.js';
import { changedValueKeys, isSecretKey, maskSecretValues, mergeValues, parseKeyPath, secretValues, valuesEqual, valuesFromSet } from '../../src/helm/values.js';
import { parseHelmVersion, serverChecksFields, templateFlags, unsupportedReason, upgradeFlags, waitFlags } from '../../src/helm/version.js';
import { mayRenderLists, readLocalChart } from '../../src/helm/chart.js';
import { at } from '../helpers/cli.js';

describe('values from set (dotted key paths)', () => {
  it('parses key paths with indices and escaped dots', () => {
    expect(parseKeyPath('image.tag')).toEqual(['image', 'tag']);
    expect(parseKeyPath('env[1].value')).toEqual(['env', 1, 'value']);
    expect(parseKeyPath('podAnnotations.prometheus\\.io/scrape')).toEqual(['podAnnotations', 'prometheus.io/scrape']);
    expect(parseKeyPath('a[0][1]')).toEqual(['a', 0, 1]);
    for (const bad of ['', 'a..b', '.a', 'a.', '[0]', 'a[x]', 'a[1', 'a[0]b']) expect(() => parseKeyPath(bad), bad).toThrow(/invalid key path/);
  });

  it('builds a tree, keeps value types, later keys win', () => {
    expect(valuesFromSet({ 'image.tag': '6.14.1', replicaCount: 3, 'image.pullPolicy': 'Always', 'flags.enabled': true })).toEqual({
      image: { tag: '6.14.1', pullPolicy: 'Always' },
      replicaCount: 3,
      flags: { enabled: true },
    });
    expect(valuesFromSet({ 'env[1].name': 'B', 'env[0].name': 'A' })).toEqual({ env: [{ name: 'A' }, { name: 'B' }] });
    expect(valuesFromSet({ a: 1, 'a.b': 2 })).toEqual({ a: { b: 2 } });
    expect(valuesFromSet({ 'x.list': [1, 2] })).toEqual({ x: { list: [1, 2] } });
  });

  it('merges like helm -f: maps deep, everything else replaced, null kept', () => {
    const base = { a: { b: 1, c: [1, 2] }, d: 'x', e: { f: 1 } };
    const over = { a: { c: [3] }, d: null, g: 1 };
    expect(mergeValues(base, over)).toEqual({ a: { b: 1, c: [3] }, d: null, e: { f: 1 }, g: 1 });
    expect(base.a.c).toEqual([1, 2]); // inputs untouched
  });

  it('compares values ignoring key order and lists changed keys', () => {
    expect(valuesEqual({ a: 1, b: { c: 2, d: 3 } }, { b: { d: 3, c: 2 }, a: 1 })).toBe(true);
    expect(valuesEqual({ a: 1 }, { a: '1' })).toBe(false);
    expect(valuesEqual({}, { a: {} })).toBe(false);
    expect(changedValueKeys({ replicaCount: 1, image: { tag: 'a', repo: 'r' }, gone: 1 }, { replicaCount: 2, image: { tag: 'b', repo: 'r' }, added: { x: 1 } })).toEqual([
      'added',
      'gone',
      'image.tag',
      'replicaCount',
    ]);
    expect(changedValueKeys({ 'a.b': 1 }, { 'a.b': 2 })).toEqual(['a\\.b']);
  });
});

describe('secret values', () => {
  it('recognises secret-looking keys, not plain `key`', () => {
    for (const k of ['password', 'adminPassword', 'token', 'apiToken', 'secret', 'clientSecret', 'apiKey', 'accessKey', 'secret_key', 'private-key', 'credentials'.slice(0, -1)]) {
      expect(isSecretKey(k), k).toBe(true);
    }
    for (const k of ['key', 'name', 'secretName', 'replicaCount', 'monkey', 'tag']) expect(isSecretKey(k), k).toBe(false);
  });

  it('collects and masks values under secret keys at any depth', () => {
    const v = { db: { password: 'hunter22', host: 'db' }, auth: { token: { value: 'tok-123', other: 42 } }, list: [{ apiKey: 'k-1' }], plain: 'x' };
    expect(secretValues(v).sort()).toEqual(['42', 'hunter22', 'k-1', 'tok-123']);
    expect(secretValues({ extraEnvs: [{ name: 'API_TOKEN', value: 'env-tok' }, { name: 'LOG', value: 'debug' }] })).toEqual(['env-tok']);
    expect(maskSecretValues({ env: [{ name: 'DB_PASSWORD', value: 'x1' }] })).toEqual({ env: [{ name: 'DB_PASSWORD', value: '********' }] });
    expect(maskSecretValues({ db: { password: 'new', user: 'u' }, token: 'same' }, { db: { password: 'old' }, token: 'same' })).toEqual({ db: { password: '******** (changed)', user: 'u' }, token: '********' });
    expect(maskSecretValues(v)).toEqual({ db: { password: '********', host: 'db' }, auth: { token: { value: '********', other: '********' } }, list: [{ apiKey: '********' }], plain: 'x' });
  });
});

describe('helm version and flags', () => {
  it('parses versions and rejects old or unknown helm', () => {
    expect(parseHelmVersion('v4.1.4')).toMatchObject({ major: 4, minor: 1, patch: 4 });
    expect(parseHelmVersion('v3.14.2+g1234\n')).toMatchObject({ major: 3, minor: 14, patch: 2 });
    expect(() => parseHelmVersion('Client: &version.Version')).toThrow(/cannot parse/);
    expect(unsupportedReason(parseHelmVersion('v3.13.3'))).toMatch(/too old.*3\.14/);
    expect(unsupportedReason(parseHelmVersion('v3.14.0'))).toBeUndefined();
    expect(unsupportedReason(parseHelmVersion('v4.0.0'))).toBeUndefined();
    expect(unsupportedReason(parseHelmVersion('v5.0.0'))).toMatch(/not supported/);
  });

  const all = { wait: true, timeout: 90, atomic: true, force: true, skipCrds: true, dependencyUpdate: true, createNamespace: true };
  it('uses helm 4 flags for helm 4', () => {
    const f = upgradeFlags(4, all);
    expect(f).toEqual(expect.arrayContaining(['--install', '--reset-values', '--create-namespace', '--wait=watcher', '--timeout', '90s', '--rollback-on-failure', '--force-replace', '--force-conflicts', '--skip-crds', '--dependency-update']));
    expect(f).not.toContain('--atomic');
    expect(f).not.toContain('--force');
    expect(templateFlags(4, { isUpgrade: true, skipCrds: false, dependencyUpdate: false })).toEqual(['--dry-run=server', '--skip-tests', '--is-upgrade']);
    expect(waitFlags(4, true, 10)).toEqual(['--wait=watcher', '--timeout', '10s']);
  });

  it('uses helm 3 flags for helm 3', () => {
    const f = upgradeFlags(3, all);
    expect(f).toEqual(expect.arrayContaining(['--wait', '--atomic', '--force']));
    expect(f.some((x) => x.startsWith('--wait='))).toBe(false);
    expect(f).not.toContain('--rollback-on-failure');
    expect(f).not.toContain('--force-conflicts');
    expect(templateFlags(3, { isUpgrade: false, skipCrds: true, dependencyUpdate: false })).toEqual(['--validate', '--skip-tests', '--skip-crds']);
    expect(upgradeFlags(3, { ...all, wait: false, atomic: false, force: false, createNamespace: false, skipCrds: false, dependencyUpdate: false })).toEqual(['--install', '--reset-values', '--timeout', '90s']);
  });
});

describe("helm's client-side OpenAPI check", () => {
  const facts = { helmMajor: 4, serverVersion: 'v1.34.4', applyMethod: 'install', mayRenderLists: false };
  it('is skipped only where the server checks the same fields (helm 4, Kubernetes >= 1.27, server-side apply, no List)', () => {
    expect(serverChecksFields(facts)).toBe(true);
    expect(serverChecksFields({ ...facts, applyMethod: 'ssa' })).toBe(true);
    expect(serverChecksFields({ ...facts, serverVersion: 'v1.27.3-gke.1001' })).toBe(true);
    expect(serverChecksFields({ ...facts, serverVersion: '2.0.0' })).toBe(true);
    // helm 3 (its own validator), a release applied client-side (no fieldValidation=Strict), old or unknown servers, Lists.
    expect(serverChecksFields({ ...facts, helmMajor: 3 })).toBe(false);
    expect(serverChecksFields({ ...facts, applyMethod: 'csa' })).toBe(false);
    expect(serverChecksFields({ ...facts, applyMethod: '' })).toBe(false);
    expect(serverChecksFields({ ...facts, serverVersion: 'v1.26.15' })).toBe(false);
    expect(serverChecksFields({ ...facts, serverVersion: '' })).toBe(false);
    expect(serverChecksFields({ ...facts, mayRenderLists: true })).toBe(false);
    const base = { wait: false, atomic: false, force: false, skipCrds: false, dependencyUpdate: false, createNamespace: false };
    expect(upgradeFlags(4, { ...base, skipClientCheck: true })).toContain('--disable-openapi-validation');
    expect(upgradeFlags(4, base)).not.toContain('--disable-openapi-validation');
    // helm 4 refuses --force-conflicts on a client-side upgrade (a release stored as csa or by helm 3).
    expect(upgradeFlags(4, base)).toContain('--force-conflicts');
    expect(upgradeFlags(4, { ...base, clientSideApply: true })).not.toContain('--force-conflicts');
  });

  it('knows when a chart may render a List: list or templated kinds in any file or value, lookup, packed subcharts', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-lists-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const put = (rel: string, text: string): void => {
      mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      writeFileSync(path.join(dir, rel), text);
    };
    put('Chart.yaml', 'apiVersion: v2\nname: l\nversion: 0.1.0\n');
    put('values.yaml', 'extraObjects: []\n');
    put('templates/cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n');
    put('README.md', 'A chart. It renders a ConfigMap.\n');
    const chart = await readLocalChart(dir);
    expect(mayRenderLists(chart, {})).toBe(false);
    expect(mayRenderLists(chart, { extraObjects: [{ apiVersion: 'v1', kind: 'List', items: [] }] })).toBe(true);
    expect(mayRenderLists(chart, { extra: { kind: '{{ .Values.k }}' } })).toBe(true);
    expect(mayRenderLists({ ...chart, values: { x: [{ kind: 'ConfigMapList' }] } }, {})).toBe(true);
    const cases: [string, string][] = [
      ['templates/list.yaml', 'apiVersion: v1\nkind: List\nitems: []\n'],
      ['templates/quoted.yaml', 'apiVersion: v1\nkind: "ConfigMapList"\n'],
      ['templates/templated.yaml', 'apiVersion: apps/v1\nkind: {{ .Values.workload }}\n'],
      ['files/objects.json', '{"apiVersion": "v1", "kind": "List", "items": []}'],
      ['templates/lookup.yaml', '{{- $s := lookup "v1" "Secret" .Release.Namespace "" }}\n'],
      ['charts/dep-1.0.0.tgz', 'binary'],
      ['charts/dep/templates/l.yaml', 'kind:   List\n'],
    ];
    for (const [rel, text] of cases) {
      put(rel, text);
      expect(mayRenderLists(await readLocalChart(dir), {}), rel).toBe(true);
      rmSync(path.join(dir, rel));
    }
    expect(mayRenderLists(await readLocalChart(dir), {})).toBe(false);
  });
});

describe('helm JSON outputs', () => {
  const status = {
    name: 'web',
    info: { status: 'pending-upgrade', description: 'Preparing upgrade' },
    chart: { metadata: { name: 'podinfo', version: '6.14.1', appVersion: '6.14.1' } },
    config: { replicaCount: 2 },
    manifest: '---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n',
    version: 7,
    namespace: 'apps',
  };
  it('parses status, metadata, values, history', () => {
    expect(parseReleaseInfo(parseHelmJson(JSON.stringify(status), 'x'))).toEqual({
      name: 'web', namespace: 'apps', revision: 7, status: 'pending-upgrade', description: 'Preparing upgrade', chart: 'podinfo', chartVersion: '6.14.1', appVersion: '6.14.1', manifest: status.manifest, config: { replicaCount: 2 }, applyMethod: '',
    });
    expect(parseReleaseInfo({ ...status, apply_method: 'ssa' }).applyMethod).toBe('ssa');
    expect(parseMetadata({ name: 'web', chart: 'podinfo', version: '6.13.0', appVersion: '6.13.0', namespace: 'apps', revision: 3, status: 'deployed' })).toMatchObject({ chart: 'podinfo', version: '6.13.0', revision: 3 });
    expect(parseValues(parseHelmJson('null\n', 'v'))).toEqual({});
    expect(parseValues({ a: 1 })).toEqual({ a: 1 });
    expect(() => parseValues([1])).toThrow(/expected a map/);
    expect(() => parseHelmJson('Error: nope', 'helm status')).toThrow(/helm status: helm printed no JSON/);
    expect(parseHelmJson('WARNING: something\n{"a":1}', 'x')).toEqual({ a: 1 });
    const hist = parseHistory([
      { revision: 3, status: 'pending-upgrade', chart: 'podinfo-6.14.1', app_version: '6.14.1', description: 'Preparing upgrade' },
      { revision: 1, status: 'superseded', chart: 'podinfo-6.13.0', app_version: '6.13.0', description: 'Install complete' },
      { revision: 2, status: 'deployed', chart: 'podinfo-6.13.0', app_version: '6.13.0', description: 'Upgrade complete' },
    ]);
    expect(hist.map((h) => h.revision)).toEqual([1, 2, 3]);
    expect(lastGoodRevision(hist, 3)).toBe(2);
    expect(lastGoodRevision([{ revision: 1, status: 'pending-install', chart: '', appVersion: '', description: '' }], 1)).toBeUndefined();
    expect(lastGoodRevision([...hist, { revision: 4, status: 'failed', chart: '', appVersion: '', description: '' }, { revision: 5, status: 'pending-rollback', chart: '', appVersion: '', description: '' }], 5)).toBe(2);
    expect(parseChartYaml('apiVersion: v2\nname: podinfo\nversion: 6.14.1\nappVersion: 6.14.1\n')).toEqual({ name: 'podinfo', version: '6.14.1', appVersion: '6.14.1' });
    expect(() => parseChartYaml('name: x\n')).toThrow(/no name or version/);
  });

  it('parses rendered manifests, drops hooks, adds helm ownership, finds removed objects', () => {
    const text = [
      '---',
      '# Source: c/templates/svc.yaml',
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n',
      '---',
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-test\n  annotations:\n    "helm.sh/hook": test\n',
      '---',
      '',
      '---',
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: apps\n',
    ].join('\n');
    const objs = parseRendered(text);
    expect(objs.map((o) => o.kind)).toEqual(['Service', 'Deployment']);
    expect(parseRendered(text, true).some(isHook)).toBe(true);
    const owned = withHelmOwnership(at(objs, 0), 'web', 'apps');
    expect(owned.metadata.annotations).toEqual({ 'meta.helm.sh/release-name': 'web', 'meta.helm.sh/release-namespace': 'apps' });
    expect(owned.metadata.labels).toEqual({ 'app.kubernetes.io/managed-by': 'Helm' });
    expect(removedObjects(objs, [at(objs, 1)], 'apps').map((o) => o.kind)).toEqual(['Service']);
    expect(removedObjects([{ ...at(objs, 0), metadata: { name: 'web', namespace: 'apps' } }], [at(objs, 0)], 'apps')).toEqual([]);
    expect(() => parseRendered('apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n')).toThrow(/metadata.name/);
  });
});

describe('helm stderr', () => {
  it('keeps the Error lines, drops log noise, masks secrets', () => {
    const stderr = [
      'level=WARN msg="upgrade failed" name=exp error="conflict"',
      'Error: UPGRADE FAILED: values contain s3cr3t-value: bad',
      '  at line 3',
      'level=DEBUG msg="x"',
      '',
    ].join('\n');
    expect(trimHelmStderr(stderr, (s) => s.replaceAll('s3cr3t-value', '********'))).toBe('Error: UPGRADE FAILED: values contain ********: bad\n  at line 3');
    expect(trimHelmStderr('a\nb\nc\nd\ne\nf\ng\n')).toBe('c\nd\ne\nf\ng');
    expect(trimHelmStderr('level=WARN msg="only noise"\n')).toBe('level=WARN msg="only noise"');
    const long = `Error: x\n${Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n')}`;
    expect(trimHelmStderr(long).split('\n')).toHaveLength(13);
    expect(isReleaseNotFound('Error: release: not found\n')).toBe(true);
    expect(isReleaseNotFound('Error: uninstall: Release not loaded: web: release: not found')).toBe(true);
    expect(isReleaseNotFound('Error: failed to download "repo/x"')).toBe(false);
    expect(isReleaseNotFound('Error: kubernetes cluster unreachable: context "x" not found')).toBe(false);
    expect(new HelmError('helm upgrade web', 'Error: boom', 1).message).toBe('helm upgrade web failed (exit 1): Error: boom');
    expect(new HelmError('helm version', 'helm not found on PATH; install helm ≥ 3.14 or set helm_binary / KPLAY_HELM', null).message).toMatch(/^helm not found on PATH/);
  });
});

describe('HelmCli processes', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-helm-unit-'));
  /** A fake helm: prints a version, records its argv and the values file it got (and that file's mode). */
  const fake = path.join(dir, 'helm');
  writeFileSync(
    fake,
    [
      '#!/bin/sh',
      `echo "$@" >> ${dir}/argv`,
      'if [ "$1" = version ]; then echo "${FAKE_VERSION:-v4.1.4}"; exit 0; fi',
      'while [ $# -gt 0 ]; do if [ "$1" = -f ]; then cp "$2" ' + dir + '/values-copy; stat -c %a "$2" > ' + dir + '/values-mode; echo "$2" > ' + dir + '/values-path; fi; shift; done',
      'if [ -n "$FAKE_SLEEP" ]; then trap "echo term >> ' + dir + '/signals; sleep 0.3; exit 1" TERM; sleep 5 >/dev/null 2>&1 & wait $!; fi',
      'echo "Error: release: not found" >&2; exit 1',
      '',
    ].join('\n'),
  );
  chmodSync(fake, 0o755);

  it('detects the version and reports a missing or old helm clearly', async () => {
    expect((await HelmCli.detectVersion({ binary: fake })).major).toBe(4);
    await expect(HelmCli.detectVersion({ binary: path.join(dir, 'nope') })).rejects.toThrow(/helm not found at .*install helm ≥ 3.14 or set helm_binary \/ KPLAY_HELM/);
    await expect(HelmCli.detectVersion({ binary: fake, env: { ...process.env, FAKE_VERSION: 'v3.12.0' } })).rejects.toThrow(/too old/);
  });

  it('passes values only in a 0600 temp file that is removed afterwards, and the cluster flags', async () => {
    const helm = await HelmCli.detect({ binary: fake, target: { kubeContext: 'ctx-1', kubeconfig: '/k/config' } });
    const values = { db: { password: 'pw-canary-1' }, replicaCount: 2 };
    await expect(helm.upgradeInstall('web', 'apps', { chart: '/charts/podinfo' }, values, { wait: true, atomic: false, force: false, skipCrds: false, dependencyUpdate: false, createNamespace: false })).rejects.toThrow(HelmError);
    const argv = readFileSync(path.join(dir, 'argv'), 'utf8');
    expect(argv).not.toContain('pw-canary-1');
    expect(argv).toMatch(/upgrade web \/charts\/podinfo -n apps --install --reset-values --wait=watcher --force-conflicts -o json -f \S+ --kube-context ctx-1 --kubeconfig \/k\/config/);
    expect(YAML.parse(readFileSync(path.join(dir, 'values-copy'), 'utf8'))).toEqual(values);
    expect(readFileSync(path.join(dir, 'values-mode'), 'utf8').trim()).toBe('600');
    const used = readFileSync(path.join(dir, 'values-path'), 'utf8').trim();
    expect(existsSync(used)).toBe(false);
    expect(existsSync(path.dirname(used))).toBe(false);
    expect(await helm.status('web', 'apps')).toBeUndefined();
  });

  it('removes the values file when the callback throws', async () => {
    let seen = '';
    await expect(withValuesFile({ a: 1 }, (f) => {
      seen = f;
      expect(statSync(path.dirname(f)).mode & 0o777).toBe(0o700);
      throw new Error('boom');
    })).rejects.toThrow('boom');
    expect(existsSync(seen)).toBe(false);
  });

  it('on abort sends SIGTERM and waits for helm to exit', async () => {
    const helm = await HelmCli.detect({ binary: fake, target: {}, env: { ...process.env, FAKE_SLEEP: '1' } });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const started = Date.now();
    const err = await helm.upgradeInstall('web', 'apps', { chart: 'c' }, {}, { wait: false, atomic: false, force: false, skipCrds: false, dependencyUpdate: false, createNamespace: false }, { signal: ac.signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HelmError);
    expect((err as HelmError).interrupted).toBe(true);
    // it waited for the trap handler (0.3 s after SIGTERM) instead of returning at once
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(550);
    expect(took).toBeLessThan(4000);
    expect(readFileSync(path.join(dir, 'signals'), 'utf8')).toContain('term');
  });
});

describe('helm_release module (no cluster needed)', () => {
  it('fails clearly when helm is missing, masks secrets in the message, rejects bad set keys and missing charts', async () => {
    const { default: mod } = await import('../../modules/helm_release.js');
    const { makeCtx, runModule } = await import('../helpers/ctx.js');
    // A storage driver kplay cannot read itself (sql): releases are read with helm, no cluster needed.
    const driver = process.env.HELM_DRIVER;
    process.env.HELM_DRIVER = 'sql';
    onTestFinished(() => {
      if (driver === undefined) delete process.env.HELM_DRIVER;
      else process.env.HELM_DRIVER = driver;
    });
    const ctx = makeCtx({ cluster: { name: 'c1', context: 'c1' } });
    const missing = await runModule(mod, { name: 'web', state: 'absent', helm_binary: '/nonexistent/helm', values: { db: { password: 'pw-unit-canary' } } }, ctx);
    expect(missing).toMatchObject({ status: 'failed', msg: "helm not found at '/nonexistent/helm'; install helm ≥ 3.14 or set helm_binary / KPLAY_HELM" });
    expect(ctx.mask('x pw-unit-canary y')).toBe('x ******** y'); // registered before anything ran

    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-helm-mod-'));
    const fakeHelm = path.join(dir, 'helm');
    writeFileSync(fakeHelm, '#!/bin/sh\nif [ "$1" = version ]; then echo v3.14.4; exit 0; fi\necho "Error: release: not found" >&2; exit 1\n');
    chmodSync(fakeHelm, 0o755);
    const ctx2 = makeCtx({ cluster: { name: 'c1', context: 'c1' }, baseDir: dir });
    // helm runs against the task client's connection: a client double without a resolved context (no cluster here)
    void ctx2.adapter('k8s', () => Promise.resolve({ name: 'c1' }));
    expect(await runModule(mod, { name: 'web', helm_binary: fakeHelm }, ctx2)).toMatchObject({ status: 'failed', msg: expect.stringMatching(/'chart' is required/) });
    expect(await runModule(mod, { name: 'web', chart: './nope', helm_binary: fakeHelm }, ctx2)).toMatchObject({ status: 'failed', msg: expect.stringMatching(/chart \.\/nope not found/) });
    expect(await runModule(mod, { name: 'web', chart: dir, helm_binary: fakeHelm, set: { 'a..b': 1 } }, ctx2)).toMatchObject({ status: 'failed', msg: expect.stringMatching(/set: invalid key path 'a\.\.b'/) });
    // absent + no release: ok without touching anything else
    expect(await runModule(mod, { name: 'web', state: 'absent', helm_binary: fakeHelm }, ctx2)).toMatchObject({ status: 'ok', msg: 'release default/web is not installed' });
  });
});

// helm's release records (Secret / ConfigMap) decoded without helm, and local charts compared with
// the chart a release stored. Records here are built the way helm writes them
// (JSON → gzip → base64, and base64 once more inside a Secret's data).
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { chartDifferences, localCrdFiles, readLocalChart } from '../../src/helm/chart.js';
import { parseRecord, readStoredRelease, recordRevision, storageKind } from '../../src/helm/storage.js';
import type { KubeClient, KubeObject } from '../../src/k8s/types.js';
import { repoRoot } from '../helpers/cli.js';

const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64');

function releaseJson(o: { name: string; version: number; status: string; chart: { name: string; version: string; appVersion?: string }; templates?: { name: string; data: string }[]; values?: unknown; files?: unknown; config?: unknown; manifest?: string; schema?: string }): string {
  return JSON.stringify({
    name: o.name,
    namespace: 'web',
    version: o.version,
    info: { status: o.status, description: 'Install complete' },
    chart: { metadata: { name: o.chart.name, version: o.chart.version, appVersion: o.chart.appVersion ?? '' }, templates: o.templates ?? [], values: o.values ?? {}, files: o.files ?? null, ...(o.schema ? { schema: o.schema } : {}) },
    config: o.config ?? null,
    manifest: o.manifest ?? '',
  });
}

function secretRecord(json: string, revision: number, name = 'web'): KubeObject {
  const helmEncoded = b64(gzipSync(json));
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: `sh.helm.release.v1.${name}.v${revision}`, labels: { owner: 'helm', name, version: String(revision) } }, type: 'helm.sh/release.v1', data: { release: b64(helmEncoded) } };
}

describe('helm release storage records', () => {
  it('decodes a Secret record (double base64 + gzip) and a ConfigMap record (single base64)', () => {
    const json = releaseJson({ name: 'web', version: 3, status: 'deployed', chart: { name: 'webapp', version: '1.1.0', appVersion: '1.1.0' }, config: { replicaCount: 2 }, manifest: '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n', templates: [{ name: 'templates/cm.yaml', data: b64('x') }] });
    const r = parseRecord(secretRecord(json, 3));
    expect(r).toMatchObject({ name: 'web', revision: 3, status: 'deployed', chart: 'webapp', chartVersion: '1.1.0', config: { replicaCount: 2 } });
    expect(r.manifest).toContain('kind: ConfigMap');
    expect(r.storedChart.templates).toEqual([{ name: 'templates/cm.yaml', data: b64('x') }]);
    expect(r.storedChart.files).toEqual([]); // helm writes null when a chart has no extra files
    const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'sh.helm.release.v1.web.v3' }, data: { release: b64(gzipSync(json)) } };
    expect(parseRecord(cm).revision).toBe(3);
    // config null (no user values) is {}
    expect(parseRecord(secretRecord(releaseJson({ name: 'web', version: 1, status: 'deployed', chart: { name: 'c', version: '1' } }), 1)).config).toEqual({});
  });

  it('a record without release data is a clear error', () => {
    expect(() => parseRecord({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sh.helm.release.v1.web.v1' }, data: {} })).toThrow(/sh\.helm\.release\.v1\.web\.v1 has no release data/);
  });

  it('reads the newest revision with one LIST, ignoring other releases and uninstalled ones', async () => {
    const records = [1, 2, 10, 9].map((v) => secretRecord(releaseJson({ name: 'web', version: v, status: v === 10 ? 'deployed' : 'superseded', chart: { name: 'c', version: `1.0.${v}` } }), v));
    records.push(secretRecord(releaseJson({ name: 'web-two', version: 99, status: 'deployed', chart: { name: 'c', version: '9' } }), 99, 'web-two'));
    const calls: string[] = [];
    const client = {
      list: (_apiVersion: string, kind: string, opts: { namespace?: string; labelSelector?: string }) => {
        calls.push(`${kind} ${opts.namespace} ${opts.labelSelector}`);
        return Promise.resolve({ items: records, resourceVersion: '1' });
      },
    } as unknown as KubeClient;
    const r = await readStoredRelease(client, 'Secret', 'web', 'web');
    expect(r?.revision).toBe(10);
    expect(r?.chartVersion).toBe('1.0.10');
    expect(calls).toEqual(['Secret web owner=helm,name=web']);
    const gone = { list: () => Promise.resolve({ items: [secretRecord(releaseJson({ name: 'web', version: 4, status: 'uninstalled', chart: { name: 'c', version: '1' } }), 4)], resourceVersion: '1' }) } as unknown as KubeClient;
    expect(await readStoredRelease(gone, 'Secret', 'web', 'web')).toBeUndefined();
    const none = { list: () => Promise.resolve({ items: [], resourceVersion: '1' }) } as unknown as KubeClient;
    expect(await readStoredRelease(none, 'ConfigMap', 'web', 'web')).toBeUndefined();
  });

  it('maps HELM_DRIVER to what kplay can read itself', () => {
    expect(storageKind(undefined)).toBe('Secret');
    expect(storageKind('')).toBe('Secret');
    expect(storageKind('secrets')).toBe('Secret');
    expect(storageKind('ConfigMap')).toBe('ConfigMap');
    expect(storageKind('sql')).toBeUndefined();
    expect(storageKind('memory')).toBeUndefined();
    expect(recordRevision({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sh.helm.release.v1.a.v12' } })).toBe(12);
  });
});

describe('local chart compared with the stored chart', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-chart-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  /** The chart as helm would store it for a chart without dependencies: templates and files base64, values as parsed. */
  async function storedFrom(dir: string): Promise<Parameters<typeof chartDifferences>[1]> {
    const local = await readLocalChart(dir);
    const b = (m: Map<string, Buffer>): { name: string; data: string }[] => [...m].map(([name, data]) => ({ name, data: data.toString('base64') }));
    return { name: local.name, version: local.version, appVersion: local.appVersion, templates: b(local.templates), files: b(local.files), values: local.values, ...(local.schema ? { schema: local.schema.toString('base64') } : {}) };
  }
  const copy = (from: string, name: string): string => {
    const dir = path.join(tmp, name);
    cpSync(path.join(repoRoot, from), dir, { recursive: true });
    return dir;
  };
  const noHelm = (): Promise<undefined> => {
    throw new Error('helm must not be asked');
  };

  it('the same chart has no difference; an edited template, values.yaml, schema or file does', async () => {
    const dir = copy('playbooks/charts/webapp-1.0.0', 'webapp');
    const stored = await storedFrom(dir);
    expect(await chartDifferences(await readLocalChart(dir), stored, { helmChart: noHelm })).toEqual([]);
    writeFileSync(path.join(dir, 'templates/extra.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n');
    writeFileSync(path.join(dir, 'values.yaml'), 'replicaCount: 5\n');
    writeFileSync(path.join(dir, 'values.schema.json'), '{}');
    writeFileSync(path.join(dir, 'NOTES.md'), 'new file\n');
    const diffs = await chartDifferences(await readLocalChart(dir), stored, { helmChart: noHelm });
    expect(diffs).toEqual([
      'templates changed: templates/extra.yaml (new)',
      'values.schema.json changed',
      'chart files changed: NOTES.md (new)',
      expect.stringMatching(/^chart default values \(values\.yaml\) changed: .*replicaCount/),
    ]);
  });

  it('files .helmignore excludes are not part of the chart: no "(new)" template, no changed file', async () => {
    const dir = copy('playbooks/charts/webapp-1.0.0', 'ignoring');
    writeFileSync(path.join(dir, '.helmignore'), '# tests are not shipped\ntemplates/tests/\n*.bak\n');
    const stored = await storedFrom(dir);
    mkdirSync(path.join(dir, 'templates/tests'), { recursive: true });
    writeFileSync(path.join(dir, 'templates/tests/test-connection.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: t}\n');
    writeFileSync(path.join(dir, 'values.yaml.bak'), 'old: 1\n');
    writeFileSync(path.join(dir, 'templates/.scratch.yaml'), 'not loaded by helm\n');
    const local = await readLocalChart(dir);
    expect([...local.templates.keys()]).not.toContain('templates/tests/test-connection.yaml');
    expect(await chartDifferences(local, stored, { helmChart: noHelm })).toEqual([]);
    expect(local.digest).toBe((await readLocalChart(dir)).digest);
  });

  it('with the digest kplay recorded: the same digest is the same chart (sub-charts included), another one a change', async () => {
    const dir = copy('test/fixtures/corpus/charts/umbrella', 'recorded');
    const local = await readLocalChart(dir);
    expect(local.valuesExact).toBe(false); // dependencies: helm computes the stored values
    // what helm stores differs from values.yaml (sub-chart defaults, globals): the digest decides, not the values
    const stored = { ...(await storedFrom(dir)), values: { whatever: 'helm computed' } };
    expect(await chartDifferences(local, stored, { recordedDigest: local.digest, helmChart: noHelm })).toEqual([]);
    // a sub-chart's template: helm does not store it; the digest sees it
    writeFileSync(path.join(dir, 'charts/backend/templates/deployment.yaml'), '# edited\n', { flag: 'a' });
    const edited = await readLocalChart(dir);
    expect(edited.digest).not.toBe(local.digest);
    expect(await chartDifferences(edited, stored, { recordedDigest: local.digest, helmChart: noHelm })).toEqual([expect.stringMatching(/^chart changed since kplay installed it .*sub-chart in charts\//)]);
    // a parent template is named
    writeFileSync(path.join(dir, 'templates/configmap.yaml'), '# edited\n', { flag: 'a' });
    expect(await chartDifferences(await readLocalChart(dir), stored, { recordedDigest: local.digest, helmChart: noHelm })).toEqual(['templates changed: templates/configmap.yaml']);
  });

  it('without a recorded digest, helm decides the default values of a chart with dependencies (asked once)', async () => {
    const dir = copy('test/fixtures/corpus/charts/umbrella', 'asked');
    const local = await readLocalChart(dir);
    expect(local.dependencyKeys).toEqual(['api', 'worker', 'legacy', 'common']);
    const g = { environment: 'corpus', imageRegistry: 'registry.k8s.io' };
    const helmValues = { ...local.values, api: { enabled: true, port: 8080, global: g }, worker: { enabled: true, port: 9000, global: g }, common: { global: g } };
    const stored = { ...(await storedFrom(dir)), values: helmValues };
    let asked = 0;
    const helmChart = (values: unknown) => (): Promise<typeof stored> => {
      asked++;
      return Promise.resolve({ ...stored, values: values as typeof helmValues });
    };
    expect(await chartDifferences(local, stored, { helmChart: helmChart(helmValues) })).toEqual([]);
    expect(asked).toBe(1);
    expect(await chartDifferences(local, stored, { helmChart: helmChart({ ...helmValues, replicaCount: 3 }) })).toEqual(['chart default values (values.yaml) changed: replicaCount']);
    // helm cannot be asked: a change is assumed (an upgrade records the digest)
    expect(await chartDifferences(local, stored, { helmChart: () => Promise.resolve(undefined) })).toEqual([expect.stringMatching(/may have changed/)]);
    // a template difference needs no helm
    writeFileSync(path.join(dir, 'templates/configmap.yaml'), '# edited\n', { flag: 'a' });
    expect(await chartDifferences(await readLocalChart(dir), stored, { helmChart: noHelm })).toEqual(['templates changed: templates/configmap.yaml']);
  });

  it('reads Chart.yaml string fields and values.yaml as helm does (YAML 1.1, go-yaml numbers)', async () => {
    const dir = copy('playbooks/charts/webapp-1.0.0', 'yaml11');
    writeFileSync(path.join(dir, 'Chart.yaml'), readFileSync(path.join(dir, 'Chart.yaml'), 'utf8').replace(/^appVersion: .*$/m, 'appVersion: 1.10'));
    writeFileSync(path.join(dir, 'values.yaml'), 'flag: yes\nmode: 0o17\nsince: 2024-01-31\nclock: 1:20\n');
    const local = await readLocalChart(dir);
    expect(local.appVersion).toBe('1.1'); // helm reads 1.10 as a float into a string field
    expect(local.values).toEqual({ flag: true, mode: 15, since: '2024-01-31', clock: '1:20' });
  });

  it('parallel reads of one chart share the parse, each with its own values; an edit is read again', async () => {
    const dir = copy('playbooks/charts/webapp-1.0.0', 'twice');
    const [a, b] = await Promise.all([readLocalChart(dir), readLocalChart(dir)]);
    expect(a.values).toEqual(b.values);
    a.values.replicaCount = 99;
    expect(b.values.replicaCount).not.toBe(99);
    expect((await readLocalChart(dir)).values.replicaCount).not.toBe(99);
    writeFileSync(path.join(dir, 'Chart.yaml'), readFileSync(path.join(dir, 'Chart.yaml'), 'utf8').replace(/^version: .*$/m, 'version: 9.9.9'));
    expect((await readLocalChart(dir)).version).toBe('9.9.9');
  });

  it('finds the CRD files of a chart and of its unpacked sub-charts; a packed sub-chart needs helm', async () => {
    const files = localCrdFiles(await readLocalChart(path.join(repoRoot, 'test/fixtures/corpus/charts/crds-and-crs')));
    expect(files?.map((f) => f.file)).toEqual(['crds/gadgets-cluster.yaml', 'crds/widgets.yaml']);
    const dir = copy('test/fixtures/corpus/charts/umbrella', 'crd-sub');
    mkdirSync(path.join(dir, 'charts/crds/crds'), { recursive: true });
    writeFileSync(path.join(dir, 'charts/crds/Chart.yaml'), 'apiVersion: v2\nname: crds\nversion: 0.1.0\n');
    writeFileSync(path.join(dir, 'charts/crds/crds/a.yaml'), 'kind: CustomResourceDefinition\n');
    writeFileSync(path.join(dir, 'charts/crds/crds/notes.txt'), 'not a manifest\n');
    expect(localCrdFiles(await readLocalChart(dir))?.map((f) => f.file)).toEqual(['charts/crds/crds/a.yaml']);
    writeFileSync(path.join(dir, 'charts/packed-0.1.0.tgz'), 'a packed sub-chart');
    expect(localCrdFiles(await readLocalChart(dir))).toBeUndefined();
  });
});

describe('helm version cache', () => {
  it('runs `helm version` once per binary file; a replaced binary is detected again', async () => {
    const { cachedHelmVersion } = await import('../../src/helm/version-cache.js');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-hv-'));
    try {
      const bin = path.join(dir, 'helm');
      const cache = path.join(dir, 'cache/helm-versions.json');
      writeFileSync(bin, '#!/bin/sh\necho v4.1.4\n', { mode: 0o755 });
      let runs = 0;
      const detect = (raw: string) => async () => {
        runs++;
        return { major: 4, minor: 1, patch: Number(raw.split('.')[2]), raw };
      };
      expect((await cachedHelmVersion(bin, detect('v4.1.4'), cache)).raw).toBe('v4.1.4');
      expect((await cachedHelmVersion(bin, detect('v4.1.4'), cache)).raw).toBe('v4.1.4');
      expect(runs).toBe(1);
      // clusters asking at the same time share one detection (another cache file: nothing stored yet)
      const fresh = path.join(dir, 'cache2/helm-versions.json');
      const all = await Promise.all(Array.from({ length: 5 }, () => cachedHelmVersion(bin, detect('v4.1.4'), fresh)));
      expect(all.map((v) => v.raw)).toEqual(Array(5).fill('v4.1.4'));
      expect(runs).toBe(2);
      writeFileSync(bin, '#!/bin/sh\necho v4.1.5 # a newer, bigger binary\n', { mode: 0o755 });
      expect((await cachedHelmVersion(bin, detect('v4.1.5'), cache)).raw).toBe('v4.1.5');
      expect(runs).toBe(3);
      // a missing binary is never cached: detection reports it every time
      await expect(cachedHelmVersion(path.join(dir, 'nope'), () => Promise.reject(new Error('helm not found')), cache)).rejects.toThrow('helm not found');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// A chart directory read as helm loads it (loader.LoadDir): .helmignore, BOM, symbolic links,
// sub-charts in charts/ (directories, archives, `_`/`.` names that are not charts, `.prov` files),
// the digest of the loaded files; and YAML read as helm reads it (go-yaml v2 through
// sigs.k8s.io/yaml). The YAML expectations are what helm 4.1.4 stored for the same texts.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadChartDir } from '../../src/helm/load.js';
import { chartStringOf, goFloat32String, parseHelmYaml } from '../../src/helm/yaml.js';
import { readLocalChart } from '../../src/helm/chart.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-load-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function chart(name: string, files: Record<string, string | Buffer>): string {
  const dir = path.join(tmp, name);
  for (const [rel, data] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), data);
  }
  return dir;
}

describe('a chart directory as helm loads it', () => {
  it('sorts files into templates, files and sub-charts, as helm does', async () => {
    const dir = chart('shapes', {
      'Chart.yaml': 'apiVersion: v2\nname: shapes\nversion: 0.1.0\n',
      'values.yaml': 'a: 1\n',
      'values.schema.json': '{}',
      'Chart.lock': 'dependencies: []\n',
      '.helmignore': 'ci/\n*.orig\n',
      'templates/cm.yaml': 'kind: ConfigMap\n',
      'templates/.hidden.yaml': 'not loaded\n',
      'templates/tests/t.yaml': 'kind: Pod\n',
      'files/conf.ini': 'x=1\n',
      'crds/a.yaml': 'kind: CustomResourceDefinition\n',
      'ci/values-ci.yaml': 'ignored\n',
      'values.yaml.orig': 'ignored\n',
      'charts/sub/Chart.yaml': 'apiVersion: v2\nname: sub\nversion: 0.1.0\n',
      'charts/sub/templates/x.yaml': 'kind: ConfigMap\n',
      'charts/packed-1.0.0.tgz': Buffer.from([0x1f, 0x8b, 0, 1]),
      'charts/packed-1.0.0.tgz.prov': 'signature\n',
      'charts/_helpers/notes.txt': 'not a chart\n',
      'charts/.cache/x': 'not a chart\n',
    });
    const c = await loadChartDir(dir);
    expect([...c.templates.keys()].sort()).toEqual(['templates/cm.yaml', 'templates/tests/t.yaml']);
    expect([...c.files.keys()].sort()).toEqual(['.helmignore', 'charts/packed-1.0.0.tgz.prov', 'crds/a.yaml', 'files/conf.ini']);
    expect(c.subcharts.map((s) => [s.name, s.packed, s.files.map((f) => f.name)])).toEqual([
      ['packed-1.0.0.tgz', true, ['packed-1.0.0.tgz']],
      ['sub', false, ['Chart.yaml', 'templates/x.yaml']],
    ]);
    expect(c.valuesYaml).toBe('a: 1\n');
    expect(c.schema?.toString()).toBe('{}');
    expect(c.all.map((f) => f.name)).not.toContain('ci/values-ci.yaml');
  });

  it('strips a UTF-8 byte-order mark and follows symbolic links', async () => {
    const shared = chart('shared', { 'common.yaml': 'kind: ConfigMap\n' });
    const dir = chart('links', {
      'Chart.yaml': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('apiVersion: v2\nname: links\nversion: 0.1.0\n')]),
    });
    mkdirSync(path.join(dir, 'templates'));
    symlinkSync(path.join(shared, 'common.yaml'), path.join(dir, 'templates/common.yaml'));
    symlinkSync(shared, path.join(dir, 'files'));
    const c = await loadChartDir(dir);
    expect(c.chartYaml?.startsWith('apiVersion')).toBe(true);
    expect(c.templates.get('templates/common.yaml')?.toString()).toBe('kind: ConfigMap\n');
    expect([...c.files.keys()]).toEqual(['files/common.yaml']);
  });

  it('a broken link is an error unless .helmignore lists it', async () => {
    const dir = chart('broken', { 'Chart.yaml': 'apiVersion: v2\nname: broken\nversion: 0.1.0\n' });
    symlinkSync(path.join(dir, 'nowhere'), path.join(dir, 'dangling'));
    await expect(loadChartDir(dir)).rejects.toThrow(/dangling: broken symbolic link/);
    writeFileSync(path.join(dir, '.helmignore'), 'dangling\n');
    await expect(loadChartDir(dir)).resolves.toBeDefined();
  });

  it('the digest covers every loaded file and nothing helm ignores', async () => {
    const dir = chart('digest', {
      'Chart.yaml': 'apiVersion: v2\nname: digest\nversion: 0.1.0\n',
      '.helmignore': '*.tmp\n',
      'charts/sub/Chart.yaml': 'apiVersion: v2\nname: sub\nversion: 0.1.0\n',
      'charts/sub/templates/x.yaml': 'a\n',
    });
    const first = (await loadChartDir(dir)).digest;
    writeFileSync(path.join(dir, 'scratch.tmp'), 'ignored');
    expect((await loadChartDir(dir)).digest).toBe(first);
    writeFileSync(path.join(dir, 'charts/sub/templates/x.yaml'), 'b\n');
    expect((await loadChartDir(dir)).digest).not.toBe(first);
  });

  it('for dependency_update, the digest leaves out what `helm dependency update` rewrites (Chart.lock, charts/*.tgz)', async () => {
    const dir = chart('depupdate', {
      'Chart.yaml': 'apiVersion: v2\nname: depupdate\nversion: 0.1.0\ndependencies:\n  - name: redis\n    version: 1.0.0\n    repository: https://charts.example.test\n',
      'Chart.lock': 'generated: "2026-01-01T00:00:00Z"\n',
      'charts/redis-1.0.0.tgz': 'one download',
      'charts/local/Chart.yaml': 'apiVersion: v2\nname: local\nversion: 0.1.0\n',
    });
    const first = await readLocalChart(dir, { dependencyUpdate: true });
    writeFileSync(path.join(dir, 'Chart.lock'), 'generated: "2026-02-02T00:00:00Z"\n');
    writeFileSync(path.join(dir, 'charts/redis-1.0.0.tgz'), 'another download');
    const second = await readLocalChart(dir, { dependencyUpdate: true });
    expect(second.digest).toBe(first.digest);
    expect((await readLocalChart(dir)).digest).not.toBe(second.digest);
    writeFileSync(path.join(dir, 'charts/local/Chart.yaml'), 'apiVersion: v2\nname: local\nversion: 0.2.0\n');
    expect((await readLocalChart(dir, { dependencyUpdate: true })).digest).not.toBe(first.digest);
  });

  it('a .helmignore rule helm refuses, or a missing Chart.yaml, is a clear error naming the file', async () => {
    const dir = chart('refused', { 'Chart.yaml': 'apiVersion: v2\nname: refused\nversion: 0.1.0\n', '.helmignore': 'templates/**\n' });
    await expect(readLocalChart(dir)).rejects.toThrow(/refused\/\.helmignore: line 1: double-star/);
    writeFileSync(path.join(dir, '.helmignore'), 'Chart.yaml\n');
    await expect(readLocalChart(dir)).rejects.toThrow(/Chart\.yaml file is missing \(or ignored by \.helmignore\)/);
  });

  it('dependencies make the stored default values helm\'s to compute; so does a values.yaml of several documents', async () => {
    const plain = await readLocalChart(chart('plain', { 'Chart.yaml': 'apiVersion: v2\nname: plain\nversion: 0.1.0\n', 'values.yaml': 'a: 1\n' }));
    expect(plain.valuesExact).toBe(true);
    const deps = await readLocalChart(chart('deps', { 'Chart.yaml': 'apiVersion: v2\nname: deps\nversion: 0.1.0\ndependencies:\n  - name: sub\n    version: 0.1.0\n    alias: web\n' }));
    expect(deps.valuesExact).toBe(false);
    expect(deps.dependencyKeys).toEqual(['web']);
    const v1 = await readLocalChart(chart('v1', { 'Chart.yaml': 'apiVersion: v1\nname: v1\nversion: 0.1.0\n', 'requirements.yaml': 'dependencies:\n  - name: sub\n    version: 0.1.0\n' }));
    expect(v1.valuesExact).toBe(false);
    expect([...v1.files.keys()]).toEqual(['requirements.yaml']);
    const docs = await readLocalChart(chart('docs', { 'Chart.yaml': 'apiVersion: v2\nname: docs\nversion: 0.1.0\n', 'values.yaml': 'a: 1\n---\nb: 2\n' }));
    expect(docs.valuesExact).toBe(false);
  });
});

describe('YAML as helm reads it', () => {
  it('resolves scalars as go-yaml v2 (what helm 4.1.4 stored for the same text)', () => {
    const text = [
      'b1: yes', 'b2: on', 'b3: y', 'b4: NO', 'o1: 0777', 'o2: 0o17', 'h: 0x1F', 'u: 1_000', 'sx: 1:20', 'd: 2001-12-14',
      'ts: 2001-12-14t21:59:43.10-05:00', 'f: 1e3', 'f2: .5', 'n: ~', 'keys: {yes: 1, 1: a, 1.5: b}', 'bin: 0b101', 'plus: +12',
      'neg8: -017', 'fl: 1.0', 'f3: 6.02e+23', 'merge: &a {x: 1}', 'm2: {<<: *a, z: 2}', 'str: !!str 123', 'hexu: 0x_1F', 'bigf: 1e400',
      'dup: 1', 'dup: 2',
    ].join('\n');
    expect(parseHelmYaml(text)).toEqual({
      documents: 1,
      value: {
        b1: true, b2: true, b3: true, b4: false, o1: 511, o2: 15, h: 31, u: 1000, sx: '1:20', d: '2001-12-14', ts: '2001-12-14t21:59:43.10-05:00',
        f: 1000, f2: 0.5, false: null, keys: { '1': 'a', '1.5': 'b', true: 1 }, bin: 5, plus: 12, neg8: -15, fl: 1, f3: 6.02e23, merge: { x: 1 },
        m2: { x: 1, z: 2 }, str: '123', hexu: 31, bigf: '1e400', dup: 2,
      },
    });
    expect(parseHelmYaml('')).toEqual({ value: null, documents: 0 });
    expect(parseHelmYaml('a: 1\n---\nb: 2\n').documents).toBe(2);
  });

  it("reads a plain scalar into a string field of Chart.yaml as helm does", () => {
    const want: Record<string, string> = { '1.10': '1.1', '010': '8', '1e3': '1000', yes: 'true', '0x10': '16', '1.0': '1', '2.50': '2.5', '1_000': '1000', '12345678.9': '1.2345679e+07', 'v1.2.3': 'v1.2.3', '1.2.3': '1.2.3' };
    for (const [plain, helm] of Object.entries(want)) expect(chartStringOf(plain), plain).toBe(helm);
    expect(goFloat32String(0.00001)).toBe('1e-05');
    expect(goFloat32String(0.0001)).toBe('0.0001');
    expect(goFloat32String(1234567)).toBe('1.234567e+06');
  });
});

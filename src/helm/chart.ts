/**
 * A local chart directory read without helm, exactly as helm loads it (`.helmignore`, sub-charts
 * in `charts/`, YAML as helm reads it; see `load.ts`, `ignore.ts`, `yaml.ts`), and whether it is
 * the chart a stored release was made from, so that an unchanged release costs no helm process.
 *
 * Templates and other files are compared byte for byte with what helm stored. What helm computes
 * while loading a chart — the default values of a chart with dependencies (sub-chart defaults,
 * `global`, `import-values`, conditions and tags, which depend on the release's values too) — is
 * not recomputed: kplay records the digest of the chart files it installed with the release (its
 * description) and compares that digest; for a release without one (installed by helm itself, or
 * by an older kplay), it asks helm (`helm install --dry-run=client`) only when its own reading
 * cannot settle the question.
 */
import YAML, { isScalar } from 'yaml';
import { canonicalValuesJson, changedValueKeys, isMap, type Values } from './values.js';
import type { ChartMeta } from './release.js';
import type { StoredChart } from './storage.js';
import { filesDigest, loadChartDir, type LoadedFile, type LoadedSubchart } from './load.js';
import { chartStringOf, parseHelmYaml } from './yaml.js';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { withoutBom } from '../load/bom.js';

/** A local chart directory as kplay compares it. */
export interface LocalChart extends ChartMeta {
  dir: string;
  /** Every file helm loads from the directory (sub-charts included), sorted by path. */
  all: LoadedFile[];
  /** `templates/…` path → content. */
  templates: Map<string, Buffer>;
  /** helm's `Files` of the chart (`.Files.Get` sources, `crds/`, README, `.helmignore` …). */
  files: Map<string, Buffer>;
  /** Default values (`values.yaml`, its first document), read as helm reads YAML. */
  values: Values;
  /**
   * Whether {@link values} is what helm stores as the chart's default values: true unless the
   * chart has dependencies (helm stores them merged with the sub-charts' defaults, `global`
   * copied, `import-values` imported) or `values.yaml` has several documents (helm versions
   * differ in how they read those).
   */
  valuesExact: boolean;
  /** `values.schema.json`, when present. */
  schema?: Buffer;
  /** Values keys of the chart's dependencies (`alias`, else `name`, from `Chart.yaml`). */
  dependencyKeys: string[];
  /** Sub-charts vendored in `charts/`. */
  subcharts: LoadedSubchart[];
  /** sha256 (hex) of every file helm loads (see `filesDigest`); without Chart.lock and `charts/*.tgz` when read for `dependency_update`. */
  digest: string;
}

/** True when `dir` is a chart directory (has `Chart.yaml`). */
export async function isChartDir(dir: string): Promise<boolean> {
  try {
    return (await stat(path.join(dir, 'Chart.yaml'))).isFile();
  } catch {
    return false;
  }
}

/** Parsed values.yaml texts, by text: parallel releases of one chart parse it once. */
const parsedTexts = new Map<string, { value: unknown; documents: number }>();

/** A chart's values YAML as helm reads it. The result is shared by callers with the same text: copy before changing it. */
function parseValuesYaml(text: string): { value: unknown; documents: number } {
  const hit = parsedTexts.get(text);
  if (hit) return hit;
  const v = parseHelmYaml(text);
  if (parsedTexts.size >= 64) parsedTexts.clear();
  parsedTexts.set(text, v);
  return v;
}

/** `Chart.yaml`: name, version, appVersion (as helm reads these string fields), dependency keys and whether there are dependencies. */
function parseChartMeta(text: string, file: string): ChartMeta & { dependencyKeys: string[]; apiVersion: string } {
  const hit = parsedMeta.get(text);
  if (hit) return { ...hit, dependencyKeys: [...hit.dependencyKeys] };
  const meta = parseChartMetaText(text, file);
  if (parsedMeta.size >= 64) parsedMeta.clear();
  parsedMeta.set(text, meta);
  return { ...meta, dependencyKeys: [...meta.dependencyKeys] };
}

/** Parsed Chart.yaml texts, by text (parallel releases of one chart parse it once). */
const parsedMeta = new Map<string, ChartMeta & { dependencyKeys: string[]; apiVersion: string }>();

function parseChartMetaText(text: string, file: string): ChartMeta & { dependencyKeys: string[]; apiVersion: string } {
  const doc = YAML.parseDocument(withoutBom(text), { version: '1.1', merge: true, uniqueKeys: false });
  if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0]?.message ?? 'invalid YAML'}`);
  const field = (key: string): string => {
    const n: unknown = doc.get(key, true);
    if (!isScalar(n)) return '';
    if (n.type === 'PLAIN') return chartStringOf(typeof n.source === 'string' ? n.source : String(n.value));
    return typeof n.value === 'string' ? n.value : String(n.value);
  };
  const v: unknown = doc.toJS({ maxAliasCount: 1000 });
  const r = isMap(v) ? v : {};
  const deps = Array.isArray(r.dependencies) ? r.dependencies.filter(isMap) : [];
  const dependencyKeys = deps.map((d) => (typeof d.alias === 'string' && d.alias ? d.alias : typeof d.name === 'string' ? d.name : '')).filter(Boolean);
  const name = field('name');
  const version = field('version');
  if (!name || !version) throw new Error(`${file}: Chart.yaml has no name or version`);
  return { name, version, appVersion: field('appVersion'), dependencyKeys, apiVersion: field('apiVersion') || 'v1' };
}

/** What `helm dependency update` writes into a chart directory. */
const DEPENDENCY_UPDATE_OUTPUT = /^(?:Chart\.lock|requirements\.lock|charts\/[^/]+\.tgz)$/;

/**
 * Read a chart directory as helm loads it. With `dependencyUpdate` (helm updates the
 * dependencies before loading), the digest leaves out what that update rewrites.
 * @throws Error naming the file: no `Chart.yaml`, invalid YAML, values that are not a map, a
 *   `.helmignore` rule or a file helm refuses.
 */
export async function readLocalChart(dir: string, opts: { dependencyUpdate?: boolean } = {}): Promise<LocalChart> {
  const loaded = await loadChartDir(dir);
  if (loaded.chartYaml === undefined) throw new Error(`${path.join(dir, 'Chart.yaml')}: Chart.yaml file is missing (or ignored by .helmignore)`);
  const meta = parseChartMeta(loaded.chartYaml, path.join(dir, 'Chart.yaml'));
  const files = new Map(loaded.files);
  let dependencyKeys = meta.dependencyKeys;
  if (meta.apiVersion === 'v1') {
    // helm 2 charts: dependencies in requirements.yaml, which helm keeps with the files
    for (const [name, data] of loaded.requirements) files.set(name, data);
    const req = loaded.requirements.get('requirements.yaml');
    if (req && !dependencyKeys.length) dependencyKeys = parseChartMetaDeps(req.toString('utf8'));
  }
  let values: Values = {};
  let documents = 0;
  if (loaded.valuesYaml !== undefined) {
    let parsed: { value: unknown; documents: number };
    try {
      parsed = parseValuesYaml(loaded.valuesYaml);
    } catch (e) {
      throw new Error(`${path.join(dir, 'values.yaml')}: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (parsed.value !== null && !isMap(parsed.value)) throw new Error(`${path.join(dir, 'values.yaml')}: the chart's default values must be a map`);
    if (isMap(parsed.value)) values = JSON.parse(JSON.stringify(parsed.value)) as Values;
    documents = parsed.documents;
  }
  return {
    name: meta.name,
    version: meta.version,
    appVersion: meta.appVersion,
    dir,
    all: loaded.all,
    templates: loaded.templates,
    files,
    values,
    valuesExact: dependencyKeys.length === 0 && documents <= 1,
    ...(loaded.schema ? { schema: loaded.schema } : {}),
    dependencyKeys,
    subcharts: loaded.subcharts,
    // `helm dependency update` (dependency_update) rewrites Chart.lock and the archives in charts/
    // from Chart.yaml: they are not part of the chart kplay compares then
    digest: opts.dependencyUpdate ? filesDigest(loaded.all.filter((f) => !DEPENDENCY_UPDATE_OUTPUT.test(f.name))) : loaded.digest,
  };
}

function parseChartMetaDeps(text: string): string[] {
  try {
    const v = parseHelmYaml(text).value;
    const deps = isMap(v) && Array.isArray(v.dependencies) ? v.dependencies.filter(isMap) : [];
    return deps.map((d) => (typeof d.alias === 'string' && d.alias ? d.alias : typeof d.name === 'string' ? d.name : '')).filter(Boolean);
  } catch {
    return ['requirements.yaml'];
  }
}

/** A `kind:` (YAML or JSON) whose value is a list kind (`List`, `ConfigMapList`) or starts with a template action. */
const LIST_OR_TEMPLATED_KIND = /\bkind["']?\s*:\s*["']?\s*(?:[A-Za-z0-9]*List\b|\{\{)/;

/** Whether a values tree holds a `kind` naming a list kind or holding a template action (`tpl`, `toYaml` of values). */
function valuesMayHoldLists(v: unknown, depth = 0): boolean {
  if (depth > 64) return true;
  if (Array.isArray(v)) return v.some((x) => valuesMayHoldLists(x, depth + 1));
  if (!isMap(v)) return false;
  for (const [k, x] of Object.entries(v)) {
    if (k === 'kind' && typeof x === 'string' && (/List$/.test(x.trim()) || x.includes('{{'))) return true;
    if (valuesMayHoldLists(x, depth + 1)) return true;
  }
  return false;
}

/**
 * Whether rendering this chart with `values` might produce a `List` document (helm checks the
 * items of a List on the client, see `serverChecksFields`). Conservative: true when any file helm
 * loads (templates, files read with `.Files`, unpacked sub-charts) has a list kind or a templated
 * `kind:`, or calls `lookup` (a list it returns can be dumped as a document), when a sub-chart is
 * packed (`charts/*.tgz`, not read here), or when the chart's or the given values hold such a
 * `kind`.
 */
export function mayRenderLists(chart: LocalChart, values: Values): boolean {
  if (valuesMayHoldLists(chart.values) || valuesMayHoldLists(values)) return true;
  for (const f of chart.all) {
    if (/\.(tgz|tar\.gz)$/i.test(f.name)) return true;
    const text = f.data.toString('latin1');
    if (LIST_OR_TEMPLATED_KIND.test(text) || /\blookup\b/.test(text)) return true;
  }
  return false;
}

/** What {@link chartDifferences} may use besides the two charts. */
export interface ChartCompareOptions {
  /** The digest of the chart files kplay recorded with the release (see `recordedChartDigest`), when it did. */
  recordedDigest?: string;
  /**
   * helm's own reading of the local chart, as it would store it for this release with the
   * release's values (`helm install --dry-run=client`); `undefined` when helm cannot tell. Called
   * at most once, and only when kplay's reading of the chart cannot decide.
   */
  helmChart?: () => Promise<StoredChart | undefined>;
}

const list = (xs: string[]): string => `${xs.slice(0, 10).join(', ')}${xs.length > 10 ? `, … (${xs.length})` : ''}`;

function metaDifferences(local: ChartMeta, stored: ChartMeta): string[] {
  if (local.name !== stored.name || local.version !== stored.version) return [`chart ${stored.name} ${stored.version} → ${local.name} ${local.version}`];
  if (local.appVersion !== stored.appVersion) return [`appVersion ${stored.appVersion} → ${local.appVersion}`];
  return [];
}

/** Differences kplay reads exactly: templates, other files, schema (helm stores them as loaded). */
function fileDifferences(local: LocalChart, stored: StoredChart): string[] {
  const out: string[] = [];
  const compare = (mine: Map<string, Buffer>, theirs: { name: string; data: string }[]): string[] => {
    const held = new Map(theirs.map((t) => [t.name, t.data]));
    const changed: string[] = [];
    for (const [name, data] of mine) {
      const s = held.get(name);
      if (s === undefined) changed.push(`${name} (new)`);
      else if (s !== data.toString('base64')) changed.push(name);
    }
    for (const name of held.keys()) if (!mine.has(name)) changed.push(`${name} (removed)`);
    return changed;
  };
  const templates = compare(local.templates, stored.templates);
  if (templates.length) out.push(`templates changed: ${list(templates)}`);
  if ((local.schema?.toString('base64') ?? '') !== (stored.schema ?? '')) out.push('values.schema.json changed');
  const files = compare(local.files, stored.files);
  if (files.length) out.push(`chart files changed: ${list(files)}`);
  return out;
}

function valuesDifference(stored: Values, local: Values): string[] {
  if (canonicalValuesJson(stored) === canonicalValuesJson(local)) return [];
  return [`chart default values (values.yaml) changed: ${list(changedValueKeys(stored, local))}`];
}

/**
 * Why the local chart differs from the chart a release stored (`[]`: it is the same chart).
 *
 * - With the digest kplay recorded when it installed the revision: equal digests are the same
 *   chart (sub-charts included, which helm does not store); different ones are a change, named
 *   as precisely as the stored chart allows.
 * - Without one: templates, files and schema are compared byte for byte; name, version,
 *   appVersion and default values as kplay reads them. When only what helm computes seems to
 *   differ (the default values of a chart with dependencies, …), helm's own reading decides
 *   (`opts.helmChart`). Sub-charts are then compared through the values only.
 */
export async function chartDifferences(local: LocalChart, stored: StoredChart, opts: ChartCompareOptions = {}): Promise<string[]> {
  if (opts.recordedDigest !== undefined && opts.recordedDigest === local.digest) return [];
  const files = fileDifferences(local, stored);
  const meta = metaDifferences(local, stored);
  const values = local.valuesExact ? valuesDifference(stored.values, local.values) : [];
  if (opts.recordedDigest !== undefined) {
    const out = [...meta, ...files, ...values];
    if (!out.length) out.push('chart changed since kplay installed it (the digest of its files differs): Chart.yaml, values.yaml or a sub-chart in charts/');
    return out;
  }
  if (files.length) return [...meta, ...files, ...values];
  if (!meta.length && !values.length && local.valuesExact) return [];
  const fromHelm = await opts.helmChart?.();
  if (!fromHelm) return [...meta, ...(local.valuesExact ? values : ['chart default values (values.yaml) may have changed (a chart with dependencies; helm could not be asked)'])];
  return [...metaDifferences(fromHelm, stored), ...valuesDifference(stored.values, fromHelm.values)];
}

/**
 * The text of every CRD file helm would install with the chart: `crds/` of the chart and of its
 * unpacked sub-charts (at any depth), as `{ file, text }` sorted by path; `undefined` when a
 * packed sub-chart (`charts/*.tgz`) may hold more (ask helm: `helm show crds`).
 */
export function localCrdFiles(chart: LocalChart): { file: string; text: string }[] | undefined {
  if (chart.all.some((f) => /(?:^|\/)charts\/(?![_.])[^/]+\.tgz$/.test(f.name))) return undefined;
  return chart.all
    .filter((f) => /^(?:charts\/(?![_.])[^/]+\/)*crds\/.+\.(?:yaml|yml|json)$/.test(f.name))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((f) => ({ file: f.name, text: f.data.toString('utf8') }));
}

const DIGEST_NOTE = /\(kplay: chart sha256:([0-9a-f]{64})\)/;

/**
 * The release description kplay gives helm for a revision made from a local chart directory:
 * helm's own wording plus the digest of the chart's files, e.g. `Upgrade complete (kplay: chart
 * sha256:…)`. helm stores it with that revision only (a later `helm upgrade` or rollback writes
 * its own), so the digest always describes the revision it is stored with.
 */
export function chartDigestDescription(install: boolean, digest: string): string {
  return `${install ? 'Install' : 'Upgrade'} complete (kplay: chart sha256:${digest})`;
}

/** The chart digest kplay recorded in a release description, or undefined. */
export function recordedChartDigest(description: string | undefined): string | undefined {
  return DIGEST_NOTE.exec(description ?? '')?.[1];
}

/**
 * A local chart directory read without helm: its `Chart.yaml`, templates, default values and
 * schema, and whether it is the chart a stored release was made from (so that an unchanged
 * release costs no helm process). Reading is cheap (a few small files) and exact: templates
 * and files are compared byte for byte with what helm stored.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { canonicalValuesJson, isMap, type Values } from './values.js';
import type { ChartMeta } from './release.js';
import type { StoredChart } from './storage.js';

/** A local chart directory as kplay compares it. */
export interface LocalChart extends ChartMeta {
  dir: string;
  /** `templates/…` path → content. */
  templates: Map<string, Buffer>;
  /** Default values (`values.yaml`), read as helm reads YAML (1.1 booleans, merge keys). */
  values: Values;
  /** `values.schema.json`, when present. */
  schema?: Buffer;
  /** Values keys of the chart's dependencies (`alias`, else `name`, from `Chart.yaml`). */
  dependencyKeys: string[];
}

async function walk(dir: string, rel: string, out: Map<string, Buffer>): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    const r = `${rel}/${e.name}`;
    if (e.isDirectory()) await walk(p, r, out);
    else if (e.isFile()) out.set(r, await readFile(p));
  }
}

/** True when `dir` is a chart directory (has `Chart.yaml`). */
export async function isChartDir(dir: string): Promise<boolean> {
  try {
    return (await stat(path.join(dir, 'Chart.yaml'))).isFile();
  } catch {
    return false;
  }
}

/** Read `Chart.yaml` (name, version, appVersion) of a chart directory. */
export async function readChartMeta(dir: string): Promise<ChartMeta & { dependencyKeys: string[] }> {
  const file = path.join(dir, 'Chart.yaml');
  const v = parseChartYaml(await readFile(file, 'utf8'));
  const r = isMap(v) ? v : {};
  const deps = Array.isArray(r.dependencies) ? r.dependencies.filter(isMap) : [];
  const dependencyKeys = deps.map((d) => (typeof d.alias === 'string' && d.alias ? d.alias : typeof d.name === 'string' ? d.name : '')).filter(Boolean);
  const s = (x: unknown): string => (typeof x === 'string' ? x : typeof x === 'number' ? String(x) : '');
  const name = s(r.name);
  const version = s(r.version);
  if (!name || !version) throw new Error(`${file}: Chart.yaml has no name or version`);
  return { name, version, appVersion: s(r.appVersion), dependencyKeys };
}

/** Parsed Chart.yaml and values.yaml texts, by text: parallel releases of one chart parse it once. */
const parsedTexts = new Map<string, unknown>();

/**
 * A chart's YAML as helm reads it (YAML 1.1, merge keys). The result is shared by every caller
 * with the same text: read it, copy before changing it.
 */
function parseChartYaml(text: string): unknown {
  if (parsedTexts.has(text)) return parsedTexts.get(text);
  const v: unknown = YAML.parse(text, { version: '1.1', merge: true, maxAliasCount: 1000 });
  if (parsedTexts.size >= 64) parsedTexts.clear();
  parsedTexts.set(text, v);
  return v;
}

/** Read a chart directory. */
export async function readLocalChart(dir: string): Promise<LocalChart> {
  const meta = await readChartMeta(dir);
  const templates = new Map<string, Buffer>();
  await walk(path.join(dir, 'templates'), 'templates', templates);
  let values: Values = {};
  try {
    const parsed = parseChartYaml(await readFile(path.join(dir, 'values.yaml'), 'utf8'));
    if (isMap(parsed)) values = JSON.parse(JSON.stringify(parsed)) as Values;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${path.join(dir, 'values.yaml')}: ${e instanceof Error ? e.message : String(e)}`);
  }
  let schema: Buffer | undefined;
  try {
    schema = await readFile(path.join(dir, 'values.schema.json'));
  } catch {
    schema = undefined;
  }
  return { ...meta, dir, templates, values, ...(schema ? { schema } : {}) };
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
 * items of a List on the client, see `serverChecksFields`). Conservative: true when any file of
 * the chart (templates, files read with `.Files`, unpacked subcharts) has a list kind or a
 * templated `kind:`, or calls `lookup` (a list it returns can be dumped as a document), when a
 * subchart is packed (`charts/*.tgz`, not read here), or when the chart's or the given values hold
 * such a `kind`.
 */
export async function mayRenderLists(chart: LocalChart, values: Values): Promise<boolean> {
  if (valuesMayHoldLists(chart.values) || valuesMayHoldLists(values)) return true;
  // templates/ as read already; every other file of the chart from disk
  const files = new Map<string, Buffer>(chart.templates);
  for (const e of await readdir(chart.dir, { withFileTypes: true })) {
    if (e.name === 'templates') continue;
    if (e.isDirectory()) await walk(path.join(chart.dir, e.name), e.name, files);
    else if (e.isFile()) files.set(e.name, await readFile(path.join(chart.dir, e.name)));
  }
  for (const [rel, data] of files) {
    if (/\.(tgz|tar\.gz)$/i.test(rel)) return true;
    const text = data.toString('latin1');
    if (LIST_OR_TEMPLATED_KIND.test(text) || /\blookup\b/.test(text)) return true;
  }
  return false;
}

/**
 * The stored default values without what helm added while loading the chart: helm copies the
 * parent's `global` map into the values of every enabled dependency (by alias or name), creating
 * the key when the parent's values.yaml has none.
 */
export function withoutPropagatedGlobals(stored: Values, local: LocalChart): Values {
  if (!local.dependencyKeys.length) return stored;
  const out: Values = { ...stored };
  for (const k of local.dependencyKeys) {
    const v = out[k];
    if (!isMap(v) || !('global' in v)) continue;
    const rest: Values = { ...v };
    delete rest.global;
    const localHad = isMap(local.values[k]) && 'global' in (local.values[k] as Values);
    if (localHad) continue;
    if (Object.keys(rest).length === 0 && !(k in local.values)) delete out[k];
    else out[k] = rest;
  }
  return out;
}

/**
 * Why the local chart differs from the chart a release stored (`[]`: it is the same chart).
 * Compares name, version, appVersion, every template (added, removed, edited), the default
 * values, the values schema and every stored non-template file (`.Files.Get` sources, `crds/`).
 * Subcharts are not stored with a release by helm: they are compared through the parent's
 * version only.
 */
export async function chartDifferences(local: LocalChart, stored: StoredChart): Promise<string[]> {
  const out: string[] = [];
  if (local.name !== stored.name || local.version !== stored.version) out.push(`chart ${stored.name} ${stored.version} → ${local.name} ${local.version}`);
  else if (local.appVersion !== stored.appVersion) out.push(`appVersion ${stored.appVersion} → ${local.appVersion}`);
  const storedTemplates = new Map(stored.templates.map((t) => [t.name, t.data]));
  const edited: string[] = [];
  for (const [name, data] of local.templates) {
    const s = storedTemplates.get(name);
    if (s === undefined) edited.push(`${name} (new)`);
    else if (s !== data.toString('base64')) edited.push(name);
  }
  for (const name of storedTemplates.keys()) if (!local.templates.has(name)) edited.push(`${name} (removed)`);
  if (edited.length) out.push(`templates changed: ${edited.slice(0, 10).join(', ')}${edited.length > 10 ? ', …' : ''}`);
  if (canonicalValuesJson(local.values) !== canonicalValuesJson(withoutPropagatedGlobals(stored.values, local))) out.push('chart default values (values.yaml) changed');
  const localSchema = local.schema?.toString('base64');
  if ((localSchema ?? '') !== (stored.schema ?? '')) out.push('values.schema.json changed');
  const files: string[] = [];
  for (const f of stored.files) {
    let data: Buffer;
    try {
      data = await readFile(path.join(local.dir, f.name));
    } catch {
      files.push(`${f.name} (removed)`);
      continue;
    }
    if (data.toString('base64') !== f.data) files.push(f.name);
  }
  if (files.length) out.push(`chart files changed: ${files.slice(0, 10).join(', ')}${files.length > 10 ? ', …' : ''}`);
  return out;
}

/**
 * The text of every CRD file of a chart directory: `crds/` (any depth) and the `crds/` of
 * unpacked subcharts in `charts/`, as `{ file, text }` sorted by path.
 */
export async function localCrdFiles(dir: string): Promise<{ file: string; text: string }[]> {
  const found = new Map<string, Buffer>();
  await walk(path.join(dir, 'crds'), 'crds', found);
  let subs: string[] = [];
  try {
    subs = (await readdir(path.join(dir, 'charts'), { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    subs = [];
  }
  for (const sub of subs) await walk(path.join(dir, 'charts', sub, 'crds'), `charts/${sub}/crds`, found);
  return [...found]
    .filter(([name]) => /\.(ya?ml|json)$/i.test(name))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([file, data]) => ({ file, text: data.toString('utf8') }));
}

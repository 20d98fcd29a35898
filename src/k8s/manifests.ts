/**
 * Manifest sources → Kubernetes objects for `k8s_apply`: inline definitions, multi-document YAML files,
 * directories, globs, and templates (Jinja) rendered with the task's variables.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import type { KubeObject } from './types.js';
import { withoutBom } from '../load/bom.js';
import { fastLoadAll } from '../load/fast-yaml.js';
import { cachedParse, parseCacheOf, type ParseCache } from '../load/parse-cache.js';
import { isRecord } from '../core/shape.js';


/**
 * Drop `null` map values, recursively (list items are kept, their maps cleaned). Charts render
 * `annotations:` with nothing after it (`{{- with .Values.x }}` that yields nothing), `resources:
 * null`, `labels: ~`: the API server treats such a null as "not set", and so does kplay, so a
 * null never crashes a reader (`annotations[k]` of null) nor shows as a difference.
 */
export function dropNulls(v: unknown): unknown {
  // A value without nulls is returned as it is (most manifests have none: no copy of a 420 KB
  // set); a list or map holding one is copied, sharing its other children.
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      const y = dropNulls(x);
      if (y !== x) (out ??= v.slice())[i] = y;
    }
    return out ?? v;
  }
  if (isRecord(v)) {
    const keys = Object.keys(v);
    let out: Record<string, unknown> | undefined;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] ?? '';
      const x = v[k];
      const y = x === null || x === undefined ? undefined : dropNulls(x);
      if (out === undefined && y !== x) {
        out = {};
        for (const before of keys.slice(0, i)) out[before] = v[before];
      }
      if (out !== undefined && y !== undefined) out[k] = y;
    }
    return out ?? v;
  }
  return v;
}

/** `source` of helm-rendered documents: the `# Source: chart/templates/x.yaml` comment helm writes before each. */
export function sourceComment(text: string): string | undefined {
  const m = /^# Source: (.+)$/m.exec(text);
  return m?.[1]?.trim();
}

/**
 * Parse multi-document YAML (or JSON) text into objects; `kind: List`/`*List` is flattened; empty
 * documents, documents that are only comments and stray `---` are skipped; null fields are dropped
 * ({@link dropNulls}). Errors name `source`, the document number (and, for helm output, the template
 * file from its `# Source:` comment) and the object.
 */
export function parseManifests(given: string, source: string): KubeObject[] {
  const text = withoutBom(given);
  // Most manifests take the fast path (js-yaml, same values; see load/fast-yaml.ts). A document
  // that is not a valid object is parsed again below, so its error names the helm template.
  const fast = fastLoadAll(text);
  if (fast) {
    try {
      return fast.flatMap((v, i) => (v === null ? [] : toObjects(v, `${source} document ${i + 1}`)));
    } catch {
      // fall through: the error is reported with the document's `# Source:` below
    }
  }
  // `prettyErrors` (line/column in messages) makes parsing ~10x slower on large files: parse
  // without it, and again with it only to report an error.
  let docs = YAML.parseAllDocuments(text, { uniqueKeys: true, merge: true, prettyErrors: false });
  if (docs.some((d) => d.errors.length)) docs = YAML.parseAllDocuments(text, { uniqueKeys: true, merge: true });
  const out: KubeObject[] = [];
  docs.forEach((d, i) => {
    const range = d.range as [number, number, number] | undefined;
    const from = sourceComment(text.slice(range ? Math.max(0, docStart(text, range[0])) : 0, range ? range[1] : 0));
    const where = `${source} document ${i + 1}${from ? ` (${from})` : ''}`;
    const err = d.errors[0];
    if (err) throw new Error(`${where}: ${err.message}`);
    const v: unknown = d.toJS({ maxAliasCount: 100 });
    if (v === null || v === undefined) return;
    out.push(...toObjects(v, where));
  });
  return out;
}

/** Start of the text belonging to a document whose content starts at `at`: after the previous `---` line. */
function docStart(text: string, at: number): number {
  const sep = text.lastIndexOf('\n---', at);
  return sep < 0 ? 0 : sep + 1;
}

const describe = (v: Record<string, unknown>): string => {
  const md = isRecord(v.metadata) ? v.metadata : {};
  const name = typeof md.name === 'string' ? md.name : '';
  return `${typeof v.kind === 'string' ? v.kind : 'object'}${name ? ` ${name}` : ''}`;
};

/** Validate and flatten a value (object, list, `kind: List`) into Kubernetes objects; null fields are dropped. */
export function toObjects(v: unknown, source: string): KubeObject[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => (x === null ? [] : toObjects(x, `${source} item ${i + 1}`)));
  if (!isRecord(v)) throw new Error(`${source}: expected a Kubernetes object (a map with apiVersion, kind, metadata), got ${typeof v === 'string' ? `the text ${JSON.stringify(v.slice(0, 60))}` : typeof v}`);
  // `kind: List`, `ConfigMapList`, …: a list of objects (`items: null` or absent is an empty list).
  if (typeof v.kind === 'string' && v.kind.endsWith('List') && (Array.isArray(v.items) || ((v.items === null || v.items === undefined) && !(isRecord(v.metadata) && typeof v.metadata.name === 'string')))) {
    return Array.isArray(v.items) ? toObjects(v.items, source) : [];
  }
  const o = dropNulls(v) as Record<string, unknown>;
  if (typeof o.apiVersion !== 'string' || !o.apiVersion) throw new Error(`${source}: ${describe(o)}: missing apiVersion`);
  if (typeof o.kind !== 'string' || !o.kind) throw new Error(`${source}: ${describe(o)}: missing kind`);
  if (!isRecord(o.metadata)) throw new Error(`${source}: ${o.kind} has no metadata`);
  if (typeof o.metadata.name !== 'string' || !o.metadata.name) {
    throw new Error(`${source}: ${o.kind} has no metadata.name (generateName is not supported by server-side apply)`);
  }
  for (const field of ['labels', 'annotations'] as const) {
    const m = o.metadata[field];
    if (m === undefined) continue;
    if (!isRecord(m)) throw new Error(`${source}: ${describe(o)}: metadata.${field} must be a map of strings, got ${Array.isArray(m) ? 'a list' : typeof m}`);
    for (const [k, x] of Object.entries(m)) {
      if (typeof x !== 'string') throw new Error(`${source}: ${describe(o)}: metadata.${field}.${k} must be a string, got ${typeof x} ${JSON.stringify(x)} (quote it in the manifest)`);
    }
  }
  return [o as KubeObject];
}

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] ?? '';
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
      if (glob[i + 1] === '/') i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += /[.+^${}()|[\]\\]/.test(c) ? `\\${c}` : c;
  }
  return new RegExp(`^${re}$`);
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p)));
    else out.push(p);
  }
  return out;
}

const MANIFEST = /\.(ya?ml|json)$/i;

/**
 * Files named by `src` (relative to `baseDir`): a file, a directory (every *.yaml/*.yml/*.json
 * directly inside, sorted) or a glob (`manifests/*.yaml`, `**` for any depth), sorted.
 */
export async function resolveSources(src: string, baseDir: string): Promise<string[]> {
  const abs = path.resolve(baseDir, src);
  if (/[*?[]/.test(src)) {
    const parts = abs.split(path.sep);
    const firstGlob = parts.findIndex((p) => /[*?[]/.test(p));
    const root = parts.slice(0, firstGlob).join(path.sep) || path.sep;
    const re = globToRegExp(parts.slice(firstGlob).join('/'));
    const files = (await walk(root).catch(() => [])).filter((f) => re.test(path.relative(root, f).split(path.sep).join('/')));
    if (!files.length) throw new Error(`src ${src}: no file matches`);
    return files.sort();
  }
  let st;
  try {
    st = await stat(abs);
  } catch {
    throw new Error(`src ${src}: no such file or directory (${abs})`);
  }
  if (st.isDirectory()) {
    const files = (await readdir(abs)).filter((f) => MANIFEST.test(f)).sort().map((f) => path.join(abs, f));
    if (!files.length) throw new Error(`src ${src}: directory has no *.yaml, *.yml or *.json file`);
    return files;
  }
  return [abs];
}

/** Whether a value read back from the parse cache is a list of objects as `toObjects` gives them. */
function isObjectList(v: unknown): v is KubeObject[] {
  return Array.isArray(v) && v.every((o) => isRecord(o) && typeof o.apiVersion === 'string' && typeof o.kind === 'string' && isRecord(o.metadata) && typeof o.metadata.name === 'string');
}

/** A file's objects may be remembered unless it holds a Secret (its values stay in the file only). */
const holdsNoSecret = (objects: KubeObject[]): boolean => !objects.some((o) => o.kind === 'Secret');

/**
 * Objects of every file named by `src`. A large file parsed before by the same build is read back
 * from the parse cache (`cache`, see src/load/parse-cache.ts), unless it holds a Secret.
 */
export async function loadSources(src: string, baseDir: string, cache: ParseCache | undefined = parseCacheOf()): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const f of await resolveSources(src, baseDir)) {
    const text = await readFile(f, 'utf8');
    out.push(...cachedParse(cache, text, (t) => parseManifests(t, path.relative(baseDir, f) || f), isObjectList, holdsNoSecret));
  }
  return out;
}

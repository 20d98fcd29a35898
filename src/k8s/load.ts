/**
 * Loading Kubernetes objects for `k8s_apply`: inline definitions, multi-document YAML files,
 * directories, globs, and Liquid templates rendered with the task's variables.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import type { KubeObject } from './types.js';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parse multi-document YAML (or JSON) text into objects; `kind: List` is flattened; empty documents are skipped. */
export function parseManifests(text: string, source: string): KubeObject[] {
  // `prettyErrors` (line/column in messages) makes parsing ~10x slower on large files: parse
  // without it, and again with it only to report an error.
  let docs = YAML.parseAllDocuments(text, { uniqueKeys: true, prettyErrors: false });
  if (docs.some((d) => d.errors.length)) docs = YAML.parseAllDocuments(text, { uniqueKeys: true });
  const out: KubeObject[] = [];
  docs.forEach((d, i) => {
    if (d.errors.length) throw new Error(`${source}: YAML document ${i + 1}: ${d.errors[0].message}`);
    const v: unknown = d.toJS({ maxAliasCount: 100 });
    if (v === null || v === undefined) return;
    out.push(...toObjects(v, `${source} document ${i + 1}`));
  });
  return out;
}

/** Validate and flatten a value (object, list, `kind: List`) into Kubernetes objects. */
export function toObjects(v: unknown, source: string): KubeObject[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => toObjects(x, `${source} item ${i + 1}`));
  if (!isObj(v)) throw new Error(`${source}: expected a Kubernetes object (a map with apiVersion, kind, metadata), got ${typeof v}`);
  if (typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items)) return toObjects(v.items, source);
  if (typeof v.apiVersion !== 'string' || !v.apiVersion) throw new Error(`${source}: missing apiVersion`);
  if (typeof v.kind !== 'string' || !v.kind) throw new Error(`${source}: missing kind`);
  if (!isObj(v.metadata)) throw new Error(`${source}: ${v.kind} has no metadata`);
  if (typeof v.metadata.name !== 'string' || !v.metadata.name) {
    throw new Error(`${source}: ${v.kind} has no metadata.name (generateName is not supported by server-side apply)`);
  }
  return [v as KubeObject];
}

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
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

/** Objects of every file named by `src`. */
export async function loadSources(src: string, baseDir: string): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const f of await resolveSources(src, baseDir)) out.push(...parseManifests(await readFile(f, 'utf8'), path.relative(baseDir, f) || f));
  return out;
}

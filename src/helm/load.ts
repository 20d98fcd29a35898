/**
 * The files of a chart directory exactly as helm loads them (`loader.LoadDir`): the directory is
 * walked in lexical order, symbolic links followed, `.helmignore` applied (see `ignore.ts`), a
 * UTF-8 byte-order mark stripped, and every file sorted into the parts helm keeps apart — the
 * chart's templates, its other files (`.Files`, `crds/`), and the sub-charts vendored in
 * `charts/` (directories and `.tgz` archives; names starting with `_` or `.` are not charts).
 *
 * The digest covers every file helm keeps, sub-charts included: two loads with the same digest are
 * the same chart for helm.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { HelmIgnoreError, isIgnored, parseHelmIgnore, DEFAULT_IGNORE_RULES, type IgnoreRule } from './ignore.js';

/** One loaded file: its path from the chart root (`/`-separated) and content. */
export interface LoadedFile {
  name: string;
  data: Buffer;
}

/** A sub-chart in `charts/`. */
export interface LoadedSubchart {
  /** Directory or archive name in `charts/` (`redis`, `redis-17.0.0.tgz`). */
  name: string;
  /** A `.tgz` archive (its content is not read here). */
  packed: boolean;
  /** Its files, paths relative to the sub-chart (for a directory) or the archive itself (`packed`). */
  files: LoadedFile[];
}

/** A chart directory as helm loads it. */
export interface LoadedChartDir {
  /** Every file helm loads and keeps, in its walk order (lexical by directory). */
  all: LoadedFile[];
  /** `Chart.yaml` text (undefined when missing). */
  chartYaml?: string;
  /** `values.yaml` text. */
  valuesYaml?: string;
  /** `values.schema.json`. */
  schema?: Buffer;
  /** `requirements.yaml` and `requirements.lock` (helm keeps them with the files of an `apiVersion: v1` chart). */
  requirements: Map<string, Buffer>;
  /** `templates/…` → content. */
  templates: Map<string, Buffer>;
  /** helm's `Files` of the chart: every other file, `crds/` and `.prov` files of `charts/` included. */
  files: Map<string, Buffer>;
  subcharts: LoadedSubchart[];
  /** sha256 (hex) of every loaded file's path and content. */
  digest: string;
}

/** helm's per-file limit (`MaxDecompressedFileSize`, 5 MiB in helm 3.14+ and 4). */
const MAX_FILE = 5 * 1024 * 1024;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

async function walk(root: string, rel: string, rules: readonly IgnoreRule[], out: LoadedFile[]): Promise<void> {
  const dir = rel ? path.join(root, rel) : root;
  const names = (await readdir(dir)).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  for (const name of names) {
    const r = rel ? `${rel}/${name}` : name;
    const full = path.join(root, r);
    let st;
    try {
      st = await stat(full); // follows symbolic links, as helm does
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        if (isIgnored(rules, r, false)) continue;
        throw new Error(`${full}: broken symbolic link (helm cannot load the chart; remove it or list it in .helmignore)`);
      }
      throw e;
    }
    if (st.isDirectory()) {
      if (!isIgnored(rules, r, true)) await walk(root, r, rules, out);
      continue;
    }
    if (isIgnored(rules, r, false)) continue;
    if (!st.isFile()) throw new Error(`${full}: cannot load irregular file (helm refuses it too; list it in .helmignore)`);
    if (st.size > MAX_FILE) throw new Error(`${full}: chart file is larger than helm's maximum file size ${MAX_FILE}`);
    let data = await readFile(full);
    if (data.subarray(0, 3).equals(BOM)) data = data.subarray(3);
    out.push({ name: r, data });
  }
}

/** The digest of a list of files (path and content of each, in path order). */
export function filesDigest(files: readonly LoadedFile[]): string {
  const h = createHash('sha256');
  h.update('kplay-chart-v1\0');
  for (const f of [...files].sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)))) {
    h.update(`${f.name}\0${f.data.length}\0`);
    h.update(f.data);
  }
  return h.digest('hex');
}

/**
 * Load a chart directory as helm does (see the module comment).
 * @throws Error when `.helmignore` has a rule helm refuses, or a file helm cannot load (irregular,
 *   too large, a broken link) is not ignored.
 */
export async function loadChartDir(dir: string): Promise<LoadedChartDir> {
  let rules: IgnoreRule[] = [...DEFAULT_IGNORE_RULES];
  try {
    rules = parseHelmIgnore(await readFile(path.join(dir, '.helmignore'), 'utf8'));
  } catch (e) {
    if (e instanceof HelmIgnoreError) throw new Error(`${path.join(dir, '.helmignore')}: ${e.message.replace(/^\.helmignore /, '')}`);
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const walked: LoadedFile[] = [];
  await walk(dir, '', rules, walked);
  // helm reads, then drops, what is in charts/ under a name starting with `_` or `.` (not a chart)
  const all = walked.filter((f) => !/^charts\/[_.]/.test(f.name));
  const out: LoadedChartDir = { all, templates: new Map(), files: new Map(), requirements: new Map(), subcharts: [], digest: filesDigest(all) };
  const subs = new Map<string, LoadedSubchart>();
  for (const f of all) {
    if (f.name === 'Chart.yaml') out.chartYaml = f.data.toString('utf8');
    else if (f.name === 'values.yaml') out.valuesYaml = f.data.toString('utf8');
    else if (f.name === 'values.schema.json') out.schema = f.data;
    else if (f.name === 'Chart.lock') continue;
    else if (f.name === 'requirements.lock' || f.name === 'requirements.yaml') out.requirements.set(f.name, f.data);
    else if (f.name.startsWith('templates/')) out.templates.set(f.name, f.data);
    else if (f.name.startsWith('charts/')) {
      if (path.extname(f.name) === '.prov') {
        out.files.set(f.name, f.data);
        continue;
      }
      const inner = f.name.slice('charts/'.length);
      const slash = inner.indexOf('/');
      const sub = slash < 0 ? inner : inner.slice(0, slash);
      const packed = path.extname(sub) === '.tgz';
      let s = subs.get(sub);
      if (!s) subs.set(sub, (s = { name: sub, packed, files: [] }));
      if (packed) s.files.push({ name: sub, data: f.data });
      else if (slash >= 0) s.files.push({ name: inner.slice(slash + 1), data: f.data });
    } else out.files.set(f.name, f.data);
  }
  out.subcharts = [...subs.values()];
  return out;
}

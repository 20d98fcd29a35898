/**
 * The files a shard pod needs, gathered for `kplay fleet job`: the playbook's directory (its roles,
 * task files, templates, vars files, modules — everything next to it), the inventory (its files and
 * its `group_vars/`, `host_vars/`, `cluster_vars/`) and `-e @file` vars files. Paths inside the
 * bundle are relative, `/`-separated: the playbook directory is the bundle's root; anything from
 * outside it goes under `_external/<n>-<name>/` and the command line is rewritten to match.
 *
 * Hidden entries (`.git`, `.kplay` run records, dotfiles) and `node_modules` are left out.
 */
import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { InputError } from '../load/errors.js';
import { resolveInventory } from '../inventory/source.js';
import { CONFIGMAP_MAX_BYTES, tooBigError } from './job-limit.js';

/** One file of the bundle. */
export interface BundleFile {
  /** Path inside the bundle (relative, `/`-separated, e.g. `roles/web/tasks/main.yml`). */
  path: string;
  /** Absolute path on this machine (for messages). */
  source: string;
  content: Buffer;
}

/** What the pod runs against: the files and the arguments that name them. */
export interface Bundle {
  files: BundleFile[];
  /** The playbook, relative to the bundle root. */
  playbook: string;
  /** The inventory reference inside the bundle (a file or directory), when one was given. */
  inventory?: string;
  /** `-e` values with `@file` rewritten to the bundled file. */
  extraVars: string[];
}

/** Directory names never bundled. */
const SKIP_DIRS = new Set(['node_modules']);
/** Inventory sub-directories that hold variables (bundled with the inventory). */
const INVENTORY_VAR_DIRS = ['group_vars', 'host_vars', 'cluster_vars'];

function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}

function inside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Every regular file under `dir` (symlinks followed once per real directory, hidden entries and node_modules skipped), sorted. */
async function walk(dir: string, out: string[] = [], seen = new Set<string>()): Promise<string[]> {
  const real = await realpath(dir);
  if (seen.has(real)) return out; // a symlink back up the tree
  seen.add(real);
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (e.name.startsWith('.') || SKIP_DIRS.has(e.name)) continue;
    const full = path.join(dir, e.name);
    const st = e.isSymbolicLink() ? await stat(full).catch(() => undefined) : await lstat(full);
    if (!st) continue; // a dangling symlink
    if (st.isDirectory()) await walk(full, out, seen);
    else if (st.isFile()) out.push(full);
  }
  return out;
}

async function isDir(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isDirectory() === true;
}

/** Gathers files under bundle paths, deduplicated by absolute source. */
class Collector {
  readonly files = new Map<string, BundleFile>();
  private external = 0;
  private bytes = 0;
  constructor(readonly root: string) {}

  /** The bundle path of an absolute path under the root, or a new `_external/<n>-<name>` prefix for one outside it. */
  placeOutside(abs: string): string {
    this.external++;
    return `_external/${this.external}-${path.basename(abs)}`;
  }

  async add(abs: string, bundlePath: string): Promise<void> {
    if (this.files.has(abs)) return;
    // stop as soon as it cannot fit (a playbook in a home directory would otherwise read it all)
    const size = (await stat(abs)).size;
    if (this.bytes + size > CONFIGMAP_MAX_BYTES) {
      const sized = [...this.files.values()].map((f) => ({ path: f.path, bytes: f.content.length }));
      throw tooBigError([...sized, { path: bundlePath, bytes: size }], this.bytes + size, false);
    }
    this.bytes += size;
    this.files.set(abs, { path: bundlePath, source: abs, content: await readFile(abs) });
  }

  /** Add a directory tree; `prefix` is its bundle path. */
  async addTree(absDir: string, prefix: string): Promise<void> {
    for (const f of await walk(absDir)) await this.add(f, prefix === '' ? toPosix(path.relative(absDir, f)) : `${prefix}/${toPosix(path.relative(absDir, f))}`);
  }

  /** The bundle path of `abs` (a file or directory) when it is under the root. */
  rel(abs: string): string {
    return toPosix(path.relative(this.root, abs)) || '.';
  }
}

/** Options of {@link collectBundle}. */
export interface BundleOptions {
  playbook: string;
  inventory?: string;
  extraVars?: string[];
  cwd: string;
}

/**
 * Gather the bundle. Throws InputError when the playbook or inventory cannot be found or a
 * `-e @file` does not exist.
 */
export async function collectBundle(opts: BundleOptions): Promise<Bundle> {
  const pbAbs = path.resolve(opts.cwd, opts.playbook);
  if (!(await stat(pbAbs).catch(() => undefined))?.isFile()) throw new InputError(`playbook ${opts.playbook} not found`, undefined, 'pass the path of the playbook file');
  const root = path.dirname(pbAbs);
  const c = new Collector(root);
  await c.addTree(root, '');
  // the playbook itself, even when hidden or under a skipped name
  await c.add(pbAbs, toPosix(path.relative(root, pbAbs)));

  let inventory: string | undefined;
  if (opts.inventory !== undefined) {
    const inv = await resolveInventory(opts.inventory, { cwd: opts.cwd, playbookDir: root });
    const invRef = inv.isDir ? inv.dir : (inv.files[0] ?? inv.dir);
    const invDirPrefix = inside(root, inv.dir) ? c.rel(inv.dir) : c.placeOutside(inv.dir);
    const under = (abs: string): string => {
      const r = toPosix(path.relative(inv.dir, abs));
      return invDirPrefix === '.' ? r : `${invDirPrefix}/${r}`;
    };
    for (const f of inv.files) await c.add(f, under(f));
    for (const d of INVENTORY_VAR_DIRS) {
      const abs = path.join(inv.dir, d);
      if (await isDir(abs)) await c.addTree(abs, under(abs));
    }
    inventory = inv.isDir ? (invDirPrefix === '.' ? '.' : invDirPrefix) : under(invRef);
  }

  const extraVars: string[] = [];
  for (const raw of opts.extraVars ?? []) {
    const v = raw.trim();
    if (!v.startsWith('@')) {
      extraVars.push(raw);
      continue;
    }
    const abs = path.resolve(opts.cwd, v.slice(1));
    if (!(await stat(abs).catch(() => undefined))?.isFile()) throw new InputError(`-e ${v}: file not found`, undefined, 'pass the path of a YAML/JSON vars file');
    const existing = c.files.get(abs);
    const bp = existing?.path ?? (inside(root, abs) ? c.rel(abs) : c.placeOutside(abs));
    await c.add(abs, bp);
    extraVars.push(`@${bp}`);
  }
  const files = [...c.files.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, playbook: toPosix(path.relative(root, pbAbs)), ...(inventory !== undefined ? { inventory } : {}), extraVars };
}

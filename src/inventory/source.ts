/**
 * Where an inventory reference points: a file or directory path, or a bare name looked up in
 * `inventories/` next to the playbook and in the working directory (`resolveInventory`). Reading
 * the files is document.ts's job, building the Inventory resolve.ts's.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { InputError } from '../load/errors.js';
import { byName } from './builder.js';
import { expandTilde } from './paths.js';
import type { LoadInventoryOptions } from './types.js';

/** The extensions of a YAML inventory file. */
export const YAML_EXTS = ['.yml', '.yaml'];

/** An inventory reference that points to nothing (ansible-playbook warns and goes on without it). */
export class InventoryNotFound extends InputError {}

/** Whether `p` is a file, a directory, or nothing. */
export async function kindOfPath(p: string): Promise<'file' | 'dir' | undefined> {
  try {
    const s = await stat(p);
    return s.isDirectory() ? 'dir' : 'file';
  } catch {
    return undefined;
  }
}

/** Where an inventory reference points to. */
export interface ResolvedInventory {
  /**
   * Absolute paths of the inventory files: the file itself, or every inventory file of a directory
   * (in name order, as Ansible reads a directory source).
   */
  files: string[];
  /** Absolute directory of the inventory (where `group_vars/`, `host_vars/` and `cluster_vars/` are). */
  dir: string;
  /** True for a directory inventory. */
  isDir: boolean;
}

/** Extensions Ansible skips in a directory inventory (its default INVENTORY_IGNORE_EXTS). */
const IGNORED_EXTS = ['.pyc', '.pyo', '.swp', '.bak', '~', '.rpm', '.md', '.txt', '.rst', '.orig', '.cfg', '.retry'];
/** Directories of a directory inventory that hold variables, not inventory files. */
const VAR_DIRS = ['group_vars', 'host_vars', 'cluster_vars'];

/** The inventory files of a directory, as Ansible reads a directory source (subdirectories are not read). */
async function inventoryFilesIn(dir: string): Promise<string[]> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => byName(a.name, b.name));
  const files = entries
    .filter((e) => !e.isDirectory() && !e.name.startsWith('.') && !IGNORED_EXTS.some((x) => e.name.endsWith(x)) && !VAR_DIRS.includes(e.name))
    .map((e) => path.join(dir, e.name));
  if (files.length === 0) {
    throw new InputError(
      `inventory directory ${dir} has no inventory file`,
      undefined,
      'a directory inventory holds YAML or INI inventory files (e.g. hosts.yml) plus optional group_vars/, host_vars/ and cluster_vars/',
    );
  }
  return files;
}

/**
 * Resolve an inventory reference: a file or directory path (relative to `cwd`, `~/` expanded),
 * or a bare name (no slash, no extension, not an existing path) looked up as
 * `inventories/<ref>.yml`, `inventories/<ref>.yaml` and `inventories/<ref>/`, first next to
 * the playbook, then in `cwd`. Throws an InputError listing every place tried.
 */
export async function resolveInventory(ref: string, opts: LoadInventoryOptions): Promise<ResolvedInventory> {
  const env = opts.env ?? process.env;
  if (ref.trim() === '') throw new InputError('empty inventory reference');
  let expanded: string;
  try {
    expanded = expandTilde(ref, env);
  } catch (e) {
    throw new InputError(`inventory ${e instanceof Error ? e.message : String(e)}`);
  }
  const direct = path.resolve(opts.cwd, expanded);
  const tried = [direct];
  const kind = await kindOfPath(direct);
  if (kind === 'file') return { files: [direct], dir: path.dirname(direct), isDir: false };
  if (kind === 'dir') return { files: await inventoryFilesIn(direct), dir: direct, isDir: true };
  const bare = !ref.includes('/') && !ref.includes(path.sep) && path.extname(ref) === '';
  if (bare) {
    const bases = [...new Set([opts.playbookDir, opts.cwd].filter((d): d is string => !!d).map((d) => path.resolve(opts.cwd, d)))];
    for (const base of bases) {
      for (const ext of YAML_EXTS) {
        const p = path.join(base, 'inventories', `${ref}${ext}`);
        tried.push(p);
        if ((await kindOfPath(p)) === 'file') return { files: [p], dir: path.dirname(p), isDir: false };
      }
      const d = path.join(base, 'inventories', ref);
      tried.push(`${d}${path.sep}`);
      if ((await kindOfPath(d)) === 'dir') return { files: await inventoryFilesIn(d), dir: d, isDir: true };
    }
  }
  throw new InventoryNotFound(
    `inventory '${ref}' not found; tried:\n${tried.map((t) => `    ${t}`).join('\n')}`,
    undefined,
    bare ? 'pass a file or directory path, or put the inventory in inventories/<name>.yml' : 'check the path',
  );
}

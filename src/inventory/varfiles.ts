/**
 * Finding the variable files of an inventory's `group_vars/`, `host_vars/` and `cluster_vars/`
 * directories, as Ansible's `host_group_vars` plugin does: for an entity `name`, the file `name`
 * (no extension), `name.yml`, `name.yaml`, `name.json`, and every such file (recursively, hidden
 * files and `~` backups skipped) under a directory `name/`. Other files are not variable files.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';

/** Extensions of variable files (`''`: no extension), as Ansible's YAML_FILENAME_EXTENSIONS plus none. */
export const VAR_FILE_EXTS = ['', '.yml', '.yaml', '.json'];

/** The variable files of one entity in a var directory, in load order. */
export interface EntityVarFiles {
  /** The entity (group or cluster) name the files are for. */
  name: string;
  /** Absolute paths, in the order Ansible loads them (later files win per key). */
  files: string[];
}

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function varExt(file: string): string | undefined {
  const ext = path.extname(file);
  return VAR_FILE_EXTS.includes(ext) ? ext : undefined;
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => byName(a.name, b.name));
  for (const e of entries) {
    if (e.name.startsWith('.') || e.name.endsWith('~')) continue;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(full)));
    else if (varExt(e.name) !== undefined) out.push(full);
  }
  return out;
}

/**
 * Every entity that has variable files in `varDir` (a directory that exists), in name order.
 * For one name: the extension-less file or directory first, then `.yml`, `.yaml`, `.json` (Ansible's order).
 */
export async function entityVarFiles(varDir: string): Promise<EntityVarFiles[]> {
  const byEntity = new Map<string, { rank: number; files: string[] }[]>();
  const entries = await readdir(varDir, { withFileTypes: true });
  for (const e of entries) {
    if (e.name.startsWith('.') || e.name.endsWith('~')) continue;
    const full = path.join(varDir, e.name);
    let name: string;
    let rank: number;
    let files: string[];
    if (e.isDirectory()) {
      name = e.name;
      rank = 0;
      files = await filesUnder(full);
    } else {
      const ext = varExt(e.name);
      if (ext === undefined) continue;
      name = ext === '' ? e.name : e.name.slice(0, -ext.length);
      rank = VAR_FILE_EXTS.indexOf(ext);
      files = [full];
    }
    const list = byEntity.get(name) ?? [];
    list.push({ rank, files });
    byEntity.set(name, list);
  }
  return [...byEntity.entries()]
    .sort((a, b) => byName(a[0], b[0]))
    .map(([name, list]) => ({ name, files: list.sort((a, b) => a.rank - b.rank).flatMap((l) => l.files) }));
}

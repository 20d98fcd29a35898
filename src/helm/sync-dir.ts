/**
 * Copy a rendered directory tree into a destination, writing only the files whose content differs
 * (`helm_template`'s `output_dir`: changed only when a file is written).
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Relative paths of the regular files under `dir`, sorted. */
async function filesUnder(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(dir, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(dir, r)));
    else if (e.isFile()) out.push(r);
  }
  return out.sort();
}

async function contentOf(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/**
 * The files of `src` that are missing or different in `dest` (relative paths); written to `dest`
 * unless `dryRun`. Files of `dest` that `src` does not have are left alone.
 */
export async function syncDir(src: string, dest: string, dryRun: boolean): Promise<string[]> {
  const changed: string[] = [];
  for (const rel of await filesUnder(src)) {
    const data = await readFile(path.join(src, rel));
    const old = await contentOf(path.join(dest, rel));
    if (old !== undefined && old.equals(data)) continue;
    changed.push(rel);
    if (dryRun) continue;
    await mkdir(path.dirname(path.join(dest, rel)), { recursive: true });
    await writeFile(path.join(dest, rel), data);
  }
  return changed;
}

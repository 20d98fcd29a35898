/**
 * How lookups find files as Ansible does: `~` expanded, relative paths in the role's and playbook's
 * directories (`ctx.searchPaths`), globs (`fileglob`), and `first_found`.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { pathDwimRelativeStack } from '../core/dwim.js';
import { fnmatchRegex } from '../core/fnmatch.js';
import type { Kwargs, PluginContext } from './plugins.js';
import { ExprError, isMap, truthy } from './values.js';
import { text } from './filters/def.js';
import { flat1 } from './lookup-args.js';

/** `~` and `~/x` as Ansible's `unfrackpath` expands them (the controller user's home directory). */
export function expandUser(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(homedir(), p.slice(1)) : p;
}

/**
 * Ansible's `find_file_in_search_path`: the search path (`ansible_search_path`) as
 * `path_dwim_relative_stack` walks it, `<dir>/<subdir>/<name>` then `<dir>/<name>` for each, the
 * playbook directory's last. `tried` gets every candidate.
 */
export function findFile(ctx: PluginContext, subdir: string, name: string, tried: string[] = []): string | undefined {
  return pathDwimRelativeStack(ctx.searchPaths, subdir, name, { base: basedir(ctx), ...(ctx.inRole ? { isRole: true } : {}), tried });
}

/** The directory relative commands run in and relative paths resolve against (the playbook's). */
export function basedir(ctx: PluginContext): string {
  return ctx.searchPaths[ctx.searchPaths.length - 1] ?? ctx.fileRoots[0] ?? process.cwd();
}

/** Python's `glob.glob(pattern)` (no hidden files for wildcards). */
export function glob(pattern: string): string[] {
  const parts = pattern.split('/');
  let paths = [pattern.startsWith('/') ? '/' : '.'];
  for (const part of parts) {
    if (part === '') continue;
    if (!/[*?[]/.test(part)) {
      paths = paths.map((p) => path.join(p, part)).filter((p) => existsSync(p));
      continue;
    }
    const re = fnmatchRegex(part);
    const next: string[] = [];
    for (const p of paths) {
      let names: string[] = [];
      try {
        names = readdirSync(p).sort();
      } catch {
        continue;
      }
      for (const n of names) if (re.test(n) && (!n.startsWith('.') || part.startsWith('.'))) next.push(path.join(p, n));
    }
    paths = next;
  }
  return paths;
}

export function fileglob(term: string, ctx: PluginContext): string[] {
  const name = path.basename(term);
  const dirs: string[] = [];
  if (name !== term) {
    const found = findFile(ctx, 'files', path.dirname(term));
    if (found) dirs.push(found);
  } else dirs.push(...ctx.searchPaths.flatMap((b) => [path.join(b, 'files'), b]));
  for (const d of dirs) {
    const hits = glob(path.join(d, name)).filter((g) => {
      try {
        return statSync(g).isFile();
      } catch {
        return false;
      }
    });
    if (hits.length > 0) return hits;
  }
  return [];
}

export function firstFound(terms: readonly unknown[], kwargs: Kwargs, ctx: PluginContext): unknown[] {
  const skip = truthy(kwargs.skip ?? false);
  const split = (v: unknown): string[] =>
    (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]).flatMap((x) => text(x).split(/[,;:]/)).map((x) => x.trim()).filter((x) => x !== '');
  let files: string[] = split(kwargs.files);
  let paths: string[] = split(kwargs.paths);
  for (const t of flat1(terms)) {
    if (isMap(t)) {
      files.push(...split(t.files));
      paths.push(...split(t.paths));
      if (t.skip !== undefined && truthy(t.skip)) return firstFoundIn(files, paths, ctx, true);
    } else if (typeof t === 'string') files.push(t);
  }
  files = files.length ? files : [];
  paths = paths.length ? paths : [];
  return firstFoundIn(files, paths, ctx, skip);
}

export function firstFoundIn(files: readonly string[], paths: readonly string[], ctx: PluginContext, skip: boolean): unknown[] {
  const candidates = paths.length > 0 ? paths.flatMap((p) => files.map((f) => path.join(p, f))) : [...files];
  for (const c of candidates) {
    const found = findFile(ctx, 'files', c);
    if (found) return [found];
  }
  if (skip) return [];
  throw new ExprError('No file was found when using first_found.', undefined, `looked for ${candidates.map((c) => JSON.stringify(c)).join(', ')} in ${ctx.searchPaths.join(', ')}`);
}

/**
 * Where `{% include %}`, `{% import %}` and `{% from %}` find their files: Jinja's FileSystemLoader
 * on the search path ansible-core gives the environment — the template action's (each directory
 * of `ansible_search_path`, the playbook's, then the template's own, each as `<dir>/templates` then
 * `<dir>`), the template lookup's (the template's directory, then each of `ansible_search_path` as
 * `<dir>/templates`, `<dir>`), else (a template in a task, vars or a name) the playbook directory
 * (ansible-core's loader basedir).
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Scope } from './evaluate.js';
import { ExprError } from './values.js';

function str(scope: Scope, name: string): string | undefined {
  const v = scope.has(name) ? scope.lookup(name) : undefined;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function strings(scope: Scope, name: string): string[] {
  const v = scope.has(name) ? scope.lookup(name) : undefined;
  return Array.isArray(v) ? v.filter((d): d is string => typeof d === 'string') : [];
}

const withTemplates = (dirs: readonly string[]): string[] => dirs.flatMap((d) => [path.join(d, 'templates'), d]);

/** The search path of a render, from its variables (see the file header). */
export function jinjaSearchPath(scope: Scope): string[] {
  const basedir = str(scope, 'playbook_dir');
  const file = str(scope, 'template_fullpath');
  // outside a run (no playbook directory) an inline template reads no file
  if (!file) return basedir ? [basedir] : [];
  const sp = strings(scope, 'ansible_search_path');
  // the template module sets template_destpath; the template lookup sets it to None
  if (str(scope, 'template_destpath') !== undefined) return withTemplates([...sp, ...(basedir ? [basedir] : []), path.dirname(file)]);
  return [path.dirname(file), ...withTemplates(sp)];
}

/** Jinja's `split_template_path`: the pieces of a name (`..` is refused, empty and `.` pieces dropped). */
function pieces(name: string): string[] | undefined {
  const out: string[] = [];
  for (const p of name.split('/')) {
    if (p === '..') return undefined;
    if (p !== '' && p !== '.') out.push(p);
  }
  return out;
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The first of `names` on `searchPath` (its file and text), undefined when none is there. */
export function findTemplate(names: readonly string[], searchPath: readonly string[]): { name: string; file: string; text: string } | undefined {
  for (const name of names) {
    const parts = pieces(name);
    if (!parts) continue;
    for (const dir of searchPath) {
      const file = path.join(dir, ...parts);
      if (isFile(file)) return { name, file, text: readFileSync(file, 'utf8') };
    }
  }
  return undefined;
}

/** Jinja's TemplateNotFound / TemplatesNotFound text. */
export function notFound(names: readonly string[], searchPath: readonly string[]): ExprError {
  if (names.length !== 1) return new ExprError(`none of the templates given were found: ${names.join(', ')}`);
  return new ExprError(`'${names[0] ?? ''}' not found in search path${searchPath.length === 1 ? '' : 's'}: ${searchPath.map((p) => `'${p}'`).join(', ')}`);
}

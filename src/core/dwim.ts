/**
 * Relative paths as ansible-core's DataLoader finds them (lib/ansible/parsing/dataloader.py):
 * `path_dwim` (against the playbook directory), `path_dwim_relative` (a role's or play's directory,
 * with a `tasks`/`files`/`templates`/`vars` subdirectory, for task files) and
 * `path_dwim_relative_stack` (a search path, for `src:` of `template`/`copy` and the
 * `file`/`template`/`fileglob` lookups), and which task file an `include_tasks`/`import_tasks`
 * names (its `included_file.py` and `helpers.py`). Every candidate list is Ansible's, in its order.
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A path with `~` expanded, made absolute against the working directory and normalised (`unfrackpath(follow=False)`). */
function unfrack(p: string): string {
  const home = process.env.HOME || os.homedir();
  const out = p === '~' || p.startsWith('~/') ? home + p.slice(1) : p;
  return path.resolve(out);
}

/** Python's `os.path.join`: a later absolute part starts the path again. */
function join(...parts: string[]): string {
  let out = '';
  for (const p of parts) out = p.startsWith('/') ? p : out === '' || out.endsWith('/') ? out + p : `${out}/${p}`;
  return out;
}

/** Python's `os.path.dirname`: `''` for a bare name. */
function dirname(p: string): string {
  const i = p.lastIndexOf('/');
  if (i < 0) return '';
  const head = p.slice(0, i + 1);
  return /^\/+$/.test(head) ? head : head.replace(/\/+$/, '');
}

const absoluteOrHome = (p: string): boolean => p.startsWith('/') || p.startsWith('~');

/** A path whose last part is `tasks` (ansible-core's `RE_TASKS`). */
const endsInTasks = (p: string): boolean => /(?:^|\/)tasks\/?$/.test(p);

const anyExists = (dir: string, files: readonly string[]): boolean => files.some((f) => existsSync(join(dir, f)));
const MAINS = ['main.yml', 'main.yaml', 'main'];
const TASKED = ['tasks/main.yml', 'tasks/main.yaml', 'tasks/main', 'meta/main.yml', 'meta/main.yaml', 'meta/main'];

/** ansible-core's "imperfect role detection" (`DataLoader._is_role`): a directory with `tasks/main` or `meta/main`, or a `tasks` directory with `main`. */
export function isRolePath(p: string): boolean {
  if (endsInTasks(p) && anyExists(p, MAINS)) return true;
  return anyExists(unfrack(p), TASKED) || anyExists(path.dirname(p), TASKED);
}

/** `path_dwim`: `given` against `base` (the playbook directory) unless absolute. */
export function pathDwim(base: string, given: string): string {
  return absoluteOrHome(given) ? unfrack(given) : unfrack(join(base, given));
}

/**
 * `path_dwim_relative(dir, sub, source, is_role)`: the candidates for `source` from a role's or
 * play's directory `dir` with its `sub` directory (`tasks`, `files`, `templates`, `vars`), then
 * the working directory and the playbook directory `base`; the first that exists, else the last.
 */
export function pathDwimRelative(dir: string, sub: string, source: string, base: string, isRole = false): string {
  return dwimRelativeCandidates(dir, sub, source, base, isRole).find((c) => existsSync(c)) ?? pathDwim(base, source);
}

/** The candidates {@link pathDwimRelative} tries, in order. */
export function dwimRelativeCandidates(dir: string, sub: string, source: string, base: string, isRole = false): string[] {
  if (absoluteOrHome(source)) return [unfrack(source)];
  const out = [join(dir, sub, source)];
  let root = unfrack(dir);
  const role = isRole || isRolePath(dir);
  if (role && endsInTasks(dir)) root = unfrack(path.dirname(dir));
  out.push(unfrack(join(root, sub, source)));
  if (role && !source.endsWith(sub)) out.push(unfrack(join(root, 'tasks', source)));
  out.push(unfrack(join(sub, source)), unfrack(join(root, source)), pathDwim(base, join(sub, source)), pathDwim(base, source));
  return out;
}

/** What {@link pathDwimRelativeStack} takes besides the search path, the subdirectory and the name. */
export interface StackOptions {
  /** The playbook directory (ansible-core's loader basedir), tried last. */
  base: string;
  /** The task is in a role (lookups pass `role_path` being set); else each directory is checked for looking like one. */
  isRole?: boolean;
  /** Whether a candidate counts as found. @default existsSync */
  exists?: (p: string) => boolean;
  /** Receives every candidate, in order. */
  tried?: string[];
}

/**
 * `path_dwim_relative_stack(paths, sub, source)`: for each directory of the search path
 * (`ansible_search_path`: the role's root, the task file's directory, the playbook directory), its
 * `sub` directory then itself (a task file directory inside a role's `tasks/` also tries the
 * role's `sub` and `tasks/`), then the playbook directory's. Undefined when none exists.
 */
export function pathDwimRelativeStack(paths: readonly string[], sub: string, source: string, o: StackOptions): string | undefined {
  const tried = o.tried ?? [];
  const exists = o.exists ?? existsSync;
  if (absoluteOrHome(source)) {
    const p = unfrack(source);
    tried.push(p);
    return exists(p) ? p : undefined;
  }
  const firstPart = source.split('/')[0];
  const start = tried.length;
  for (const p of paths) {
    const up = unfrack(p);
    const parent = path.dirname(up);
    if (parent.endsWith('/tasks') && (o.isRole || isRolePath(p))) tried.push(join(path.dirname(parent), sub, source), join(parent, source));
    if (firstPart !== sub) tried.push(join(up, sub, source));
    tried.push(join(up, source));
  }
  if (firstPart !== sub) tried.push(join(o.base, sub, source));
  tried.push(join(o.base, source));
  return tried.slice(start).find(exists);
}

/** Where an `include_tasks`/`import_tasks` is, for finding the file it names. */
export interface IncludeSite {
  /** The file named (templated already). */
  target: string;
  /** The directory of the role the task belongs to, if any. */
  roleDir?: string;
  /** A handler's include looks in `handlers/`, a task's in `tasks/`. */
  handler: boolean;
  /**
   * The file names of the includes and imports the task is inside, innermost first, up to the
   * role it is in (an `include_role`/`import_role` ends the chain: its role's directory is the
   * role's own).
   */
  parents: readonly string[];
  /** The playbook directory (ansible-core's loader basedir). */
  playbookDir: string;
  /** `include_tasks` (dynamic) or `import_tasks` (static): ansible-core orders the candidates differently. */
  dynamic: boolean;
}

/**
 * The task file an include names, as ansible-core finds it: each enclosing include's directory
 * (accumulated outwards) in turn, then the role's `tasks/` (or `handlers/`) and root, or the
 * playbook directory. An `include_tasks` in a role tries the role's own candidates first at every level.
 */
export function includeFile(site: IncludeSite): string {
  const sub = site.handler ? 'handlers' : 'tasks';
  const { target, roleDir, playbookDir } = site;
  let file: string | undefined;
  let cumulative: string | undefined;
  for (const parent of site.parents) {
    const parentDir = dirname(parent);
    cumulative = cumulative === undefined ? parentDir : path.isAbsolute(cumulative) ? cumulative : join(parentDir, cumulative);
    if (roleDir) {
      const nested = join(roleDir, sub, cumulative);
      if (site.dynamic) {
        const candidates = [pathDwimRelative(roleDir, sub, target, playbookDir, true), pathDwimRelative(nested, sub, target, playbookDir, true)];
        file = candidates.find((c) => existsSync(c)) ?? candidates[1];
      } else file = pathDwimRelative(nested, sub, target, playbookDir);
    } else file = pathDwimRelative(playbookDir, cumulative, target, playbookDir);
    if (file !== undefined && existsSync(file)) return file;
  }
  if (file !== undefined) return file;
  return roleDir ? pathDwimRelative(roleDir, sub, target, playbookDir, true) : pathDwim(playbookDir, target);
}

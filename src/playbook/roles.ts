/**
 * Roles: finding a role and reading its files. A role is a directory (or an npm package named
 * `kplay-role-*`) with `tasks/`, `handlers/`, `defaults/`, `vars/`, `meta/`, `files/` and
 * `templates/`, as in Ansible. The loader (role-expand.ts) turns a use of a role into task nodes; the
 * variables it brings are layered by src/vars/roles.ts.
 */
import { setting } from '../core/settings.js';
import { INHERITED_KEYWORDS } from './syntax.js';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { InputError, type SourcePos } from '../load/errors.js';
import { isRecord } from '../core/shape.js';
import { loadYamlDoc } from '../load/yaml.js';
import { templar } from '../template/index.js';

type Obj = Record<string, unknown>;

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** `node_modules` directories from `dir` up to the file system root (Node's lookup order). */
function nodeModulesDirs(dir: string): string[] {
  const out: string[] = [];
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    out.push(path.join(d, 'node_modules'));
    if (path.dirname(d) === d) break;
  }
  return out;
}

/**
 * The directory of collection role `ns.coll.role` (a name of three or more dotted parts): under
 * `collections/` next to the playbook, then each collections path (`ANSIBLE_COLLECTIONS_PATH`,
 * `collections_path` in ansible.cfg), as `<dir>/ansible_collections/<ns>/<coll>/roles/<role>`.
 */
function collectionRoleCandidates(name: string, playbookDir: string): string[] {
  const parts = name.split('.');
  if (parts.length < 3 || !parts.every((p) => /^[A-Za-z_][\w]*$/.test(p))) return [];
  const [ns, coll, ...rest] = parts as [string, string, ...string[]];
  const roots = [path.join(playbookDir, 'collections'), ...setting('collectionsPath')];
  return roots.flatMap((r) => {
    const base = path.basename(r) === 'ansible_collections' ? r : path.join(r, 'ansible_collections');
    return [path.join(base, ns, coll, 'roles', ...rest)];
  });
}

/**
 * Find a role's directory, in ansible-core's order: a collection role (`ns.coll.role`, see
 * {@link collectionRoleCandidates}); then `roles/<name>` next to the playbook, each directory of
 * the roles path (`KPLAY_ROLES_PATH`, else `ANSIBLE_ROLES_PATH`, else `roles_path` of ansible.cfg,
 * else Ansible's default), the directory holding the role that depends on it (and, a kplay
 * extension, that role's own `roles/`), the playbook directory, and the name as a path from the
 * working directory. Last, npm packages `kplay-role-<name>` (or `<name>` when it is a package
 * name) in `node_modules` of the playbook directory and its parents, and of the working directory.
 */
export function findRole(name: string, where: { playbookDir: string; parentRoleDir?: string }, pos: SourcePos | undefined): string {
  const tried: string[] = [];
  const candidates: string[] = [];
  if (path.isAbsolute(name)) candidates.push(name);
  else {
    candidates.push(...collectionRoleCandidates(name, where.playbookDir));
    candidates.push(path.join(where.playbookDir, 'roles', name));
    for (const d of setting('rolesPath')) candidates.push(path.resolve(d, name));
    if (where.parentRoleDir) candidates.push(path.join(path.dirname(where.parentRoleDir), name), path.join(where.parentRoleDir, 'roles', name));
    candidates.push(path.join(where.playbookDir, name), path.resolve(name));
    const pkgNames = /(^|\/)kplay-role-[^/]+$/.test(name) ? [name] : [`kplay-role-${name}`];
    if (!name.startsWith('.')) for (const nm of [...nodeModulesDirs(where.playbookDir), ...nodeModulesDirs(process.cwd())]) for (const p of pkgNames) candidates.push(path.join(nm, p));
  }
  for (const c of [...new Set(candidates)]) {
    tried.push(c);
    if (isDir(c)) return c;
  }
  throw new InputError(
    `role '${name}' not found`,
    pos,
    `looked in: ${tried.slice(0, 6).join(', ')}${tried.length > 6 ? `, … (${tried.length} places)` : ''}; put it in roles/${name}/ next to the playbook, set roles_path in ansible.cfg (or ANSIBLE_ROLES_PATH / KPLAY_ROLES_PATH), or npm install kplay-role-${name}`,
  );
}

/** The display name of a role found at `dir` (an npm package's name without `kplay-role-`). */
export function roleDisplayName(name: string, dir: string): string {
  const base = path.basename(dir);
  return base.startsWith('kplay-role-') ? base.slice('kplay-role-'.length) : name.startsWith('.') || path.isAbsolute(name) ? base : name.replace(/^.*\//, '');
}

/** The file of `<dir>/<sub>/<file>` (`main` by default; `.yml`, `.yaml` or as given), if any. */
export function roleFile(dir: string, sub: string, file = 'main'): string | undefined {
  const base = path.join(dir, sub, file);
  for (const f of [base, `${base}.yml`, `${base}.yaml`]) if (existsSync(f) && !isDir(f)) return f;
  return undefined;
}

/** A role's YAML map file (`defaults`, `vars`, `meta`); `{}` when absent. Scalars tagged `!secret` go to `addSecrets`. */
export async function roleMap(dir: string, sub: string, file: string | undefined, from: SourcePos | undefined, addSecrets: (values: readonly string[]) => void): Promise<Obj> {
  const asDir = path.join(dir, sub, file ?? 'main');
  if (sub !== 'meta' && isDir(asDir)) return roleMapDir(asDir, sub, dir, from, addSecrets);
  const f = roleFile(dir, sub, file);
  if (!f) {
    if (file !== undefined && file !== 'main') throw new InputError(`role ${path.basename(dir)}: ${sub}/${file} not found`, from);
    return {};
  }
  const { value, secrets } = await loadYamlDoc(f, from);
  addSecrets(secrets);
  if (value === null || value === undefined) return {};
  if (!isRecord(value)) throw new InputError(`${sub}/${path.basename(f)} of role ${path.basename(dir)} must be a map`, { file: f, line: 1, col: 1 });
  if (sub !== 'meta') templar.check(value);
  return value;
}

/**
 * `defaults/main/` or `vars/main/` as a directory (Ansible's `allow_dir`): every `.yml`, `.yaml`,
 * `.json` or extension-less file under it, recursively, in sorted order, merged key by key (a later
 * file's key replaces an earlier one's), as ansible-core's `find_vars_files` loads them.
 */
async function roleMapDir(root: string, sub: string, dir: string, from: SourcePos | undefined, addSecrets: (values: readonly string[]) => void): Promise<Obj> {
  const out: Obj = {};
  for (const f of varsFilesUnder(root)) {
    const { value, secrets } = await loadYamlDoc(f, from);
    addSecrets(secrets);
    if (value === null || value === undefined) continue;
    if (!isRecord(value)) throw new InputError(`${sub}/${path.relative(path.join(dir, sub), f)} of role ${path.basename(dir)} must be a map`, { file: f, line: 1, col: 1 });
    templar.check(value);
    Object.assign(out, value);
  }
  return out;
}

/** The variable files under a directory, recursively, sorted by name at each level (hidden files skipped). */
function varsFilesUnder(root: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(root).sort()) {
    if (name.startsWith('.')) continue;
    const full = path.join(root, name);
    if (isDir(full)) out.push(...varsFilesUnder(full));
    else if (/\.(ya?ml|json)$/.test(name) || !name.includes('.')) out.push(full);
  }
  return out;
}

/** A dependency entry of `meta/main.yml`: a name, or `{role: name, vars: {...}, ...params}`. */
export interface RoleDependency {
  name: string;
  useVars: Obj;
  params: Obj;
  when: unknown[];
  tags: string[];
  /** Keywords of the entry passed on to the role's tasks (`environment`, `no_log`, `become`, …), as written. */
  keywords: Obj;
}

/** Keys of a role entry (in `roles:` or `dependencies:`) that are not role params. */
export const ROLE_ENTRY_KEYWORDS = new Set(['role', 'name', 'vars', 'when', 'tags', 'allow_duplicates', 'public', ...Object.keys(INHERITED_KEYWORDS)]);

/** Split a role entry into its name, `vars:`, keywords and (inline) params. */
export function parseRoleEntry(entry: unknown, pos: SourcePos | undefined): RoleDependency {
  if (typeof entry === 'string') return { name: entry, useVars: {}, params: {}, when: [], tags: [], keywords: {} };
  if (!isRecord(entry)) throw new InputError('a role entry must be a role name or a map with `role:`', pos);
  const name = entry.role ?? entry.name;
  if (typeof name !== 'string' || !name) throw new InputError('a role entry needs `role: <name>`', pos);
  const params: Obj = {};
  for (const [k, v] of Object.entries(entry)) if (!ROLE_ENTRY_KEYWORDS.has(k)) params[k] = v;
  const when = entry.when === undefined || entry.when === null ? [] : Array.isArray(entry.when) ? entry.when : [entry.when];
  const tags = entry.tags === undefined || entry.tags === null ? [] : Array.isArray(entry.tags) ? entry.tags.map(String) : String(entry.tags).split(',').map((t) => t.trim()).filter(Boolean);
  const keywords = Object.fromEntries(Object.entries(entry).filter(([k]) => k in INHERITED_KEYWORDS));
  return { name, useVars: isRecord(entry.vars) ? entry.vars : {}, params, when, tags, keywords };
}

/** The `argument_specs` of a role: `meta/argument_specs.yml` wins over `meta/main.yml`, as in Ansible. */
export async function roleArgumentSpecs(dir: string, meta: Obj, addSecrets: (values: readonly string[]) => void): Promise<Obj> {
  if (roleFile(dir, 'meta', 'argument_specs')) {
    const doc = await roleMap(dir, 'meta', 'argument_specs', undefined, addSecrets);
    return isRecord(doc.argument_specs) ? doc.argument_specs : {};
  }
  return isRecord(meta.argument_specs) ? meta.argument_specs : {};
}

/**
 * Loading an inventory: resolving the reference, parsing and validating its YAML files (kplay's
 * and Ansible's format, see builder.ts), applying `group_vars/`, `host_vars/` and `cluster_vars/`,
 * resolving connections, adding the implicit localhost, and the variable helpers the executor uses
 * (`groupVarLayers`, `inventoryVars`, `groupsMap`).
 *
 * Every error is an InputError positioned at `file:line:col` when the input has a position.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { InputError, type SourcePos } from '../load/errors.js';
import { validateOrThrow } from '../load/schema.js';
import { getMaxInputBytes, loadYamlDoc, posOf } from '../load/yaml.js';
import { mergeVars } from '../vars/precedence.js';
import { Builder, byName, isMap, kindOf, setVar } from './builder.js';
import { resolveConnection } from './connection.js';
import { parseIniInventory } from './ini.js';
import { expandTilde } from './paths.js';
import { inventorySchema, NAME_PATTERN } from './schema.js';
import { didYouMean, listSome } from '../load/suggest.js';
import type { Inventory, InventoryCluster } from './types.js';

/** Options of {@link loadInventory}. */
export interface LoadInventoryOptions {
  /** Directory that relative references (and `$KUBECONFIG` entries) are relative to. */
  cwd: string;
  /**
   * Directory of the playbook: bare names are also looked up in `<playbookDir>/inventories/`, and
   * its `group_vars/` and `host_vars/` apply (as in Ansible, winning over the inventory's).
   */
  playbookDir?: string;
  /** Environment for `$KUBECONFIG`, `$HOME` and `$VAR`s in kubeconfig paths (default: `process.env`). */
  env?: NodeJS.ProcessEnv;
}

const NAME_RE = new RegExp(NAME_PATTERN);
const YAML_EXTS = ['.yml', '.yaml'];

async function kindOfPath(p: string): Promise<'file' | 'dir' | undefined> {
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
  throw new InputError(
    `inventory '${ref}' not found; tried:\n${tried.map((t) => `    ${t}`).join('\n')}`,
    undefined,
    bare ? 'pass a file or directory path, or put the inventory in inventories/<name>.yml' : 'check the path',
  );
}

/** Keys of a group node, in both formats (for "did you mean"). */
const KNOWN_KEYS = ['vars', 'clusters', 'hosts', 'children', 'context', 'kubeconfig'];
/** Top-level keys that are sections, not groups: the `all:` line is probably missing. */
const SECTION_KEYS = ['vars', 'clusters', 'hosts', 'children'];

/** Check names and reject self-referencing YAML aliases before schema validation (which would loop). */
function precheckGroup(node: unknown, ancestors: Set<object>): void {
  if (!isMap(node)) return;
  ancestors.add(node);
  const clusters = node.clusters;
  if (isMap(clusters)) {
    for (const key of Object.keys(clusters)) {
      if (!NAME_RE.test(key)) throw new InputError(`invalid cluster name '${key}'`, posOf(clusters, key), 'names may only contain letters, digits, _, . and -');
    }
  }
  const children = node.children;
  if (isMap(children)) {
    for (const key of Object.keys(children)) {
      if (!NAME_RE.test(key)) throw new InputError(`invalid group name '${key}'`, posOf(children, key), 'names may only contain letters, digits, _, . and -');
      const child = children[key];
      if (isMap(child) && ancestors.has(child)) throw new InputError(`recursive YAML alias: group '${key}' contains itself`, posOf(children, key));
      precheckGroup(child, ancestors);
    }
  }
  ancestors.delete(node);
}

/** Validate the top level and the schema; throws positioned InputErrors. */
function validateDocument(value: unknown, file: string): asserts value is Record<string, unknown> {
  const top: SourcePos = { file, line: 1, col: 1 };
  const example = 'expected:\n    all:\n      vars: {...}\n      hosts: {...}     # or clusters: {...}\n      children: {...}';
  if (value === null || value === undefined) throw new InputError('the inventory is empty: expected a top-level `all:` group', top, example);
  if (!isMap(value)) throw new InputError(`the inventory must be a map of groups (usually the single key 'all'), not ${kindOf(value)}`, posOf(value) ?? top, example);
  const keys = Object.keys(value);
  if (keys.length === 0) throw new InputError('the inventory is empty: expected a top-level `all:` group', posOf(value) ?? top, example);
  if (keys.includes('plugin')) {
    throw new InputError('inventory plugin configuration files are not supported', posOf(value, 'plugin') ?? top, 'list the clusters in a YAML or INI inventory (all: hosts: / children:)');
  }
  for (const key of keys) {
    if (SECTION_KEYS.includes(key)) {
      throw new InputError(
        `the top level of an inventory holds groups; '${key}' is a section of a group`,
        posOf(value, key) ?? top,
        `put it under the group 'all':\n    all:\n      ${key}: ...`,
      );
    }
    if (!NAME_RE.test(key)) throw new InputError(`invalid group name '${key}'`, posOf(value, key) ?? top, 'names may only contain letters, digits, _, . and -');
    if (key === 'ungrouped') continue;
    precheckGroup(value[key], new Set());
  }
  try {
    validateOrThrow(inventorySchema, value, 'inventory', { fallbackPos: top });
  } catch (e) {
    if (e instanceof InputError && !e.hint) {
      const m = /unknown key '([^']*)'/.exec(e.message);
      if (m) {
        const hint = didYouMean(m[1] ?? '', KNOWN_KEYS) ?? 'allowed keys: groups have vars, hosts (Ansible) or clusters (kplay), children; clusters have context, kubeconfig, vars';
        throw new InputError(e.message, e.pos, hint);
      }
    }
    throw e;
  }
}

/** Ansible also reads `group_vars/` and `host_vars/` next to the playbook (they win over the inventory's). */
async function applyPlaybookVarFiles(b: Builder, playbookDir: string | undefined, cwd: string, inventoryDir: string | undefined): Promise<void> {
  const pbDir = playbookDir === undefined ? undefined : path.resolve(cwd, playbookDir);
  if (pbDir === undefined || pbDir === inventoryDir) return;
  for (const [sub, kind] of [['group_vars', 'group'], ['host_vars', 'cluster']] as const) {
    const varDir = path.join(pbDir, sub);
    if ((await kindOfPath(varDir)) === 'dir') await b.applyVarFiles(varDir, kind, false, 'playbookVars');
  }
}

/**
 * No inventory given, for a run: the empty inventory plus the playbook's `group_vars/all` (the
 * implicit localhost sees the `all` group's vars).
 */
export async function loadNoInventory(opts: LoadInventoryOptions): Promise<Inventory> {
  const cwd = path.resolve(opts.cwd);
  const b = new Builder(cwd, opts.env ?? process.env);
  await applyPlaybookVarFiles(b, opts.playbookDir, cwd, undefined);
  return b.finish('').inventory;
}

/**
 * The inventory used when none is given (Ansible: "No inventory was parsed, only implicit
 * localhost is available"): no clusters and the groups `all` and `ungrouped`; `source` is `''`.
 * See `withImplicitLocalhost` for the implicit localhost a play may target.
 */
export function emptyInventory(opts: LoadInventoryOptions): Inventory {
  return new Builder(path.resolve(opts.cwd), opts.env ?? process.env).finish('').inventory;
}

/** True when a parsed YAML value has the shape of a YAML inventory (a map of groups). */
function looksLikeYamlInventory(value: unknown): boolean {
  return isMap(value) && Object.values(value).every((v) => v === null || isMap(v));
}

/**
 * Read one inventory file: `.yml`/`.yaml`/`.json` as a YAML inventory, `.ini` as an INI one; any
 * other file as YAML when it parses to a map of groups, else as INI (ansible-core tries its yaml
 * plugin, then its ini plugin).
 */
async function readInventoryFile(file: string): Promise<{ doc: Record<string, unknown>; secrets: string[] }> {
  const ext = path.extname(file);
  if (ext !== '.ini') {
    let loaded: { value: unknown; secrets: string[] } | undefined;
    let yamlError: unknown;
    try {
      loaded = await loadYamlDoc(file);
    } catch (e) {
      yamlError = e;
    }
    if (YAML_EXTS.includes(ext) || ext === '.json' || (loaded && looksLikeYamlInventory(loaded.value))) {
      if (!loaded) throw yamlError;
      validateDocument(loaded.value, file);
      return { doc: loaded.value, secrets: loaded.secrets };
    }
  }
  const size = (await stat(file)).size;
  if (size > getMaxInputBytes()) {
    throw new InputError(`${file} is ${size} bytes, more than the input limit of ${getMaxInputBytes()} bytes`, { file, line: 1, col: 1 }, 'raise the limit with --max-input-bytes N (or KPLAY_MAX_INPUT_BYTES) if this file is meant to be this large');
  }
  return { doc: parseIniInventory(await readFile(file, 'utf8'), file), secrets: [] };
}

/**
 * Load an inventory (see {@link resolveInventory} for what `ref` may be).
 *
 * - kplay's format (`clusters:`) and Ansible's YAML inventory format (`hosts:`, top-level
 *   groups, host ranges) may be mixed, even in one group; Ansible INI inventories are read too
 *   (src/inventory/ini.ts);
 * - unknown keys, bad names, conflicting repeated cluster definitions, group/cluster name clashes
 *   and group cycles are errors;
 * - `group_vars/`, `host_vars/` and `cluster_vars/` next to the inventory are applied (a directory
 *   inventory: a file for an unknown group/cluster is an error; next to an inventory file: skipped),
 *   then `group_vars/` and `host_vars/` next to the playbook (`opts.playbookDir`), which win;
 * - the connection of each entry is resolved (src/inventory/connection.ts);
 * - Ansible's implicit localhost is not part of the result: see `withImplicitLocalhost`;
 * - `inventory.secrets` collects `!secret` values and values under secret-looking keys.
 */
export async function loadInventory(ref: string, opts: LoadInventoryOptions): Promise<Inventory> {
  const env = opts.env ?? process.env;
  const cwd = path.resolve(opts.cwd);
  const where = await resolveInventory(ref, opts);
  const b = new Builder(where.dir, env);
  for (const file of where.files) {
    const { doc, secrets } = await readInventoryFile(file);
    b.secrets.push(...secrets);
    for (const key of Object.keys(doc)) b.walkGroup(key, doc[key], posOf(doc, key), undefined);
  }
  for (const [sub, kind] of [['group_vars', 'group'], ['host_vars', 'cluster'], ['cluster_vars', 'cluster']] as const) {
    const varDir = path.join(where.dir, sub);
    if ((await kindOfPath(varDir)) === 'dir') await b.applyVarFiles(varDir, kind, where.isDir);
  }
  await applyPlaybookVarFiles(b, opts.playbookDir, cwd, where.dir);
  const source = where.files.length === 1 ? (where.files[0] as string) : where.dir;
  const { inventory, accs } = b.finish(source);
  const contexts = new Map<string, string>();
  for (const c of inventory.clusters.values()) {
    const acc = accs.get(c.name);
    const conn = resolveConnection(
      { name: c.name, context: acc?.context?.value, kubeconfig: acc?.kubeconfig?.value, asCluster: acc?.asCluster === true, vars: inventoryVars(inventory, c.name) },
      where.dir,
      cwd,
      env,
      contexts,
    );
    c.context = conn.context;
    c.kubeconfig = conn.kubeconfig;
  }
  return inventory;
}

function clusterOf(inv: Inventory, cluster: string): InventoryCluster {
  const c = inv.clusters.get(cluster);
  if (!c) {
    const names = [...inv.clusters.keys()];
    throw new InputError(`unknown cluster '${cluster}'`, undefined, didYouMean(cluster, names) ?? `known clusters: ${listSome(names)}`);
  }
  return c;
}

/**
 * The group vars of `cluster`, ordered low → high precedence as ansible-core's VariableManager
 * does: the inline `vars` of `all`, then of every other group of the cluster; then the inventory's
 * `group_vars/all`, the playbook's `group_vars/all`; then the inventory's `group_vars/` files of
 * the other groups, then the playbook's (so any group_vars file beats every inline group var). Within each half: by depth (deeper wins), then `ansible_group_priority`, then
 * by name (alphabetically later wins). The implicit localhost sees the `all` group only.
 * Throws on an unknown cluster.
 */
export function groupVarLayers(inv: Inventory, cluster: string): Record<string, unknown>[] {
  const c = clusterOf(inv, cluster);
  const groups = (c.implicit ? ['all'] : c.groups).map((g) => inv.groups.get(g)).filter((g) => g !== undefined);
  const [all, ...rest] = groups;
  return [
    ...groups.map((g) => g.inlineVars),
    ...(all ? [all.fileVars, all.playbookVars] : []),
    ...rest.map((g) => g.fileVars),
    ...rest.map((g) => g.playbookVars),
  ];
}

const varsCache = new WeakMap<Inventory, Map<string, Record<string, unknown>>>();

/**
 * The merged inventory vars of `cluster` (group layers, then cluster vars; replace per key).
 * Cached per inventory: treat the result as read-only.
 */
export function inventoryVars(inv: Inventory, cluster: string): Record<string, unknown> {
  let cache = varsCache.get(inv);
  if (!cache) varsCache.set(inv, (cache = new Map()));
  let vars = cache.get(cluster);
  if (!vars) {
    vars = mergeVars({ groupVars: groupVarLayers(inv, cluster), clusterVars: clusterOf(inv, cluster).vars });
    cache.set(cluster, vars);
  }
  return vars;
}

/** Members of a group, transitively (for `all`: every cluster), in inventory order. */
export function groupMembers(inv: Inventory, group: string): string[] {
  return [...inv.clusters.values()].filter((c) => c.groups.includes(group)).map((c) => c.name);
}

/** Group name → member cluster names (transitive, inventory order), for every group incl. `all` and `ungrouped`. */
export function groupsMap(inv: Inventory): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const g of inv.groups.keys()) setVar(out, g, groupMembers(inv, g));
  return out;
}

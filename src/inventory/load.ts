/**
 * Loading an inventory: resolving the reference, parsing and validating `hosts.yml`, building
 * the group graph, applying `group_vars/` and `cluster_vars/`, and the variable helpers the
 * executor uses (`groupVarLayers`, `inventoryVars`, `groupsMap`).
 *
 * Every error is an InputError positioned at `file:line:col` when the input has a position.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { formatPos, InputError, type SourcePos } from '../load/errors.js';
import { validateOrThrow } from '../load/schema.js';
import { loadYamlDoc, posOf } from '../load/yaml.js';
import { SECRET_NAME } from '../report/mask.js';
import { isMagicVar, mergeVars, MAGIC_VARS } from '../vars/precedence.js';
import { defaultKubeconfig, expandPath, expandTilde } from './paths.js';
import { inventorySchema, NAME_PATTERN } from './schema.js';
import { didYouMean, listSome } from '../load/suggest.js';
import type { Inventory, InventoryCluster, InventoryGroup } from './types.js';

/** Options of {@link loadInventory}. */
export interface LoadInventoryOptions {
  /** Directory that relative references (and `$KUBECONFIG` entries) are relative to. */
  cwd: string;
  /** Directory of the playbook: bare names are also looked up in `<playbookDir>/inventories/`. */
  playbookDir?: string;
  /** Environment for `$KUBECONFIG`, `$HOME` and `$VAR`s in kubeconfig paths (default: `process.env`). */
  env?: NodeJS.ProcessEnv;
}

const NAME_RE = new RegExp(NAME_PATTERN);
const YAML_EXTS = ['.yml', '.yaml'];
const KNOWN_KEYS = ['vars', 'clusters', 'children', 'context', 'kubeconfig'];

type Vars = Record<string, unknown>;

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function kindOf(v: unknown): string {
  if (v === null || v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a map';
  return `a ${typeof v}`;
}

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
  /** Absolute path of the inventory YAML file (`hosts.yml`/`hosts.yaml` of a directory). */
  file: string;
  /** Absolute directory of the inventory. */
  dir: string;
  /** True for a directory inventory (which may have `group_vars/` and `cluster_vars/`). */
  isDir: boolean;
}

async function hostsFileIn(dir: string): Promise<string> {
  const found: string[] = [];
  for (const name of ['hosts.yml', 'hosts.yaml']) {
    const p = path.join(dir, name);
    if ((await kindOfPath(p)) === 'file') found.push(p);
  }
  if (found.length === 0) {
    throw new InputError(`inventory directory ${dir} has no hosts.yml or hosts.yaml`, undefined, 'a directory inventory holds hosts.yml plus optional group_vars/ and cluster_vars/');
  }
  if (found.length > 1) throw new InputError(`inventory directory ${dir} has both hosts.yml and hosts.yaml; keep one`);
  return found[0] as string;
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
  if (kind === 'file') return { file: direct, dir: path.dirname(direct), isDir: false };
  if (kind === 'dir') return { file: await hostsFileIn(direct), dir: direct, isDir: true };
  const bare = !ref.includes('/') && !ref.includes(path.sep) && path.extname(ref) === '';
  if (bare) {
    const bases = [...new Set([opts.playbookDir, opts.cwd].filter((d): d is string => !!d).map((d) => path.resolve(opts.cwd, d)))];
    for (const base of bases) {
      for (const ext of YAML_EXTS) {
        const p = path.join(base, 'inventories', `${ref}${ext}`);
        tried.push(p);
        if ((await kindOfPath(p)) === 'file') return { file: p, dir: path.dirname(p), isDir: false };
      }
      const d = path.join(base, 'inventories', ref);
      tried.push(`${d}${path.sep}`);
      if ((await kindOfPath(d)) === 'dir') return { file: await hostsFileIn(d), dir: d, isDir: true };
    }
  }
  throw new InputError(
    `inventory '${ref}' not found; tried:\n${tried.map((t) => `    ${t}`).join('\n')}`,
    undefined,
    bare ? 'pass a file or directory path, or put the inventory in inventories/<name>.yml' : 'check the path',
  );
}

interface Located<T> {
  value: T;
  pos: SourcePos | undefined;
}

interface VarsAcc {
  vars: Vars;
  origin: Map<string, SourcePos | undefined>;
}

interface GroupAcc extends VarsAcc {
  name: string;
  pos: SourcePos | undefined;
  children: string[];
  clusters: string[];
  parents: string[];
}

interface ClusterAcc extends VarsAcc {
  name: string;
  pos: SourcePos | undefined;
  context?: Located<string>;
  kubeconfig?: Located<string>;
}

function pushUnique(list: string[], item: string): void {
  if (!list.includes(item)) list.push(item);
}

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Builds an {@link Inventory} from a validated document plus var files. */
class Builder {
  readonly groups = new Map<string, GroupAcc>();
  readonly clusters = new Map<string, ClusterAcc>();
  readonly secrets: string[] = [];
  /** `${parent}\0${child}` → position of the child key (for cycle errors). */
  private readonly edgePos = new Map<string, SourcePos | undefined>();
  /** Group nodes already walked as a given group name (aliases may share nodes). */
  private readonly walked = new WeakMap<object, Set<string>>();

  constructor(
    private readonly file: string,
    private readonly dir: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly cwd: string,
  ) {
    this.group('all', undefined);
    this.group('ungrouped', undefined);
  }

  private group(name: string, pos: SourcePos | undefined): GroupAcc {
    let g = this.groups.get(name);
    if (!g) {
      g = { name, pos, vars: {}, origin: new Map(), children: [], clusters: [], parents: [] };
      this.groups.set(name, g);
    }
    g.pos ??= pos;
    return g;
  }

  /** Merge inline vars; a key set twice with different values is an error. */
  private mergeInline(acc: VarsAcc, vars: Vars, owner: string): void {
    for (const key of Object.keys(vars)) {
      const pos = posOf(vars, key);
      checkVarName(key, pos, owner);
      const value = vars[key];
      if (acc.origin.has(key) && !isDeepStrictEqual(acc.vars[key], value)) {
        throw new InputError(
          `${owner} sets var '${key}' again with a different value (first set at ${formatPos(acc.origin.get(key)) || 'another place'})`,
          pos,
          'set it in one place only, or in a group/cluster var file',
        );
      }
      setVar(acc.vars, key, value);
      if (!acc.origin.has(key)) acc.origin.set(key, pos);
    }
  }

  walkGroup(name: string, node: unknown, pos: SourcePos | undefined, parent: GroupAcc | undefined): void {
    const g = this.group(name, pos);
    if (parent) {
      pushUnique(parent.children, name);
      pushUnique(g.parents, parent.name);
      const edge = `${parent.name}\0${name}`;
      if (!this.edgePos.has(edge)) this.edgePos.set(edge, pos);
    }
    if (!isMap(node)) return;
    const seen = this.walked.get(node) ?? new Set<string>();
    if (seen.has(name)) return; // the same node (a YAML alias) was already walked as this group
    seen.add(name);
    this.walked.set(node, seen);
    if (isMap(node.vars)) this.mergeInline(g, node.vars, `group '${name}'`);
    const clusters = node.clusters;
    if (isMap(clusters)) {
      for (const cname of Object.keys(clusters)) {
        this.addCluster(cname, clusters[cname], posOf(clusters, cname));
        pushUnique(g.clusters, cname);
      }
    }
    const children = node.children;
    if (isMap(children)) {
      for (const child of Object.keys(children)) {
        const cpos = posOf(children, child);
        if (child === 'all' || child === 'ungrouped') {
          throw new InputError(
            `'${child}' cannot be a child group: it is built in`,
            cpos,
            child === 'all' ? 'every group is already under all' : 'clusters listed directly under all.clusters and in no child group are ungrouped',
          );
        }
        this.walkGroup(child, children[child], cpos, g);
      }
    }
  }

  private addCluster(name: string, entry: unknown, pos: SourcePos | undefined): void {
    let c = this.clusters.get(name);
    if (!c) {
      c = { name, pos, vars: {}, origin: new Map() };
      this.clusters.set(name, c);
    }
    if (!isMap(entry)) return;
    const hint = `a cluster listed in several groups must have the same context and kubeconfig everywhere; define it once and list it elsewhere with no keys (\`${name}:\`)`;
    if (typeof entry.context === 'string') {
      const here: Located<string> = { value: entry.context, pos: posOf(entry, 'context') };
      if (c.context && c.context.value !== here.value) {
        throw new InputError(
          `cluster '${name}' is defined again with a different context ('${here.value}' here, '${c.context.value}' at ${formatPos(c.context.pos)})`,
          here.pos,
          hint,
        );
      }
      c.context ??= here;
    }
    if (typeof entry.kubeconfig === 'string') {
      const kpos = posOf(entry, 'kubeconfig');
      let resolved: string;
      try {
        resolved = expandPath(entry.kubeconfig, this.dir, this.env);
      } catch (e) {
        throw new InputError(`cluster '${name}': kubeconfig ${e instanceof Error ? e.message : String(e)}`, kpos);
      }
      if (c.kubeconfig && c.kubeconfig.value !== resolved) {
        throw new InputError(
          `cluster '${name}' is defined again with a different kubeconfig (${resolved} here, ${c.kubeconfig.value} at ${formatPos(c.kubeconfig.pos)})`,
          kpos,
          hint,
        );
      }
      c.kubeconfig ??= { value: resolved, pos: kpos };
    }
    if (isMap(entry.vars)) this.mergeInline(c, entry.vars, `cluster '${name}'`);
  }

  /** Apply `group_vars/` or `cluster_vars/` of a directory inventory (files win over inline vars per key). */
  async applyVarFiles(kind: 'group' | 'cluster'): Promise<void> {
    const sub = `${kind}_vars`;
    const varDir = path.join(this.dir, sub);
    if ((await kindOfPath(varDir)) !== 'dir') return;
    const entries = (await readdir(varDir, { withFileTypes: true })).sort((a, b) => byName(a.name, b.name));
    const seen = new Map<string, string>();
    const known: Map<string, VarsAcc> = kind === 'group' ? this.groups : this.clusters;
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(varDir, entry.name);
      const at: SourcePos = { file: full, line: 0, col: 0 };
      if (entry.isDirectory()) {
        throw new InputError(`directories under ${sub}/ are not supported`, at, `put the vars in ${sub}/${entry.name}.yml`);
      }
      const ext = path.extname(entry.name);
      if (!YAML_EXTS.includes(ext)) {
        throw new InputError(`unexpected file in ${sub}/`, at, `name ${kind} var files <${kind}>.yml or <${kind}>.yaml`);
      }
      const name = entry.name.slice(0, -ext.length);
      const other = seen.get(name);
      if (other) throw new InputError(`both ${path.basename(other)} and ${entry.name} define vars for ${kind} '${name}'; keep one`, at);
      seen.set(name, full);
      const target = known.get(name);
      if (!target) {
        const names = [...known.keys()];
        throw new InputError(
          `${sub}/${entry.name}: there is no ${kind} named '${name}' in the inventory`,
          at,
          didYouMean(name, names) ?? `known ${kind}s: ${listSome(names)}`,
        );
      }
      const { value, secrets } = await loadYamlDoc(full);
      this.secrets.push(...secrets);
      if (value === null || value === undefined) continue;
      if (!isMap(value)) {
        throw new InputError(`${sub}/${entry.name} must be a map of variables (name: value), not ${kindOf(value)}`, posOf(value) ?? { file: full, line: 1, col: 1 });
      }
      for (const key of Object.keys(value)) {
        const pos = posOf(value, key);
        checkVarName(key, pos, `${sub}/${entry.name}`);
        setVar(target.vars, key, value[key]);
        target.origin.set(key, pos);
      }
    }
  }

  finish(): Inventory {
    // A group and a cluster cannot share a name.
    for (const c of this.clusters.values()) {
      const g = this.groups.get(c.name);
      if (g) {
        throw new InputError(
          `'${c.name}' is both a group${g.pos ? ` (at ${formatPos(g.pos)})` : ''} and a cluster`,
          c.pos,
          'group and cluster names share one namespace (host patterns use both); rename one',
        );
      }
    }
    this.checkCycles();
    const depth = this.depths();

    // Direct memberships → all memberships (ancestors included).
    const direct = new Map<string, Set<string>>();
    for (const g of this.groups.values()) {
      for (const c of g.clusters) {
        let set = direct.get(c);
        if (!set) direct.set(c, (set = new Set()));
        set.add(g.name);
      }
    }
    const ungrouped = this.groups.get('ungrouped');
    const clusters = new Map<string, InventoryCluster>();
    for (const c of this.clusters.values()) {
      const mine = new Set<string>(['all']);
      const stack = [...(direct.get(c.name) ?? [])];
      while (stack.length) {
        const g = stack.pop() ?? '';
        if (mine.has(g)) continue;
        mine.add(g);
        for (const p of this.groups.get(g)?.parents ?? []) stack.push(p);
      }
      if ([...mine].every((g) => g === 'all') && ungrouped) {
        mine.add('ungrouped');
        ungrouped.clusters.push(c.name);
      }
      const groups = [...mine].sort((a, b) => (depth.get(a) ?? 0) - (depth.get(b) ?? 0) || byName(a, b));
      clusters.set(c.name, {
        name: c.name,
        context: c.context?.value ?? c.name,
        kubeconfig: c.kubeconfig?.value ?? defaultKubeconfig(this.env, this.cwd),
        vars: c.vars,
        groups,
      });
    }
    if (ungrouped) ungrouped.parents.push('all');
    const all = this.groups.get('all');
    if (all && ungrouped) all.children.unshift('ungrouped');

    const groups = new Map<string, InventoryGroup>();
    for (const g of this.groups.values()) {
      groups.set(g.name, {
        name: g.name,
        vars: g.vars,
        children: g.children,
        clusters: g.clusters,
        parents: g.parents,
        depth: depth.get(g.name) ?? 0,
      });
    }

    const secrets = [...this.secrets];
    for (const g of groups.values()) collectSecretsByName(g.vars, secrets, 0);
    for (const c of clusters.values()) collectSecretsByName(c.vars, secrets, 0);
    return { source: this.file, dir: this.dir, clusters, groups, secrets: [...new Set(secrets)] };
  }

  private checkCycles(): void {
    const state = new Map<string, 'active' | 'done'>();
    const stack: string[] = [];
    const visit = (name: string): void => {
      state.set(name, 'active');
      stack.push(name);
      for (const child of this.groups.get(name)?.children ?? []) {
        const s = state.get(child);
        if (s === 'active') {
          const cycle = [...stack.slice(stack.indexOf(child)), child];
          throw new InputError(
            `group cycle: ${cycle.join(' -> ')}`,
            this.edgePos.get(`${name}\0${child}`),
            `a group cannot be its own ancestor; remove '${child}' from the children of '${name}'`,
          );
        }
        if (s === undefined) visit(child);
      }
      stack.pop();
      state.set(name, 'done');
    };
    visit('all');
  }

  /** Longest distance from `all` (the graph is acyclic by now). */
  private depths(): Map<string, number> {
    const memo = new Map<string, number>([['all', 0]]);
    const depthOf = (name: string): number => {
      const known = memo.get(name);
      if (known !== undefined) return known;
      const parents = this.groups.get(name)?.parents ?? [];
      const d = parents.length === 0 ? 1 : 1 + Math.max(...parents.map(depthOf));
      memo.set(name, d);
      return d;
    };
    for (const name of this.groups.keys()) depthOf(name);
    return memo;
  }
}

function setVar(vars: Vars, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(vars, key, { value, enumerable: true, writable: true, configurable: true });
  else vars[key] = value;
}

function checkVarName(key: string, pos: SourcePos | undefined, owner: string): void {
  if (isMagicVar(key)) {
    throw new InputError(
      `${owner}: '${key}' is a magic variable set by kplay and cannot be defined in the inventory`,
      pos,
      `rename it; magic variables: ${MAGIC_VARS.join(', ')}`,
    );
  }
}

function collectSecretsByName(value: unknown, out: string[], depth: number): void {
  if (depth > 32 || value === null || typeof value !== 'object') return;
  for (const [k, v] of Object.entries(value)) {
    if (SECRET_NAME.test(k) && (typeof v === 'string' || typeof v === 'number')) out.push(String(v));
    else collectSecretsByName(v, out, depth + 1);
  }
}

/** Check names and reject self-referencing YAML aliases before schema validation (which would loop). */
function precheckGroup(node: unknown, ancestors: Set<object>): void {
  if (!isMap(node)) return;
  ancestors.add(node);
  for (const section of ['clusters', 'children'] as const) {
    const map = node[section];
    if (!isMap(map)) continue;
    for (const key of Object.keys(map)) {
      if (!NAME_RE.test(key)) {
        throw new InputError(
          `invalid ${section === 'clusters' ? 'cluster' : 'group'} name '${key}'`,
          posOf(map, key),
          'names may only contain letters, digits, _, . and -',
        );
      }
      if (section !== 'children') continue;
      const child = map[key];
      if (isMap(child) && ancestors.has(child)) throw new InputError(`recursive YAML alias: group '${key}' contains itself`, posOf(map, key));
      precheckGroup(child, ancestors);
    }
  }
  ancestors.delete(node);
}

/** Validate the top level and the schema; throws positioned InputErrors. */
function validateDocument(value: unknown, file: string): asserts value is { all: unknown } {
  const top: SourcePos = { file, line: 1, col: 1 };
  const example = 'expected:\n    all:\n      vars: {...}\n      clusters: {...}\n      children: {...}';
  if (value === null || value === undefined) throw new InputError('the inventory is empty: expected a top-level `all:` group', top, example);
  if (!isMap(value)) throw new InputError(`the inventory must be a map with the single top-level key 'all', not ${kindOf(value)}`, posOf(value) ?? top, example);
  const keys = Object.keys(value);
  if (keys.length === 0) throw new InputError('the inventory is empty: expected a top-level `all:` group', posOf(value) ?? top, example);
  for (const key of keys) {
    if (key !== 'all') {
      throw new InputError(
        `the top level of an inventory must be the group 'all', found '${key}'`,
        posOf(value, key) ?? top,
        `put groups under all.children and clusters under all.clusters, e.g.\n    all:\n      children:\n        ${key}: ...`,
      );
    }
  }
  precheckGroup(value.all, new Set());
  try {
    validateOrThrow(inventorySchema, value, 'inventory', { fallbackPos: top });
  } catch (e) {
    if (e instanceof InputError && !e.hint) {
      const m = /unknown key '([^']*)'/.exec(e.message);
      if (m) {
        const hint = m[1] === 'hosts' ? "kplay calls them 'clusters'" : (didYouMean(m[1] ?? '', KNOWN_KEYS) ?? `allowed keys: groups have vars, clusters, children; clusters have context, kubeconfig, vars`);
        throw new InputError(e.message, e.pos, hint);
      }
    }
    throw e;
  }
}

/**
 * Load an inventory (see {@link resolveInventory} for what `ref` may be).
 *
 * - the file's top level must be `all`; unknown keys, bad names, conflicting repeated cluster
 *   definitions, group/cluster name clashes and group cycles are errors;
 * - a directory inventory also applies `group_vars/<group>.yml` and `cluster_vars/<cluster>.yml`
 *   (maps; a file for an unknown group/cluster is an error). A file's keys override the inline
 *   `vars` of the same group/cluster;
 * - `kubeconfig` defaults to the first path of `$KUBECONFIG`, else `~/.kube/config`;
 * - `inventory.secrets` collects `!secret` values and values under secret-looking keys.
 */
export async function loadInventory(ref: string, opts: LoadInventoryOptions): Promise<Inventory> {
  const env = opts.env ?? process.env;
  const where = await resolveInventory(ref, opts);
  const { value, secrets } = await loadYamlDoc(where.file);
  validateDocument(value, where.file);
  const b = new Builder(where.file, where.dir, env, path.resolve(opts.cwd));
  b.secrets.push(...secrets);
  b.walkGroup('all', value.all, posOf(value, 'all'), undefined);
  if (where.isDir) {
    await b.applyVarFiles('group');
    await b.applyVarFiles('cluster');
  }
  return b.finish();
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
 * The group vars of `cluster`, ordered low → high precedence: `all` first, then by depth
 * (deeper wins), then by group name (alphabetically later wins). Throws on an unknown cluster.
 */
export function groupVarLayers(inv: Inventory, cluster: string): Record<string, unknown>[] {
  return clusterOf(inv, cluster).groups.map((g) => inv.groups.get(g)?.vars ?? {});
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

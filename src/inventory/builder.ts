/**
 * Building an {@link Inventory} from parsed inventory documents — kplay's format (`clusters:`)
 * and Ansible's YAML inventory format (`hosts:`, top-level groups), mixed freely — plus the
 * `group_vars/`, `host_vars/` and `cluster_vars/` files next to them.
 *
 * Ansible's rules (ansible-core's yaml inventory plugin and InventoryData): a string where a map of
 * hosts or children is expected names one entry; a host listed again merges its vars (the later
 * value wins); a group in no other group is a child of `all`; a host in no group but `all` is in
 * `ungrouped`. kplay's own `clusters:` entries stay strict (a conflicting repeat is an error).
 */
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { formatPos, InputError, type SourcePos } from '../load/errors.js';
import { copyPos, loadYamlDoc, posOf } from '../load/yaml.js';
import { didYouMean, listSome } from '../load/suggest.js';
import { SECRET_NAME } from '../core/mask.js';
import { isMagicVar, MAGIC_VARS } from '../vars/precedence.js';
import { expandHostEntry } from './hostrange.js';
import { expandPath } from './paths.js';
import { NAME_PATTERN } from './schema.js';
import type { Inventory, InventoryCluster, InventoryGroup } from './types.js';
import { entityVarFiles } from './varfiles.js';
import { isRecord } from '../core/shape.js';
import { groupAncestry } from './ancestry.js';

type Vars = Record<string, unknown>;

const NAME_RE = new RegExp(NAME_PATTERN);

/** How a value is called in messages. */
export function kindOf(v: unknown): string {
  if (v === null || v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a map';
  return `a ${typeof v}`;
}

/** Compare names as ansible-core sorts them (code points). */
export function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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
  fileVars: Vars;
  playbookVars: Vars;
  priority: number;
}

/** A cluster while the inventory is built. */
export interface ClusterAcc extends VarsAcc {
  name: string;
  pos: SourcePos | undefined;
  context?: Located<string>;
  kubeconfig?: Located<string>;
  /** Listed under some `clusters:` (kplay's format): the context defaults to the name. */
  asCluster: boolean;
  /** Vars from `host_vars/` and `cluster_vars/` files (they win over inline vars). */
  fileVars: Vars;
  /** Vars from `host_vars/` next to the playbook (they win over the inventory's). */
  playbookVars: Vars;
}

function pushUnique(list: string[], item: string): void {
  if (!list.includes(item)) list.push(item);
}

/** Set `key` on `vars` even when it is `__proto__` (never touching the prototype). */
export function setVar(vars: Vars, key: string, value: unknown): void {
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

/** A section that Ansible lets be a single name (`hosts: web1`) as a map (`{web1: null}`). */
function asEntries(value: unknown): Record<string, unknown> | undefined {
  if (typeof value === 'string') return { [value]: null };
  return isRecord(value) ? value : undefined;
}

/** Builds an {@link Inventory} from validated documents plus var files. */
export class Builder {
  readonly groups = new Map<string, GroupAcc>();
  readonly clusters = new Map<string, ClusterAcc>();
  readonly secrets: string[] = [];
  /** `host_vars/localhost` files when the inventory has no `localhost`: for the implicit localhost. */
  private readonly localhostVars = { fileVars: {} as Vars, playbookVars: {} as Vars };
  /** `group_vars/` files of groups the inventory does not have (Inventory.laterGroupVarFiles). */
  private readonly laterGroupFiles: Record<string, { fileVars: string[]; playbookVars: string[] }> = {};
  /** `${parent}\0${child}` → position of the child key (for cycle errors). */
  private readonly edgePos = new Map<string, SourcePos | undefined>();
  /** Group nodes already walked as a given group name (aliases may share nodes). */
  private readonly walked = new WeakMap<object, Set<string>>();

  constructor(
    private readonly dir: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.group('all', undefined);
    this.group('ungrouped', undefined);
  }

  private group(name: string, pos: SourcePos | undefined): GroupAcc {
    let g = this.groups.get(name);
    if (!g) {
      g = { name, pos, vars: {}, origin: new Map(), children: [], clusters: [], parents: [], fileVars: {}, playbookVars: {}, priority: 1 };
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

  /** Walk one group (and what it contains); `parent` is undefined for a top-level group. */
  walkGroup(name: string, node: unknown, pos: SourcePos | undefined, parent: GroupAcc | undefined): void {
    const g = this.group(name, pos);
    if (parent) {
      pushUnique(parent.children, name);
      pushUnique(g.parents, parent.name);
      const edge = `${parent.name}\0${name}`;
      if (!this.edgePos.has(edge)) this.edgePos.set(edge, pos);
    }
    if (!isRecord(node)) return;
    const seen = this.walked.get(node) ?? new Set<string>();
    if (seen.has(name)) return; // the same node (a YAML alias) was already walked as this group
    seen.add(name);
    this.walked.set(node, seen);
    if (isRecord(node.vars)) {
      // ansible-core: ansible_group_priority sets the group's priority and is not a variable
      const { ansible_group_priority: priority, ...vars } = node.vars;
      if (priority !== undefined) g.priority = groupPriority(priority, posOf(node.vars, 'ansible_group_priority'), name);
      copyPos(node.vars, vars);
      this.mergeInline(g, vars, `group '${name}'`);
    }
    const clusters = node.clusters;
    if (isRecord(clusters)) {
      for (const cname of Object.keys(clusters)) {
        this.addCluster(cname, clusters[cname], posOf(clusters, cname));
        pushUnique(g.clusters, cname);
      }
    }
    const hosts = asEntries(node.hosts);
    if (hosts) {
      for (const entry of Object.keys(hosts)) {
        const hpos = posOf(hosts, entry) ?? posOf(node, 'hosts');
        for (const hname of this.addHosts(entry, hosts[entry], hpos)) pushUnique(g.clusters, hname);
      }
    }
    const children = asEntries(node.children);
    if (children) {
      for (const child of Object.keys(children)) {
        const cpos = posOf(children, child) ?? posOf(node, 'children');
        if (child === 'all' || child === 'ungrouped') {
          throw new InputError(
            `'${child}' cannot be a child group: it is built in`,
            cpos,
            child === 'all' ? 'every group is already under all' : 'clusters listed directly under all and in no child group are ungrouped',
          );
        }
        if (!NAME_RE.test(child)) throw new InputError(`invalid group name '${child}'`, cpos, 'names may only contain letters, digits, _, . and -');
        this.walkGroup(child, children[child], cpos, g);
      }
    }
  }

  private cluster(name: string, pos: SourcePos | undefined): ClusterAcc {
    let c = this.clusters.get(name);
    if (!c) {
      c = { name, pos, vars: {}, origin: new Map(), asCluster: false, fileVars: {}, playbookVars: {} };
      this.clusters.set(name, c);
    }
    return c;
  }

  /** An Ansible `hosts:` entry: a name (with ranges, `:port`) → its vars or nothing. Returns the host names. */
  private addHosts(entry: string, value: unknown, pos: SourcePos | undefined): string[] {
    let expanded;
    try {
      expanded = expandHostEntry(entry);
    } catch (e) {
      throw new InputError(`host ${e instanceof Error ? e.message : String(e)}`, pos, 'ranges are [start:end] or [start:end:step], e.g. web[01:10].example.com');
    }
    if (value !== null && value !== undefined && !isRecord(value)) {
      throw new InputError(`host '${entry}' must be followed by a map of host vars or nothing, not ${kindOf(value)}`, pos, `e.g.\n    ${entry}:\n      ansible_host: 10.0.0.1`);
    }
    for (const name of expanded.names) {
      if (!NAME_RE.test(name)) throw new InputError(`invalid host name '${name}'`, pos, 'host names may only contain letters, digits, _, . and - (with [a:b] ranges and a :port suffix)');
      const c = this.cluster(name, pos);
      c.pos ??= pos;
      // Ansible: a host listed again merges its vars, the later value winning.
      if (expanded.port !== undefined) {
        setVar(c.vars, 'ansible_port', expanded.port);
        c.origin.set('ansible_port', pos);
      }
      if (isRecord(value)) {
        for (const key of Object.keys(value)) {
          const kpos = posOf(value, key);
          checkVarName(key, kpos, `host '${name}'`);
          setVar(c.vars, key, value[key]);
          c.origin.set(key, kpos);
        }
      }
    }
    return expanded.names;
  }

  private addCluster(name: string, entry: unknown, pos: SourcePos | undefined): void {
    const c = this.cluster(name, pos);
    c.asCluster = true;
    if (!isRecord(entry)) return;
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
    if (isRecord(entry.vars)) this.mergeInline(c, entry.vars, `cluster '${name}'`);
  }

  /**
   * Apply the var files of `varDir` (`group_vars`, `host_vars` or `cluster_vars`): they win over
   * inline vars (`slot` `fileVars`: the inventory's; `playbookVars`: those next to the playbook,
   * which win over the inventory's). A file for an unknown group or cluster is an error when
   * `strict` (a directory inventory owns its var directories), else skipped (next to an inventory
   * file or a playbook the directory may serve other inventories, and Ansible skips such files).
   */
  async applyVarFiles(varDir: string, kind: 'group' | 'cluster', strict: boolean, slot: 'fileVars' | 'playbookVars' = 'fileVars'): Promise<void> {
    const sub = path.basename(varDir);
    const known: Map<string, { fileVars: Vars; playbookVars: Vars }> = kind === 'group' ? this.groups : this.clusters;
    for (const { name, files } of await entityVarFiles(varDir)) {
      const target = known.get(name) ?? (kind === 'cluster' && name === 'localhost' ? this.localhostVars : undefined);
      if (!target) {
        if (!strict) {
          // a group made at run time (group_by, add_host) gets them then
          if (kind === 'group') (this.laterGroupFiles[name] ??= { fileVars: [], playbookVars: [] })[slot].push(...files);
          continue;
        }
        const names = [...known.keys()];
        const at: SourcePos = { file: files[0] ?? path.join(varDir, name), line: 0, col: 0 };
        throw new InputError(`${sub}/${name}: there is no ${kind} named '${name}' in the inventory`, at, didYouMean(name, names) ?? `known ${kind}s: ${listSome(names)}`);
      }
      for (const full of files) await this.applyVarFile(full, path.relative(path.dirname(varDir), full), target[slot]);
    }
  }

  private async applyVarFile(full: string, shown: string, into: Vars): Promise<void> {
    const { value, secrets } = await loadYamlDoc(full);
    this.secrets.push(...secrets);
    if (value === null || value === undefined) return;
    if (!isRecord(value)) throw new InputError(`${shown} must be a map of variables (name: value), not ${kindOf(value)}`, posOf(value) ?? { file: full, line: 1, col: 1 });
    for (const key of Object.keys(value)) {
      checkVarName(key, posOf(value, key), shown);
      setVar(into, key, value[key]);
    }
  }

  /** Check names, cycles and memberships; build the inventory (contexts are resolved by the caller). */
  finish(source: string): { inventory: Inventory; accs: Map<string, ClusterAcc> } {
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
    // Ansible: a group in no other group (a top-level group of a YAML file) is a child of all.
    const all = this.groups.get('all') as GroupAcc;
    const ungrouped = this.groups.get('ungrouped') as GroupAcc;
    for (const g of this.groups.values()) {
      if (g.name === 'all' || g.name === 'ungrouped' || g.parents.length > 0) continue;
      g.parents.push('all');
      all.children.push(g.name);
    }
    this.checkCycles();
    const depth = this.depths();
    const order = (a: string, b: string): number =>
      (depth.get(a) ?? 0) - (depth.get(b) ?? 0) || (this.groups.get(a)?.priority ?? 1) - (this.groups.get(b)?.priority ?? 1) || byName(a, b);

    // Direct memberships → all memberships (ancestors included).
    const direct = new Map<string, Set<string>>();
    for (const g of this.groups.values()) {
      for (const c of g.clusters) {
        let set = direct.get(c);
        if (!set) direct.set(c, (set = new Set()));
        set.add(g.name);
      }
    }
    const clusters = new Map<string, InventoryCluster>();
    for (const c of this.clusters.values()) {
      const mine = groupAncestry(direct.get(c.name), (g) => this.groups.get(g)?.parents);
      if ([...mine].every((g) => g === 'all')) {
        mine.add('ungrouped');
        ungrouped.clusters.push(c.name);
      } else if (mine.has('ungrouped') && mine.size > 2) {
        // Ansible: a host listed under `ungrouped` and in another group is not ungrouped
        mine.delete('ungrouped');
        ungrouped.clusters.splice(ungrouped.clusters.indexOf(c.name), 1);
      }
      clusters.set(c.name, { name: c.name, context: '', vars: { ...c.vars, ...c.fileVars, ...c.playbookVars }, groups: [...mine].sort(order) });
    }
    ungrouped.parents.push('all');
    all.children.unshift('ungrouped');

    const groups = new Map<string, InventoryGroup>();
    for (const g of this.groups.values()) {
      groups.set(g.name, {
        name: g.name,
        vars: { ...g.vars, ...g.fileVars, ...g.playbookVars },
        inlineVars: g.vars,
        fileVars: g.fileVars,
        playbookVars: g.playbookVars,
        priority: g.priority,
        children: g.children,
        clusters: g.clusters,
        parents: g.parents,
        depth: depth.get(g.name) ?? 0,
      });
    }

    const secrets = [...this.secrets];
    for (const g of groups.values()) collectSecretsByName(g.vars, secrets, 0);
    for (const c of clusters.values()) collectSecretsByName(c.vars, secrets, 0);
    const localhostVars = this.clusters.has('localhost') ? {} : { ...this.localhostVars.fileVars, ...this.localhostVars.playbookVars };
    collectSecretsByName(localhostVars, secrets, 0);
    const inventory: Inventory = { source, dir: this.dir, clusters, groups, secrets: [...new Set(secrets)], declaredSecrets: [...new Set(this.secrets)] };
    if (Object.keys(localhostVars).length > 0) inventory.localhostVars = localhostVars;
    if (Object.keys(this.laterGroupFiles).length > 0) inventory.laterGroupVarFiles = this.laterGroupFiles;
    return { inventory, accs: this.clusters };
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
    // groups only reachable through a cycle among themselves (every one has a parent) are never visited from all
    for (const name of this.groups.keys()) if (!state.has(name)) visit(name);
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

/** `ansible_group_priority`: an integer (a numeric string too, as ansible-core's int()). */
function groupPriority(value: unknown, pos: SourcePos | undefined, group: string): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n)) throw new InputError(`group '${group}': ansible_group_priority must be an integer, got ${JSON.stringify(value)}`, pos);
  return n;
}


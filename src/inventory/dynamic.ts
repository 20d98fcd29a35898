/**
 * The in-memory inventory changed during a run, as ansible-core's `add_host` and `group_by` change
 * it (InventoryManager.add_dynamic_host / add_dynamic_group, then InventoryData.reconcile_inventory):
 * a new host joins `all` (and `ungrouped` when it is in no other group), new groups become children
 * of `all` when they have no parent, and every host's group list (ancestors included) is computed
 * again. Each function says whether it changed anything: that is the task's `changed`, as in Ansible.
 *
 * The Inventory object is changed in place (the run's one inventory); the caller refreshes what it
 * derived from it (src/executor/dynamic-inventory.ts).
 */
import { isRecord } from '../core/shape.js';
import { InputError } from '../load/errors.js';
import { loadYamlDoc } from '../load/yaml.js';
import { byName, setVar } from './builder.js';
import type { Inventory, InventoryCluster, InventoryGroup } from './types.js';
import { groupAncestry } from './ancestry.js';

type Obj = Record<string, unknown>;

/** What `add_host` asks for (its `add_host` result, as ansible-core's action returns it). */
export interface NewHost {
  name: string;
  groups: string[];
  vars: Obj;
}

/** Where a host's connection resolves to (its context and kubeconfig), from its name and the vars it sees. */
export type Connect = (name: string, vars: Obj) => { context: string; kubeconfig: string };

/** Python's `==` on plain data: maps equal whatever the key order. */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameData(x, b[i]));
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && sameData((a as Obj)[k], (b as Obj)[k]));
}

function newGroup(name: string): InventoryGroup {
  return { name, vars: {}, inlineVars: {}, fileVars: {}, playbookVars: {}, priority: 1, children: [], clusters: [], parents: [], depth: 1 };
}

/** The group `name`, made when missing (no parent yet: {@link reconcile} puts it under `all`). */
function ensureGroup(inv: Inventory, name: string): { group: InventoryGroup; made: boolean } {
  const known = inv.groups.get(name);
  if (known) return { group: known, made: false };
  const group = newGroup(name);
  inv.groups.set(name, group);
  return { group, made: true };
}

/** `Group.add_child_group`: true when `child` was not already a child of `parent`. */
function addChild(inv: Inventory, parent: string, child: string): boolean {
  const p = inv.groups.get(parent);
  const c = inv.groups.get(child);
  if (!p || !c || parent === child || p.children.includes(child)) return false;
  p.children.push(child);
  c.parents.push(parent);
  return true;
}

/** `Group.add_host`: true when the host was not already directly in the group. */
function addMember(group: InventoryGroup, host: string): boolean {
  if (group.clusters.includes(host)) return false;
  group.clusters.push(host);
  return true;
}

/**
 * `InventoryData.reconcile_inventory`: parentless groups go under `all`, a host in no group but
 * `all` is `ungrouped` (and leaves `ungrouped` once it is in another group), depths and each
 * host's ordered group list (ancestors included, low → high precedence) are computed again.
 */
export function reconcile(inv: Inventory): void {
  const all = inv.groups.get('all');
  const ungrouped = inv.groups.get('ungrouped');
  if (!all || !ungrouped) return;
  for (const g of inv.groups.values()) if (g.name !== 'all' && g.parents.length === 0) addChild(inv, 'all', g.name);
  const depth = new Map<string, number>([['all', 0]]);
  const depthOf = (name: string, seen: Set<string>): number => {
    const known = depth.get(name);
    if (known !== undefined) return known;
    if (seen.has(name)) return 1;
    seen.add(name);
    const parents = inv.groups.get(name)?.parents ?? [];
    const d = parents.length === 0 ? 1 : 1 + Math.max(...parents.map((p) => depthOf(p, seen)));
    depth.set(name, d);
    return d;
  };
  for (const g of inv.groups.values()) g.depth = depthOf(g.name, new Set());
  const order = (a: string, b: string): number => (depth.get(a) ?? 0) - (depth.get(b) ?? 0) || (inv.groups.get(a)?.priority ?? 1) - (inv.groups.get(b)?.priority ?? 1) || byName(a, b);
  const direct = new Map<string, Set<string>>();
  for (const g of inv.groups.values()) for (const c of g.clusters) (direct.get(c) ?? direct.set(c, new Set()).get(c))?.add(g.name);
  for (const c of inv.clusters.values()) {
    if (c.implicit) continue;
    const mine = groupAncestry(direct.get(c.name), (g) => inv.groups.get(g)?.parents);
    mine.delete('ungrouped');
    if (mine.size === 1) {
      mine.add('ungrouped');
      addMember(ungrouped, c.name);
    } else if (ungrouped.clusters.includes(c.name)) ungrouped.clusters.splice(ungrouped.clusters.indexOf(c.name), 1);
    c.groups = [...mine].sort(order);
  }
}

/**
 * `add_host`: the host is made (in `all`) when the inventory has none of that name, its vars
 * merged with the new ones (the new win per key), and it joins each group (made when missing).
 * True when any of that changed the inventory (ansible-core's `changed`).
 */
export function addDynamicHost(inv: Inventory, host: NewHost, connect: Connect): boolean {
  let changed = false;
  let c: InventoryCluster | undefined = inv.clusters.get(host.name);
  if (!c || c.implicit) {
    // the implicit localhost is in no group: `add_host: localhost` makes it a real host of `all` (the same object: the run holds it)
    if (c) delete c.implicit;
    else {
      c = { name: host.name, context: '', kubeconfig: '', vars: {}, groups: ['all'] };
      inv.clusters.set(host.name, c);
    }
    const all = inv.groups.get('all');
    if (all) addMember(all, host.name);
    changed = true;
  }
  const merged = { ...c.vars, ...host.vars };
  if (!sameData(merged, c.vars)) {
    c.vars = merged;
    changed = true;
  }
  for (const name of host.groups) {
    const { group, made } = ensureGroup(inv, name);
    if (made) changed = true;
    if (addMember(group, host.name)) changed = true;
  }
  if (changed) {
    reconcile(inv);
    const seen: Obj = {};
    for (const g of c.groups) Object.assign(seen, inv.groups.get(g)?.vars);
    const conn = connect(c.name, { ...seen, ...c.vars });
    c.context = conn.context;
    c.kubeconfig = conn.kubeconfig;
  }
  return changed;
}

/**
 * `group_by`: the group `key` (made when missing) under each of `parents` (made when missing),
 * and `host` in it. True when anything changed, with ansible-core's reckoning: a new parent, a new
 * parent link, or the host new in the group.
 */
export function addDynamicGroup(inv: Inventory, host: string, key: string, parents: readonly string[]): boolean {
  let changed = false;
  const { group } = ensureGroup(inv, key);
  for (const p of parents) if (ensureGroup(inv, p).made) changed = true;
  for (const p of parents) if (addChild(inv, p, key)) changed = true;
  const c = inv.clusters.get(host);
  if (c?.implicit) {
    // ansible-core adds the implicit localhost to the group; it stays out of `all`
    if (addMember(group, host)) changed = true;
    if (!c.groups.includes(key)) c.groups = [...c.groups, key];
  } else if (addMember(group, host)) changed = true;
  if (changed) reconcile(inv);
  return changed;
}

/**
 * Give the groups made at run time their `group_vars/` files (Inventory.laterGroupVarFiles), as
 * ansible-core's vars plugin reads them: the inventory's, then the playbook's (which win). Returns
 * the secrets the files held (vault values, `!secret` scalars) for the caller to mask.
 */
export async function applyLaterGroupVars(inv: Inventory, groups: readonly string[]): Promise<string[]> {
  const secrets: string[] = [];
  for (const name of groups) {
    const later = inv.laterGroupVarFiles?.[name];
    const g = inv.groups.get(name);
    if (!later || !g) continue;
    delete inv.laterGroupVarFiles?.[name];
    for (const slot of ['fileVars', 'playbookVars'] as const) {
      for (const file of later[slot]) {
        const { value, secrets: s } = await loadYamlDoc(file);
        secrets.push(...s);
        if (value === null || value === undefined) continue;
        if (!isRecord(value)) throw new InputError(`${file} must be a map of variables (name: value)`, { file, line: 1, col: 1 });
        for (const [k, v] of Object.entries(value)) setVar(g[slot], k, v);
      }
    }
    g.vars = { ...g.inlineVars, ...g.fileVars, ...g.playbookVars };
  }
  return secrets;
}

/**
 * An inventory source → an Inventory: reading its files (source.ts finds them, document.ts reads
 * each), applying `group_vars/`, `host_vars/` and `cluster_vars/` (the inventory's, then the
 * playbook's), resolving each cluster's connection; also the inventory of a run without one.
 * The variable helpers the executor uses are in host-vars.ts.
 */
import path from 'node:path';
import { posOf } from '../load/yaml.js';
import { Builder } from './builder.js';
import { resolveConnection } from './connection.js';
import { readInventoryFile } from './document.js';
import { inventoryVars } from './host-vars.js';
import { kindOfPath, resolveInventory } from './source.js';
import type { Inventory, LoadInventoryOptions } from './types.js';

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

/**
 * ansible-core's `host_list` inventory source: `-i host1,host2` (a comma in what is not a path) is
 * those hosts, in `ungrouped`. A `host:port` entry is the host (there is no port to reach here).
 */
async function hostList(ref: string, cwd: string): Promise<string[] | undefined> {
  if (!ref.includes(',') || (await kindOfPath(path.resolve(cwd, ref))) !== undefined) return undefined;
  return ref
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '')
    .map((h) => (/^[^:\[\]]+:\d+$/.test(h) ? h.replace(/:\d+$/, '') : h));
}

/**
 * Load an inventory (see {@link resolveInventory} for what `ref` may be; a comma-separated list of
 * host names is ansible-core's `host_list` source).
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
  const hosts = await hostList(ref, cwd);
  const where = hosts ? { files: [], dir: cwd, isDir: false } : await resolveInventory(ref, opts);
  const b = new Builder(where.dir, env);
  if (hosts) b.walkGroup('ungrouped', { hosts: Object.fromEntries(hosts.map((h) => [h, {}])) }, undefined, undefined);
  for (const file of where.files) {
    const { doc, secrets } = await readInventoryFile(file);
    b.secrets.push(...secrets);
    for (const key of Object.keys(doc)) b.walkGroup(key, doc[key], posOf(doc, key), undefined);
  }
  for (const [sub, kind] of [['group_vars', 'group'], ['host_vars', 'cluster'], ['cluster_vars', 'cluster']] as const) {
    if (hosts) break;
    const varDir = path.join(where.dir, sub);
    if ((await kindOfPath(varDir)) === 'dir') await b.applyVarFiles(varDir, kind, where.isDir);
  }
  await applyPlaybookVarFiles(b, opts.playbookDir, cwd, where.dir);
  const source = hosts ? ref : where.files.length === 1 ? (where.files[0] as string) : where.dir;
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

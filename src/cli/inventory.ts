/** `kplay inventory`: like ansible-inventory — resolved vars per cluster, group tree. */
import { stringify } from 'yaml';
import { graph } from '../inventory/graph.js';
import { emptyInventory, loadInventory } from '../inventory/resolve.js';
import { groupsMap, inventoryVars } from '../inventory/host-vars.js';
import { InputError } from '../load/errors.js';
import { Masker } from '../core/mask.js';
import { reportError } from './common.js';
import { NO_INVENTORY_WARNING } from '../run/inputs.js';
import { EXIT, type ExitCode } from '../core/exit.js';

export interface InventoryFlags {
  inventory?: string;
  list?: boolean;
  graph?: boolean;
  cluster?: string;
}

/** `kplay inventory`: without `-i`, an empty inventory (Ansible's warning), as ansible-inventory. */
export async function inventoryCommand(flags: InventoryFlags): Promise<ExitCode> {
  try {
    if (!flags.inventory) process.stderr.write(`WARNING: ${NO_INVENTORY_WARNING}\n`);
    const inv = flags.inventory ? await loadInventory(flags.inventory, { cwd: process.cwd() }) : emptyInventory({ cwd: process.cwd() });
    const masker = new Masker();
    inv.secrets.forEach((s) => masker.add(s));
    const modes = [flags.list, flags.graph, flags.cluster !== undefined].filter(Boolean).length;
    if (modes !== 1) throw new InputError('choose exactly one of --list, --graph, --cluster NAME');
    if (flags.graph) {
      process.stdout.write(`${graph(inv)}\n`);
    } else if (flags.cluster !== undefined) {
      const c = inv.clusters.get(flags.cluster);
      if (!c) throw new InputError(`no cluster named '${flags.cluster}' in ${inv.source}`, undefined, `clusters: ${[...inv.clusters.keys()].join(', ')}`);
      const out = { cluster: c.name, context: c.context, kubeconfig: c.kubeconfig, groups: c.groups, vars: inventoryVars(inv, c.name) };
      process.stdout.write(masker.mask(stringify(out, { lineWidth: 0 })));
    } else {
      const clusters: Record<string, unknown> = {};
      for (const c of inv.clusters.values()) clusters[c.name] = { context: c.context, kubeconfig: c.kubeconfig, groups: c.groups, vars: inventoryVars(inv, c.name) };
      const groups: Record<string, unknown> = {};
      for (const g of inv.groups.values()) groups[g.name] = { children: g.children, clusters: g.clusters, vars: g.vars };
      process.stdout.write(`${masker.mask(JSON.stringify({ source: inv.source, groups, members: groupsMap(inv), clusters }, null, 2))}\n`);
    }
    return EXIT.ok;
  } catch (e) {
    return reportError(e);
  }
}

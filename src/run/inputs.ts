/**
 * The inputs of a run, loaded and checked before anything runs: the module registry, the playbook
 * (every static check), the inventory (`-i`, or Ansible's implicit localhost) and the extra vars
 * (`-e`), with the masker that knows every secret among them. `kplay run`, `plan`, `drift`,
 * `validate` and `kplay fleet job` load through here.
 */
import path from 'node:path';
import { InputError } from '../load/errors.js';
import { loadYamlDoc, parseYaml, posOf } from '../load/yaml.js';
import { lazyScope } from '../executor/lazyvars.js';
import { Templar, templar } from '../template/index.js';
import { loadInventory, loadNoInventory } from '../inventory/resolve.js';
import { InventoryNotFound } from '../inventory/source.js';
import { withImplicitLocalhost } from '../inventory/localhost.js';
import type { Inventory } from '../inventory/types.js';
import { loadPlaybook } from '../playbook/parse.js';
import type { Playbook } from '../playbook/types.js';
import { Masker } from '../core/mask.js';
import { vaultSecrets } from '../core/vault.js';
import { setting } from '../core/settings.js';
import { loadRegistry, type ModuleRegistry } from '../plugins/registry.js';

/** Flags shared by commands that load a playbook. */
export interface LoadFlags {
  inventory?: string;
  extraVars?: string[];
  modulePath?: string[];
}

/** Everything a run needs, loaded and checked. */
export interface Loaded {
  registry: ModuleRegistry;
  playbook: Playbook;
  inventory?: Inventory;
  extraVars: Record<string, unknown>;
  masker: Masker;
}

/** Parse `-e` values: `k=v k2=v2`, `@file.yml`, or an inline YAML/JSON map. Later values win. */
export async function parseExtraVars(values: string[] | undefined, cwd: string, masker: Masker): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const raw of values ?? []) {
    const v = raw.trim();
    if (v.startsWith('@')) {
      const file = path.resolve(cwd, v.slice(1));
      const { value, secrets } = await loadYamlDoc(file);
      secrets.forEach((s) => masker.addDeclared(s));
      if (value === null) continue;
      if (typeof value !== 'object' || Array.isArray(value)) throw new InputError(`-e ${v}: the file must hold a map of variables`, { file, line: 1, col: 1 });
      Object.assign(out, value);
    } else if (v.startsWith('{')) {
      const { docs } = parseYaml(v, '-e');
      const value = docs[0];
      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InputError(`-e: expected a map, got ${v}`);
      Object.assign(out, value);
    } else {
      for (const pair of splitPairs(v)) {
        const eq = pair.indexOf('=');
        if (eq <= 0) throw new InputError(`-e '${pair}': expected key=value, @file.yml or a {map}`);
        const key = pair.slice(0, eq);
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new InputError(`-e: invalid variable name '${key}'`);
        out[key] = pair.slice(eq + 1);
      }
    }
  }
  masker.addByName(out);
  return out;
}

/** Split `a=1 b="x y"` on spaces outside quotes (quotes removed). */
function splitPairs(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  let q: string | undefined;
  for (const ch of s) {
    if (q) {
      if (ch === q) q = undefined;
      else cur += ch;
    } else if (ch === '"' || ch === "'") q = ch;
    else if (/\s/.test(ch)) {
      if (cur) out.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (cur) out.push(cur);
  return out;
}

/** What kplay says when no inventory is given, as ansible-playbook does. */
export const NO_INVENTORY_WARNING = 'No inventory was parsed, only implicit localhost is available';

/**
 * The inventory of `-i REF`, or with no `-i` (when `orEmpty`) an empty one after saying so once on
 * stderr (Ansible's warning). A play naming `localhost` gets Ansible's implicit localhost.
 */
export async function loadInventoryFlag(
  ref: string | undefined,
  opts: { cwd: string; playbookDir?: string; patterns: readonly (string | readonly string[] | undefined)[] },
): Promise<Inventory> {
  let inv: Inventory | undefined;
  try {
    if (ref) inv = await loadInventory(ref, { cwd: opts.cwd, playbookDir: opts.playbookDir });
  } catch (e) {
    // as ansible-playbook: an inventory source that is not there is a warning, and the run has none
    if (!(e instanceof InventoryNotFound)) throw e;
    process.stderr.write(`WARNING: Unable to parse ${path.resolve(opts.cwd, ref ?? '')} as an inventory source\n`);
  }
  if (!inv) {
    process.stderr.write(`WARNING: ${NO_INVENTORY_WARNING}\n`);
    inv = await loadNoInventory({ cwd: opts.cwd, playbookDir: opts.playbookDir });
  }
  return withImplicitLocalhost(inv, opts.patterns, { cwd: opts.cwd });
}

/**
 * Templated `hosts:` (`hosts: "{{ target }}"`) rendered as ansible-playbook renders them when the
 * play loads: with the play's variables, its `vars_files` and the extra vars (no inventory
 * variables). An undefined variable is an error at the play, as in Ansible.
 */
export function renderPlayHosts(playbook: Playbook, extraVars: Record<string, unknown>): void {
  for (const play of playbook.plays) {
    if (!(Array.isArray(play.hosts) ? play.hosts.some((h) => Templar.isTemplated(h)) : Templar.isTemplated(play.hosts))) continue;
    const scope = lazyScope({ ...play.vars, ...play.varsFromFiles, ...extraVars, playbook_dir: playbook.dir });
    const rendered = templar.renderValueSync(play.hosts, scope, { where: posOf(play.hosts) ?? play.pos });
    if (typeof rendered === 'string') play.hosts = rendered;
    else if (Array.isArray(rendered)) play.hosts = rendered.map(String);
    else throw new InputError(`hosts: the template gave ${JSON.stringify(rendered)}, not a host pattern`, play.pos);
  }
}

/**
 * Load registry, playbook (all static checks), inventory and extra vars. Throws InputError.
 * Without `-i`: `requireInventory` (run, plan, drift) runs on Ansible's implicit localhost only
 * (with Ansible's warning); otherwise (validate) there is no inventory to check patterns against.
 */
export async function loadAll(playbookFile: string, flags: LoadFlags, requireInventory: boolean): Promise<Loaded> {
  const cwd = process.cwd();
  const masker = new Masker();
  // the vault passwords themselves (set by the CLI before anything is read) are never shown
  for (const v of vaultSecrets()) masker.add(v.secret.toString('utf8'));
  const pbDir = path.dirname(path.resolve(playbookFile));
  // built-in modules are imported as the playbook names them (lazy): a run loads only its own
  const registry = await loadRegistry({ modulePaths: flags.modulePath, libraryPaths: setting('library'), searchDirs: [pbDir, cwd], lazy: true });
  const extraVars = await parseExtraVars(flags.extraVars, cwd, masker);
  const playbook = await loadPlaybook(playbookFile, { registry, extraVars, warn: (msg) => process.stderr.write(`WARNING: ${msg}\n`) });
  playbook.secrets.forEach((s) => masker.addDeclared(s));
  for (const p of playbook.plays) masker.addByName(p.vars);
  renderPlayHosts(playbook, extraVars);
  let inventory: Inventory | undefined;
  // no -i: ANSIBLE_INVENTORY or `inventory` of ansible.cfg (the first of its list), as ansible-playbook reads them
  const invRef = flags.inventory ?? setting('inventory')[0];
  if (invRef || requireInventory) {
    inventory = await loadInventoryFlag(invRef, { cwd, playbookDir: pbDir, patterns: playbook.plays.map((p) => p.hosts) });
    inventory.secrets.forEach((s) => masker.add(s));
    inventory.declaredSecrets?.forEach((s) => masker.addDeclared(s));
  }
  return { registry, playbook, inventory, extraVars, masker };
}

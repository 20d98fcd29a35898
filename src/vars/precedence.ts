/**
 * Variable precedence — the single place where it is defined.
 *
 * For one cluster, variables come from these layers, from LOWEST to HIGHEST precedence
 * (a later layer replaces a key set by an earlier one):
 *
 *   0. role defaults (`defaults/main.yml`): of every public role of the play (`roles:`,
 *      `import_role`, `include_role` with `public: true`), then those of the task's own role
 *      (its dependencies', its parents', its own) — see src/vars/roles.ts
 *   1. inventory group vars, ordered by the inventory (`groupVarLayers`, ansible-core's order):
 *      first the inline `vars` of every group of the cluster, then the `group_vars/` files of
 *      every group of the cluster (any group_vars file beats every inline group var); each half:
 *        a. the `all` group
 *        b. parent groups before child groups: a group's depth is its longest distance from
 *           `all` (all = 0), and deeper groups win
 *        c. groups at the same depth: by `ansible_group_priority` (default 1; higher wins), then
 *           by group name, alphabetically; the later name wins
 *   2. cluster vars (inline `vars` / Ansible host vars, overridden per key by `host_vars/` and
 *      `cluster_vars/` files)
 *   3. play `vars`
 *   4. play `vars_files` (in listed order, later files win)
 *   4a. role vars (`vars/main.yml`) of every public role of the play, then the task's own
 *      role's: its parents' vars and `vars:`, its dependencies', its own `vars/main.yml`, the
 *      `vars:` of the role entry
 *   5. block `vars`, outer block → inner block
 *   6. task `vars`
 *   7. facts: `set_fact` and `register` results
 *   7a. role params (`- {role: web, port: 80}`) and `include_role`/`import_role` `vars:`
 *   8. extra vars (`-e` / `--extra-vars`)
 *   9. magic vars, set last so they always hold the truth:
 *        cluster_name   the cluster's inventory name
 *        group_names    the cluster's groups, sorted, excluding `all` (an ungrouped host's is `['ungrouped']`, as in ansible-core)
 *        groups         group name → cluster names (every group, including `all` and `ungrouped`)
 *        clusters       cluster name → that cluster's merged inventory vars (layers 1–2)
 *        check_mode     true under `--check`
 *        play_name      the current play's name
 *        run_id         the id of this run
 *        inventory_dir  absolute directory of the inventory
 *        playbook_dir   absolute directory of the playbook
 *      The inventory refuses to define these names, so they are never silently shadowed.
 *
 * Merging REPLACES per top-level key (Ansible's default `hash_behaviour=replace`): a map
 * defined in a higher layer replaces the whole map of a lower layer; nothing is deep-merged.
 * Values are merged raw (templates are rendered later, by the caller) and are not copied.
 */

/** The names of the magic variables (layer 9), in documentation order. */
export const MAGIC_VARS = [
  'cluster_name',
  'group_names',
  'groups',
  'clusters',
  'check_mode',
  'play_name',
  'run_id',
  'inventory_dir',
  'playbook_dir',
] as const;

/** A magic variable name. */
export type MagicVarName = (typeof MAGIC_VARS)[number];

/** True if `name` is a magic variable name. */
export function isMagicVar(name: string): name is MagicVarName {
  return (MAGIC_VARS as readonly string[]).includes(name);
}

/** Every variable layer for one cluster at one point of a run (see the header for precedence). */
export interface VarLayers {
  /** Role defaults, low → high (layer 0). */
  roleDefaults?: Record<string, unknown>[];
  /** Inventory group vars, already ordered low → high (see `groupVarLayers`). */
  groupVars: Record<string, unknown>[];
  /** The cluster's own inventory vars. */
  clusterVars: Record<string, unknown>;
  /** Play `vars`. */
  playVars?: Record<string, unknown>;
  /** Play `vars_files`, already merged in file order. */
  playVarsFiles?: Record<string, unknown>;
  /** Role vars, low → high (layer 4a). */
  roleVars?: Record<string, unknown>[];
  /** Block `vars`, outer → inner. */
  blockVars?: Record<string, unknown>[];
  /** Task `vars`. */
  taskVars?: Record<string, unknown>;
  /** `set_fact` and `register` results. */
  facts?: Record<string, unknown>;
  /** Role params and include params (layer 7a). */
  roleParams?: Record<string, unknown>[];
  /** Extra vars (`-e`). */
  extraVars?: Record<string, unknown>;
  /** Magic vars (see `MAGIC_VARS`), applied last. */
  magic?: Record<string, unknown>;
}

/** Set `key` on `out` even when it is `__proto__` (never touching the prototype). */
function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/** The layers of `layers`, lowest precedence first. */
export function orderedLayers(layers: VarLayers): Record<string, unknown>[] {
  const out: (Record<string, unknown> | undefined)[] = [
    ...(layers.roleDefaults ?? []),
    ...layers.groupVars,
    layers.clusterVars,
    layers.playVars,
    layers.playVarsFiles,
    ...(layers.roleVars ?? []),
    ...(layers.blockVars ?? []),
    layers.taskVars,
    layers.facts,
    ...(layers.roleParams ?? []),
    layers.extraVars,
    layers.magic,
  ];
  return out.filter((l): l is Record<string, unknown> => l !== undefined && l !== null);
}

/**
 * Merge objects left to right: a later object replaces an earlier one's value per top-level key
 * (no deep merge). Returns a new object; the values themselves are shared, not copied.
 */
export function replaceMerge(objects: readonly Record<string, unknown>[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const obj of objects) for (const key of Object.keys(obj)) setOwn(out, key, obj[key]);
  return out;
}

/** The variables visible to a task: every layer merged by precedence (see the file header). */
export function mergeVars(layers: VarLayers): Record<string, unknown> {
  return replaceMerge(orderedLayers(layers));
}

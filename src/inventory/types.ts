/**
 * The in-memory model of a kplay inventory: clusters (the "hosts" of kplay) organised in a
 * tree-like graph of groups rooted at `all`.
 *
 * An {@link Inventory} is immutable once loaded; helpers such as `inventoryVars` may cache
 * derived data per inventory object.
 */

/** One Kubernetes cluster, i.e. one kubeconfig context. */
export interface InventoryCluster {
  /** The cluster's inventory name (`[A-Za-z0-9_.-]+`, unique among clusters and groups). */
  name: string;
  /**
   * Kubeconfig context to use. A `clusters:` entry: its `context`, else the var `kplay_context`,
   * else its name. A host of an Ansible `hosts:` section (and the implicit localhost): the var
   * `kplay_context`, else `$K8S_AUTH_CONTEXT`, else the kubeconfig's `current-context` (read when
   * the inventory loads; `''` when the kubeconfig has none or does not exist: connecting then fails).
   */
  context: string;
  /**
   * Absolute path of the kubeconfig file (`~` and `$VAR`s expanded, relative paths resolved
   * against the inventory's directory). Always set by `loadInventory`: when the inventory does
   * not say, it is the first path of `$KUBECONFIG`, else `~/.kube/config`.
   */
  kubeconfig?: string;
  /** The cluster's own vars (inline vars, then `host_vars/` and `cluster_vars/` files, then `host_vars/` next to the playbook; later wins per key). */
  vars: Record<string, unknown>;
  /**
   * Every group the cluster belongs to, ancestors included, always including `all` (and
   * `ungrouped` when it is in no child group). Ordered by variable precedence, low → high:
   * by depth, then by name.
   */
  groups: string[];
  /**
   * Ansible's implicit localhost: the host `localhost` (also reached as `127.0.0.1` / `::1`) a play
   * may target when the inventory has no such host. It is in no group (`all` does not match it) and
   * sees the `all` group's vars. Absent on every other cluster.
   */
  implicit?: true;
}

/** A group of clusters. `all` is the root; `ungrouped` holds clusters in no other child group. */
export interface InventoryGroup {
  /** The group name (`[A-Za-z0-9_.-]+`). */
  name: string;
  /** The group's vars (inline `vars`, then `group_vars/<name>` of the inventory, then of the playbook; later wins per key). */
  vars: Record<string, unknown>;
  /** The inline `vars` of the group (in the inventory file). */
  inlineVars: Record<string, unknown>;
  /** The vars of the inventory's `group_vars/<name>` files (they win over every group's inline vars, as in Ansible). */
  fileVars: Record<string, unknown>;
  /** The vars of `group_vars/<name>` files next to the playbook (each wins over the inventory's file of the same group). */
  playbookVars: Record<string, unknown>;
  /** `ansible_group_priority` (default 1): among groups of the same depth, a higher priority wins. */
  priority: number;
  /** Direct child groups, in file order. */
  children: string[];
  /** Clusters listed directly in this group, in file order (for `ungrouped`: its computed members). */
  clusters: string[];
  /** Direct parent groups (empty for `all`). */
  parents: string[];
  /** Longest distance from `all` (`all` = 0, its children = 1, …). Deeper groups win in precedence. */
  depth: number;
}

/** A loaded inventory. */
export interface Inventory {
  /**
   * Absolute path of the inventory file (a directory inventory: its only inventory file, else the
   * directory); `''` when no inventory was given (only the implicit localhost).
   */
  source: string;
  /** Absolute path of the directory holding the inventory (`inventory_dir`). */
  dir: string;
  /** All clusters; insertion order = order of first appearance in the file. */
  clusters: Map<string, InventoryCluster>;
  /** All groups: `all` first, then `ungrouped`, then the others in order of first appearance. */
  groups: Map<string, InventoryGroup>;
  /**
   * Values to mask in all output: scalars tagged `!secret` in any inventory file and string or
   * number values (as strings) under var keys that look secret (see `SECRET_NAME`). The caller
   * registers them with its `Masker`.
   */
  secrets: string[];
  /** The scalars tagged `!secret` alone (a subset of `secrets`): secrets by declaration, not by name (see `src/report/provenance.ts`). */
  declaredSecrets?: string[];
  /**
   * The `group_vars/` files (the inventory's, the playbook's) of groups the inventory does not
   * have: a group `group_by` or `add_host` makes during the run gets them, as ansible-core's vars
   * plugin reads them for every group it knows then.
   */
  laterGroupVarFiles?: Record<string, { fileVars: string[]; playbookVars: string[] }>;
  /** Vars of `host_vars/localhost` files (inventory's, then playbook's) when there is no host `localhost`: the implicit localhost's. */
  localhostVars?: Record<string, unknown>;
}

/** Options of `loadInventory` (resolve.ts). */
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

/**
 * Task action names as Ansible resolves them: `ansible.builtin.X` / `ansible.legacy.X` for the
 * ansible-core modules and keyword actions kplay implements, `kubernetes.core.X` (and the old
 * `community.kubernetes.X`) for the kubernetes.core modules kplay implements, all mapped to the
 * registry's short name. Modules kplay does not implement (an ansible-core module that manages a
 * host, a kubernetes.core module that needs running containers, another collection's module) are
 * named with the reason, so the loader can say so at `file:line:col`.
 */

/** Task keys the loader handles itself (not registry modules), by their short name. */
export const KEYWORD_ACTIONS: ReadonlySet<string> = new Set(['include_tasks', 'import_tasks', 'include_role', 'import_role', 'meta']);

/** ansible-core 2.19's modules (`ansible/modules/*.py`): the names `ansible.builtin.X` can take. */
const ANSIBLE_BUILTIN = new Set([
  'add_host', 'apt', 'apt_key', 'apt_repository', 'assemble', 'assert', 'async_status', 'blockinfile', 'command', 'copy', 'cron', 'deb822_repository',
  'debconf', 'debug', 'dnf', 'dnf5', 'dpkg_selections', 'expect', 'fail', 'fetch', 'file', 'find', 'gather_facts', 'get_url', 'getent', 'git', 'group',
  'group_by', 'hostname', 'import_playbook', 'import_role', 'import_tasks', 'include_role', 'include_tasks', 'include_vars', 'iptables', 'known_hosts',
  'lineinfile', 'meta', 'mount_facts', 'package', 'package_facts', 'pause', 'ping', 'pip', 'raw', 'reboot', 'replace', 'rpm_key', 'script', 'service',
  'service_facts', 'set_fact', 'set_stats', 'setup', 'shell', 'slurp', 'stat', 'subversion', 'systemd', 'systemd_service', 'sysvinit', 'tempfile',
  'template', 'unarchive', 'uri', 'user', 'validate_argument_spec', 'wait_for', 'wait_for_connection', 'yum_repository',
]);

/** kubernetes.core's modules (`plugins/modules/*.py`) and the routed/removed names of its `meta/runtime.yml`. */
const KUBERNETES_CORE = new Set([
  'helm', 'helm_info', 'helm_plugin', 'helm_plugin_info', 'helm_pull', 'helm_registry_auth', 'helm_repository', 'helm_template', 'k8s', 'k8s_cluster_info',
  'k8s_cp', 'k8s_drain', 'k8s_exec', 'k8s_info', 'k8s_json_patch', 'k8s_log', 'k8s_rollback', 'k8s_scale', 'k8s_service', 'k8s_taint',
  'k8s_auth', 'k8s_facts', 'k8s_raw',
]);

/** Collections whose names refer to kubernetes.core's modules. */
const KUBERNETES_COLLECTIONS = new Set(['kubernetes.core', 'community.kubernetes']);

/** Why a kubernetes.core module is not in kplay, when there is more to say than "not implemented". */
const K8S_WHY: Record<string, { why: string; hint: string }> = {
  k8s_cp: { why: 'it copies files into and out of running containers, which kplay does not do', hint: 'ship the file in a ConfigMap or Secret (kubernetes.core.k8s) instead' },
  k8s_auth: { why: 'it is community.okd\'s OpenShift OAuth login (kubernetes.core routes it there)', hint: 'give the cluster a kubeconfig with a token in the inventory' },
  k8s_facts: { why: 'it was removed from kubernetes.core in 2.0.0', hint: 'use kubernetes.core.k8s_info' },
  k8s_raw: { why: 'it was removed from kubernetes.core', hint: 'use kubernetes.core.k8s' },
  // helm's own setup on the controller, not a release: kplay's helm modules need none of it
  helm_plugin: { why: "it installs helm plugins into the controller's helm; kplay's helm modules need none (kplay compares releases itself, without helm-diff)", hint: 'run `helm plugin install …` with ansible.builtin.command if another tool needs the plugin' },
  helm_plugin_info: { why: "it lists the controller's helm plugins; kplay's helm modules use none", hint: 'run `helm plugin list` with ansible.builtin.command' },
  helm_pull: { why: 'it downloads a chart archive to the controller; not implemented by kplay', hint: 'give the chart to kubernetes.core.helm or helm_template directly (chart_ref takes repo/chart, a chart URL or oci://), or run `helm pull` with ansible.builtin.command' },
  helm_registry_auth: { why: "it logs the controller's helm in to an OCI registry; not implemented by kplay", hint: 'run `helm registry login HOST --username USER --password-stdin` with ansible.builtin.command (stdin: the password, no_log: true)' },
};

/** Why an ansible-core module is not in kplay (kplay runs every task on the controller). */
const HOST_MODULE = 'it manages a host over SSH; kplay runs every task on the controller against Kubernetes clusters';
const BUILTIN_WHY: Record<string, string> = {
  gather_facts: 'use the play keyword `gather_facts: true`',
  setup: 'use the play keyword `gather_facts: true`',
  import_playbook: 'it is a play-level entry (`- import_playbook: file.yml`), not a task',
  async_status: 'kplay runs no task asynchronously (`async`/`poll` are not supported)',
  git: 'it checks out a repository over the network onto a host; kplay fetches nothing from the network by itself (check the repository out before the run, or keep the files in the playbook\'s tree)',
  subversion: 'it checks out a repository over the network onto a host; kplay fetches nothing from the network by itself (check the repository out before the run)',
};
for (const m of ['apt', 'apt_key', 'apt_repository', 'cron', 'deb822_repository', 'debconf', 'dnf', 'dnf5', 'dpkg_selections', 'expect', 'fetch', 'getent', 'group', 'hostname', 'iptables', 'known_hosts', 'mount_facts', 'package', 'package_facts', 'ping', 'pip', 'reboot', 'rpm_key', 'script', 'service', 'service_facts', 'systemd', 'systemd_service', 'sysvinit', 'user', 'wait_for_connection', 'yum_repository']) BUILTIN_WHY[m] = HOST_MODULE;

/** How a task key resolves. */
export type ActionName =
  /** A registry module or a keyword action, by its short (registry) name. */
  | { kind: 'action'; name: string; collection?: string }
  /** A real Ansible module kplay does not implement: `why` says so, `hint` what to do. */
  | { kind: 'unsupported'; key: string; why: string; hint: string }
  /** Not an action name at all (an unknown key: misspelt module or keyword). */
  | { kind: 'unknown' };

const FQCN = /^([a-z0-9_]+)\.([a-z0-9_]+)\.([a-z0-9_]+)$/;

/**
 * Resolve a task key to kplay's action name (see the file header). `known(short)` says whether
 * kplay has that action now (registry modules are loaded before playbooks; other modules may be
 * added by plug-ins, so the answer is asked, not listed).
 */
export function resolveAction(key: string, known: (short: string) => boolean): ActionName {
  const m = FQCN.exec(key);
  if (!m) {
    if (known(key)) return { kind: 'action', name: key };
    // a real module's short name kplay does not implement: say so instead of "unknown"
    if (KUBERNETES_CORE.has(key)) return notImplemented(key, 'kubernetes.core', key);
    if (ANSIBLE_BUILTIN.has(key)) return notImplemented(key, 'ansible.builtin', key);
    return { kind: 'unknown' };
  }
  const [, ns = '', coll = '', name = ''] = m;
  const collection = `${ns}.${coll}`;
  if (collection === 'ansible.builtin' || collection === 'ansible.legacy') {
    if (!ANSIBLE_BUILTIN.has(name)) return { kind: 'unknown' };
    return known(name) ? { kind: 'action', name, collection } : notImplemented(key, collection, name);
  }
  if (KUBERNETES_COLLECTIONS.has(collection)) {
    if (!KUBERNETES_CORE.has(name)) return { kind: 'unknown' };
    return known(name) ? { kind: 'action', name, collection } : notImplemented(key, collection, name);
  }
  return {
    kind: 'unsupported',
    key,
    why: `module '${name}' of collection '${collection}' is not available in kplay: kplay implements ansible.builtin's and kubernetes.core's modules (and its own), not other collections`,
    hint: 'replace the task with a kplay or kubernetes.core module (`kplay modules` lists them), or write a kplay module (README "Writing a module")',
  };
}

function notImplemented(key: string, collection: string, name: string): ActionName {
  if (KUBERNETES_COLLECTIONS.has(collection) || collection === 'kubernetes.core') {
    const k = K8S_WHY[name];
    return {
      kind: 'unsupported',
      key,
      why: k ? `kubernetes.core.${name} is not supported by kplay: ${k.why}` : `kubernetes.core.${name} is not implemented by kplay`,
      hint: k?.hint ?? '`kplay modules` lists the modules kplay has',
    };
  }
  const why = BUILTIN_WHY[name];
  return { kind: 'unsupported', key, why: why ? `ansible.builtin.${name} is not supported by kplay: ${why}` : `ansible.builtin.${name} is not implemented by kplay`, hint: '`kplay modules` lists the modules kplay has' };
}

/** kubernetes.core's action groups (`meta/runtime.yml`), for `module_defaults: {group/…: …}`. */
export const ACTION_GROUPS: Readonly<Record<string, readonly string[]>> = {
  k8s: ['k8s', 'k8s_exec', 'k8s_info', 'k8s_log', 'k8s_scale', 'k8s_service', 'k8s_cp', 'k8s_drain'],
  helm: ['helm', 'helm_info', 'helm_repository'],
};

/**
 * The action group a `module_defaults` key `group/<name>` names (`group/kubernetes.core.k8s`,
 * `group/k8s`), or undefined for another collection's group (those match no kplay module).
 */
export function actionGroup(key: string): readonly string[] | undefined {
  const g = key.slice('group/'.length);
  const m = /^(?:kubernetes\.core\.|community\.kubernetes\.)?([a-z0-9_]+)$/.exec(g);
  return m?.[1] ? ACTION_GROUPS[m[1]] : undefined;
}

/**
 * The fully qualified names under which Ansible finds the action `short` and kplay resolves them
 * to it (`ansible.builtin.X`/`ansible.legacy.X`, `kubernetes.core.X`/`community.kubernetes.X`):
 * for the editor schema, which lists every key a task may use.
 */
export function qualifiedNames(short: string): string[] {
  const out: string[] = [];
  if (ANSIBLE_BUILTIN.has(short)) out.push(`ansible.builtin.${short}`, `ansible.legacy.${short}`);
  if (KUBERNETES_CORE.has(short)) for (const c of KUBERNETES_COLLECTIONS) out.push(`${c}.${short}`);
  return out;
}

/**
 * The one table of kplay's settings read from the environment: every `KPLAY_*` variable, and the
 * other variables kplay itself interprets (`KUBECONFIG`, `HELM_DRIVER`, `NO_COLOR`, `TERM`,
 * `JOB_COMPLETION_INDEX`), and the ansible-core settings kplay has, with their Ansible names. Each
 * entry has its variable, type, default and doc; the README's "Environment variables" section is
 * generated from it (`npm run schemas`). Read a setting with `setting` (./settings.ts).
 */
import path from 'node:path';
import { unquote } from './ansible-config.js';
import type { SettingSpec } from './setting-spec.js';
import { ansibleBool, ansibleInt, boolean, ignoredAnsible, number, onePath, optional, pathlist, pathspec, underAnsibleHome, verbatim } from './setting-parsers.js';

const spec = <T>(s: SettingSpec<T>): SettingSpec<T> => s;

/** Clusters worked on in parallel when nothing says otherwise (`--forks`, `runManaged`'s `forks`). */
export const DEFAULT_FORKS = 10;
/** Default cap on the size of one input file (playbook, inventory, vars, task file). */
export const DEFAULT_MAX_INPUT_BYTES = 8 * 1024 * 1024;
/** Default maximum nesting depth of maps/lists in YAML input. */
export const DEFAULT_MAX_YAML_DEPTH = 64;
/** The most `KPLAY_MAX_YAML_DEPTH` can raise the nesting depth to (larger values give this). */
export const MAX_YAML_DEPTH_LIMIT = 1000;

/** Every setting, by the name {@link setting} takes. The order is the README's. */
export const SETTINGS = {
  recordDir: spec({
    env: 'KPLAY_RECORD_DIR',
    type: 'directory',
    default: '.kplay/runs',
    flag: '--record-dir',
    doc: 'Where local run records and journals go (relative to the working directory).',
    parse: verbatim,
  }),
  maxInputBytes: spec({
    env: 'KPLAY_MAX_INPUT_BYTES',
    type: 'bytes',
    default: DEFAULT_MAX_INPUT_BYTES,
    defaultDoc: `\`${DEFAULT_MAX_INPUT_BYTES}\` (8 MiB)`,
    flag: '--max-input-bytes',
    doc: 'Input files (playbooks, inventories, vars) larger than this are refused before they are read.',
    parse: number(DEFAULT_MAX_INPUT_BYTES, { min: 1, integer: true }),
  }),
  maxYamlDepth: spec({
    env: 'KPLAY_MAX_YAML_DEPTH',
    type: 'count',
    default: DEFAULT_MAX_YAML_DEPTH,
    doc: `Deepest nesting of maps/lists accepted in YAML input (at most ${MAX_YAML_DEPTH_LIMIT}; larger values give ${MAX_YAML_DEPTH_LIMIT}).`,
    parse: (raw) => Math.min(number(DEFAULT_MAX_YAML_DEPTH, { min: 1, integer: true })(raw), MAX_YAML_DEPTH_LIMIT),
  }),
  outageSeconds: spec({
    env: 'KPLAY_OUTAGE_SECONDS',
    type: 'seconds',
    default: 60,
    doc: 'How long kplay rides out an apiserver that answered before and went away — refusing connections, or not answering a request whole in time (a slow-loris front end) — counted from the first failed request, before the cluster is unreachable (exit 4); each attempt is bounded by what is left of it.',
    parse: number(60, { min: 0 }),
  }),
  execTimeoutSeconds: spec({
    env: 'KPLAY_EXEC_TIMEOUT_SECONDS',
    type: 'seconds',
    default: 30,
    doc: 'The bound on one call of a kubeconfig `exec` credential plugin; past it the plugin is killed and its cluster is unreachable.',
    parse: number(30, { min: 0, above: true }),
  }),
  rolesPath: spec<string[]>({
    env: 'KPLAY_ROLES_PATH',
    type: 'paths (`:`-separated; `;` on Windows)',
    default: [],
    defaultDoc: '`~/.ansible/roles:/usr/share/ansible/roles:/etc/ansible/roles` (Ansible\'s)',
    doc: 'Directories roles are looked for in, after `roles/` next to the playbook (and the roles next to the role using one) and before the playbook directory, as ansible-core searches them. Relative paths from ansible.cfg are relative to that file.',
    parse: (raw) => raw.split(path.delimiter).filter(Boolean).map((p) => path.resolve(p)),
    ansible: { name: 'DEFAULT_ROLES_PATH', env: 'ANSIBLE_ROLES_PATH', ini: ['defaults', 'roles_path'], parse: pathspec, default: underAnsibleHome('roles', ['/usr/share/ansible/roles', '/etc/ansible/roles']) },
  }),
  collectionsPath: spec<string[]>({
    env: 'ANSIBLE_COLLECTIONS_PATH',
    type: 'paths (`:`-separated)',
    default: [],
    defaultDoc: '`~/.ansible/collections:/usr/share/ansible/collections` (Ansible\'s)',
    doc: 'Where collection roles (`namespace.collection.role`) are looked for: `<dir>/ansible_collections/<namespace>/<collection>/roles/<role>` (and `<dir>` itself when it is an `ansible_collections` directory). Unlike ansible-core, kplay does not also search Python\'s `sys.path`.',
    parse: (raw) => pathspec(raw, process.cwd()),
    ansible: { name: 'COLLECTIONS_PATHS', env: 'ANSIBLE_COLLECTIONS_PATH', ini: ['defaults', 'collections_path'], parse: pathspec, default: underAnsibleHome('collections', ['/usr/share/ansible/collections']) },
  }),
  inventory: spec<string[]>({
    env: 'ANSIBLE_INVENTORY',
    type: 'paths (`,`-separated)',
    default: [],
    defaultDoc: '(none: Ansible\'s `/etc/ansible/hosts` is not read)',
    flag: '-i',
    doc: 'The inventory when `-i` is not given (kplay reads the first; Ansible merges them all). Relative paths from ansible.cfg are relative to that file.',
    parse: (raw) => pathlist(raw, process.cwd()),
    ansible: { name: 'DEFAULT_HOST_LIST', env: 'ANSIBLE_INVENTORY', ini: ['defaults', 'inventory'], parse: pathlist },
  }),
  forks: spec<number>({
    env: 'ANSIBLE_FORKS',
    type: 'count',
    default: DEFAULT_FORKS,
    flag: '--forks',
    doc: `Clusters worked on in parallel when \`--forks\` is not given (kplay's default is ${DEFAULT_FORKS}; Ansible's 5).`,
    parse: ansibleInt(1),
    ansible: { name: 'DEFAULT_FORKS', env: 'ANSIBLE_FORKS', ini: ['defaults', 'forks'], parse: ansibleInt(1) },
  }),
  gathering: spec<string>({
    env: 'ANSIBLE_GATHERING',
    type: '`implicit`, `explicit` or `smart`',
    default: 'explicit',
    defaultDoc: '`explicit` (Ansible\'s is `implicit`)',
    doc: 'Whether a play without `gather_facts:` gathers facts: `implicit` and `smart` do, `explicit` does not. kplay\'s default differs from Ansible\'s: its facts are the controller\'s, which a Kubernetes play rarely reads.',
    parse: (raw) => {
      if (!['implicit', 'explicit', 'smart'].includes(raw)) throw new Error('use implicit, explicit or smart');
      return raw;
    },
    ansible: { name: 'DEFAULT_GATHERING', env: 'ANSIBLE_GATHERING', ini: ['defaults', 'gathering'], parse: (raw) => unquote(raw) },
  }),
  forceHandlers: spec<boolean>({
    env: 'ANSIBLE_FORCE_HANDLERS',
    type: 'boolean',
    default: false,
    defaultDoc: '`False`',
    doc: 'Run notified handlers even on a cluster where a later task failed, for plays without `force_handlers:` (as `--force-handlers`).',
    parse: ansibleBool,
    ansible: { name: 'DEFAULT_FORCE_HANDLERS', env: 'ANSIBLE_FORCE_HANDLERS', ini: ['defaults', 'force_handlers'], parse: ansibleBool },
  }),
  anyErrorsFatal: spec<boolean>({
    env: 'ANSIBLE_ANY_ERRORS_FATAL',
    type: 'boolean',
    default: false,
    defaultDoc: '`False`',
    doc: 'A failure on one cluster ends the play on all, for plays and blocks without `any_errors_fatal:`.',
    parse: ansibleBool,
    ansible: { name: 'ANY_ERRORS_FATAL', env: 'ANSIBLE_ANY_ERRORS_FATAL', ini: ['defaults', 'any_errors_fatal'], parse: ansibleBool },
  }),
  duplicateDictKey: spec<string>({
    env: 'ANSIBLE_DUPLICATE_YAML_DICT_KEY',
    type: '`warn`, `error` or `ignore`',
    default: 'warn',
    doc: 'What a YAML map with a key twice does: `warn` (keep the last and say so), `error`, `ignore` (keep the last).',
    parse: (raw) => {
      if (!['warn', 'error', 'ignore'].includes(raw)) throw new Error('use warn, error or ignore');
      return raw;
    },
    ansible: { name: 'DUPLICATE_YAML_DICT_KEY', env: 'ANSIBLE_DUPLICATE_YAML_DICT_KEY', ini: ['defaults', 'duplicate_dict_key'], parse: (raw) => unquote(raw) },
  }),
  library: spec<string[]>({
    env: 'ANSIBLE_LIBRARY',
    type: 'paths (`:`-separated)',
    default: [],
    defaultDoc: '(none)',
    flag: '-M',
    doc: 'More module directories, after `-M`: kplay loads the kplay modules (JavaScript) there; Ansible\'s Python modules are not run.',
    parse: (raw) => pathspec(raw, process.cwd()),
    ansible: { name: 'DEFAULT_MODULE_PATH', env: 'ANSIBLE_LIBRARY', ini: ['defaults', 'library'], parse: pathspec },
  }),
  filterPlugins: ignoredAnsible('DEFAULT_FILTER_PLUGIN_PATH', 'ANSIBLE_FILTER_PLUGINS', 'filter_plugins', 'filters are built into kplay; Python filter plugins are not loaded.'),
  testPlugins: ignoredAnsible('DEFAULT_TEST_PLUGIN_PATH', 'ANSIBLE_TEST_PLUGINS', 'test_plugins', 'tests are built into kplay; Python test plugins are not loaded.'),
  lookupPlugins: ignoredAnsible('DEFAULT_LOOKUP_PLUGIN_PATH', 'ANSIBLE_LOOKUP_PLUGINS', 'lookup_plugins', 'lookups are built into kplay; Python lookup plugins are not loaded.'),
  actionPlugins: ignoredAnsible('DEFAULT_ACTION_PLUGIN_PATH', 'ANSIBLE_ACTION_PLUGINS', 'action_plugins', 'kplay runs its own modules; Python action plugins are not loaded.'),
  callbackPlugins: ignoredAnsible('DEFAULT_CALLBACK_PLUGIN_PATH', 'ANSIBLE_CALLBACK_PLUGINS', 'callback_plugins', 'output is chosen with `-o`.'),
  stdoutCallback: ignoredAnsible('DEFAULT_STDOUT_CALLBACK', 'ANSIBLE_STDOUT_CALLBACK', 'stdout_callback', 'output is chosen with `-o` (`text`, `json`, …).'),
  hostKeyChecking: ignoredAnsible('HOST_KEY_CHECKING', 'ANSIBLE_HOST_KEY_CHECKING', 'host_key_checking', 'kplay makes no SSH connections.'),
  retryFilesEnabled: ignoredAnsible('RETRY_FILES_ENABLED', 'ANSIBLE_RETRY_FILES_ENABLED', 'retry_files_enabled', 'kplay resumes from its run record (`--resume`) instead.'),
  pythonInterpreter: ignoredAnsible('INTERPRETER_PYTHON', 'ANSIBLE_PYTHON_INTERPRETER', 'interpreter_python', 'kplay runs no Python.'),
  timeout: ignoredAnsible('DEFAULT_TIMEOUT', 'ANSIBLE_TIMEOUT', 'timeout', 'kplay makes no SSH connections; see `KPLAY_OUTAGE_SECONDS` for the apiserver.'),
  helm: spec({
    env: 'KPLAY_HELM',
    type: 'program',
    default: 'helm',
    defaultDoc: '`helm` on `PATH`',
    doc: 'The helm program of the helm modules when the task names none (`binary_path` / `helm_binary`).',
    parse: (raw) => raw || 'helm',
  }),
  shard: spec<string | undefined>({
    env: 'KPLAY_SHARD',
    type: 'I/N',
    default: undefined,
    defaultDoc: '(not a shard)',
    flag: '--shard',
    doc: 'Run shard I (0-based) of N (see "Running a fleet window in shards").',
    parse: verbatim,
  }),
  shards: spec<string | undefined>({
    env: 'KPLAY_SHARDS',
    type: 'count',
    default: undefined,
    defaultDoc: '(none)',
    flag: '--shards',
    doc: 'The number of shards N, with the shard index from `JOB_COMPLETION_INDEX`.',
    parse: verbatim,
  }),
  jobCompletionIndex: spec<string | undefined>({
    env: 'JOB_COMPLETION_INDEX',
    type: 'index',
    default: undefined,
    defaultDoc: '(none)',
    doc: 'Set by Kubernetes in an Indexed Job pod: the shard index I, with N from `--shards` / `KPLAY_SHARDS`.',
    parse: verbatim,
  }),
  fleetRun: spec<string | undefined>({
    env: 'KPLAY_FLEET_RUN',
    type: 'id',
    default: undefined,
    defaultDoc: '(none)',
    flag: '--fleet-run',
    doc: 'The fleet run all shards share: one failure budget and stop flag in the management cluster.',
    parse: verbatim,
  }),
  fleetNamespace: spec<string | undefined>({
    env: 'KPLAY_FLEET_NAMESPACE',
    type: 'namespace',
    default: undefined,
    defaultDoc: "the pod's namespace, else `kplay-system`",
    flag: '--fleet-namespace',
    doc: "Namespace of the fleet run's ConfigMap.",
    parse: verbatim,
  }),
  fleetContext: spec<string | undefined>({
    env: 'KPLAY_FLEET_CONTEXT',
    type: 'context',
    default: undefined,
    defaultDoc: 'the current context (in a pod: its service account)',
    flag: '--fleet-context',
    doc: 'Kubeconfig context of the management cluster of a fleet run.',
    parse: verbatim,
  }),
  fleetKubeconfig: spec<string | undefined>({
    env: 'KPLAY_FLEET_KUBECONFIG',
    type: 'file',
    default: undefined,
    defaultDoc: 'the default kubeconfig',
    flag: '--fleet-kubeconfig',
    doc: 'Kubeconfig of the management cluster of a fleet run (named apart because `KUBECONFIG` is the target clusters\').',
    parse: verbatim,
  }),
  kubeconfig: spec<string | undefined>({
    env: 'KUBECONFIG',
    type: 'paths (`:`-separated; `;` on Windows)',
    default: undefined,
    defaultDoc: '`~/.kube/config`',
    doc: 'The kubeconfig of the clusters the inventory names none for; kplay takes the first path of the list.',
    parse: verbatim,
  }),
  helmDriver: spec<string | undefined>({
    env: 'HELM_DRIVER',
    type: 'driver',
    default: undefined,
    defaultDoc: '`secret`',
    doc: "helm's release storage; kplay reads release records itself from `secret` and `configmap` storage, other drivers through helm.",
    parse: verbatim,
  }),
  noColor: spec({
    env: 'NO_COLOR',
    type: 'flag',
    default: false,
    defaultDoc: '(unset)',
    flag: '--no-color',
    doc: 'Any non-empty value turns colours off (as do a stdout that is not a terminal and `TERM=dumb`).',
    parse: (raw) => raw !== '',
  }),
  term: spec<string | undefined>({
    env: 'TERM',
    type: 'terminal',
    default: undefined,
    defaultDoc: '(unset)',
    doc: '`dumb` turns colours and the live board off.',
    parse: verbatim,
  }),
  statsFile: spec<string | undefined>({
    env: 'KPLAY_STATS_FILE',
    type: 'file',
    default: undefined,
    defaultDoc: '(none)',
    doc: '(benchmarks, tests) At exit, append request counts per cluster and the schemas compiled at run time to this file.',
    parse: optional,
  }),
  checkResults: spec({
    env: 'KPLAY_CHECK_RESULTS',
    type: 'boolean',
    default: false,
    defaultDoc: '`0`',
    doc: '(module authors, tests) Check what modules return against their declared `result` schema; the test suite sets it.',
    parse: boolean,
  }),
  parseCache: spec({
    env: 'KPLAY_PARSE_CACHE',
    type: 'boolean',
    default: true,
    defaultDoc: '`1`',
    doc: 'Remember parsed `k8s_apply` manifest files of 16 KB or more in `$XDG_CACHE_HOME/kplay/manifests` (default `~/.cache/kplay/manifests`), so a rerun reads them back instead of parsing them again; never a file holding a Secret. `0` turns it off.',
    parse: (raw) => (raw.trim() === '' ? true : boolean(raw)),
  }),
  vaultPasswordFile: spec<string | undefined>({
    env: 'ANSIBLE_VAULT_PASSWORD_FILE',
    type: 'file',
    default: undefined,
    defaultDoc: '(none)',
    flag: '--vault-password-file',
    doc: "Ansible's `vault_password_file`: the vault password (or, when executable, a script printing it) tried after the `--vault-id`s and `--vault-password-file`s, under the default vault id. See [Vault](#ansible-vault).",
    parse: optional,
    ansible: { name: 'DEFAULT_VAULT_PASSWORD_FILE', env: 'ANSIBLE_VAULT_PASSWORD_FILE', ini: ['defaults', 'vault_password_file'], parse: onePath },
  }),
  vaultIdentityList: spec<string[]>({
    env: 'ANSIBLE_VAULT_IDENTITY_LIST',
    type: 'list (`,`-separated)',
    default: [],
    defaultDoc: '(none)',
    flag: '--vault-id',
    doc: "Ansible's `vault_identity_list`: vault ids (`label@source`) tried before those of `--vault-id`.",
    parse: (raw) => raw.split(',').map((x) => x.trim()).filter(Boolean),
    ansible: { name: 'DEFAULT_VAULT_IDENTITY_LIST', env: 'ANSIBLE_VAULT_IDENTITY_LIST', ini: ['defaults', 'vault_identity_list'], parse: (raw) => raw.split(',').map((x) => unquote(x.trim())).filter(Boolean) },
  }),
  vaultIdentity: spec({
    env: 'ANSIBLE_VAULT_IDENTITY',
    type: 'label',
    default: 'default',
    doc: "Ansible's `vault_identity`: the vault id of a password given without one (`--vault-password-file`, `--ask-vault-pass`).",
    parse: (raw) => raw || 'default',
    ansible: { name: 'DEFAULT_VAULT_IDENTITY', env: 'ANSIBLE_VAULT_IDENTITY', ini: ['defaults', 'vault_identity'], parse: (raw) => unquote(raw) || 'default' },
  }),
  vaultIdMatch: spec({
    env: 'ANSIBLE_VAULT_ID_MATCH',
    type: 'boolean',
    default: false,
    defaultDoc: '`0`',
    doc: "Ansible's `vault_id_match`: a vault text naming a vault id is decrypted only with that id's password (by default every password is tried, the matching one first).",
    parse: boolean,
    ansible: { name: 'DEFAULT_VAULT_ID_MATCH', env: 'ANSIBLE_VAULT_ID_MATCH', ini: ['defaults', 'vault_id_match'], parse: ansibleBool },
  }),
  askVaultPass: spec({
    env: 'ANSIBLE_ASK_VAULT_PASS',
    type: 'boolean',
    default: false,
    defaultDoc: '`0`',
    flag: '--ask-vault-pass',
    doc: "Ansible's `ask_vault_pass`: ask for the vault password on the terminal, as `--ask-vault-pass`.",
    parse: boolean,
    ansible: { name: 'DEFAULT_ASK_VAULT_PASS', env: 'ANSIBLE_ASK_VAULT_PASS', ini: ['defaults', 'ask_vault_pass'], parse: ansibleBool },
  }),
  debug: spec({
    env: 'KPLAY_DEBUG',
    type: 'boolean',
    default: false,
    defaultDoc: '`0`',
    doc: 'Print the stack trace of unexpected errors.',
    parse: boolean,
  }),
} as const;

/** The name of a setting. */
export type SettingName = keyof typeof SETTINGS;
/** The value type of a setting. */
export type SettingValue<K extends SettingName> = ReturnType<(typeof SETTINGS)[K]['parse']> | (typeof SETTINGS)[K]['default'];

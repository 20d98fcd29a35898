/**
 * The one table of kplay's settings read from the environment: every `KPLAY_*` variable, and the
 * other variables kplay itself interprets (`KUBECONFIG`, `HELM_DRIVER`, `NO_COLOR`, `TERM`,
 * `JOB_COMPLETION_INDEX`). Each entry has its variable, type, default and doc; the README's
 * "Environment variables" section is generated from it (`npm run schemas`).
 *
 * Read a setting with {@link setting}: it parses the variable once per value and throws a
 * {@link SettingError} naming the variable when the value is bad. The CLI calls
 * {@link checkSettings} before any command runs, so a bad value is exit 1 before anything ran.
 */
import os from 'node:os';
import path from 'node:path';

/** Environment variables as a map (`process.env`, or a task's environment merged over it). */
export type Env = Readonly<Record<string, string | undefined>>;

/** A bad value in an environment variable: the message names the variable, the value and what is accepted. */
export class SettingError extends Error {
  override name = 'SettingError';
  constructor(
    /** The environment variable. */
    readonly variable: string,
    message: string,
  ) {
    super(message);
  }
}

/** One setting: where it is read from and how. */
export interface SettingSpec<T> {
  /** The environment variable. */
  env: string;
  /** What the value is, for the docs (e.g. `seconds`, `path`). */
  type: string;
  /** The value when the variable is unset. */
  default: T;
  /** The default as the docs show it (when not `String(default)`). */
  defaultDoc?: string;
  /** The command-line flag of the same meaning, which wins over the variable. */
  flag?: string;
  /** What it does. */
  doc: string;
  /** The value from the variable's text; throws an Error saying what is accepted. */
  parse: (raw: string) => T;
}

const spec = <T>(s: SettingSpec<T>): SettingSpec<T> => s;

/** The text as it is (an empty value kept). */
const verbatim = (raw: string): string => raw;
/** The text, or `undefined` when empty. */
const optional = (raw: string): string | undefined => (raw === '' ? undefined : raw);

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['', '0', 'false', 'no', 'off']);
/** `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off` (any case); empty is false. */
function boolean(raw: string): boolean {
  const v = raw.trim().toLowerCase();
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new Error('use 1 or 0 (also true/false, yes/no, on/off)');
}

/** A number of at least `min` (`above`: strictly more), `integer` or not; empty gives `fallback`. */
function number(fallback: number, o: { min: number; above?: boolean; integer?: boolean }): (raw: string) => number {
  return (raw) => {
    if (raw.trim() === '') return fallback;
    const v = Number(raw);
    const kind = o.integer ? 'a whole number' : 'a number';
    const bound = o.above ? `more than ${o.min}` : `at least ${o.min}`;
    if (!Number.isFinite(v) || (o.integer && !Number.isInteger(v)) || (o.above ? v <= o.min : v < o.min)) throw new Error(`use ${kind} ${bound}`);
    return v;
  };
}

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
    doc: 'How long kplay rides out an apiserver that answered before and went away, before the cluster is unreachable (exit 4).',
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
    defaultDoc: '(none)',
    doc: 'More directories roles are looked for in (after the ones next to the playbook and the role).',
    parse: (raw) => raw.split(path.delimiter).filter(Boolean),
  }),
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
  }),
  vaultIdentityList: spec<string[]>({
    env: 'ANSIBLE_VAULT_IDENTITY_LIST',
    type: 'list (`,`-separated)',
    default: [],
    defaultDoc: '(none)',
    flag: '--vault-id',
    doc: "Ansible's `vault_identity_list`: vault ids (`label@source`) tried before those of `--vault-id`.",
    parse: (raw) => raw.split(',').map((x) => x.trim()).filter(Boolean),
  }),
  vaultIdentity: spec({
    env: 'ANSIBLE_VAULT_IDENTITY',
    type: 'label',
    default: 'default',
    doc: "Ansible's `vault_identity`: the vault id of a password given without one (`--vault-password-file`, `--ask-vault-pass`).",
    parse: (raw) => raw || 'default',
  }),
  vaultIdMatch: spec({
    env: 'ANSIBLE_VAULT_ID_MATCH',
    type: 'boolean',
    default: false,
    defaultDoc: '`0`',
    doc: "Ansible's `vault_id_match`: a vault text naming a vault id is decrypted only with that id's password (by default every password is tried, the matching one first).",
    parse: boolean,
  }),
  askVaultPass: spec({
    env: 'ANSIBLE_ASK_VAULT_PASS',
    type: 'boolean',
    default: false,
    defaultDoc: '`0`',
    flag: '--ask-vault-pass',
    doc: "Ansible's `ask_vault_pass`: ask for the vault password on the terminal, as `--ask-vault-pass`.",
    parse: boolean,
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

const parsed = new Map<string, unknown>();

/**
 * The value of a setting from `env` (default `process.env`): its default when the variable is
 * unset, else the variable parsed (once per distinct value).
 * @throws SettingError naming the variable when its value is not accepted.
 * @example const dir = setting('recordDir'); // $KPLAY_RECORD_DIR or '.kplay/runs'
 */
export function setting<K extends SettingName>(name: K, env: Env = process.env): SettingValue<K> {
  const s: SettingSpec<SettingValue<K>> = SETTINGS[name];
  const raw = env[s.env];
  if (raw === undefined) return s.default;
  const key = `${name}\0${raw}`;
  if (parsed.has(key)) return parsed.get(key) as SettingValue<K>;
  let value: SettingValue<K>;
  try {
    value = s.parse(raw);
  } catch (e) {
    const accepted = e instanceof Error ? e.message : String(e);
    throw new SettingError(s.env, `environment variable ${s.env}='${raw}' is not valid: ${accepted}`);
  }
  parsed.set(key, value);
  return value;
}

/**
 * Parse every setting of `env` (default `process.env`) once; the CLI calls it before a command
 * runs, so a bad value stops kplay before anything ran.
 * @throws SettingError naming the first variable whose value is not accepted.
 */
export function checkSettings(env: Env = process.env): void {
  for (const name of Object.keys(SETTINGS) as SettingName[]) setting(name, env);
}

/**
 * kplay's directory for caches and locks: `$XDG_CACHE_HOME/kplay` (default `~/.cache/kplay`).
 * @example kplayCacheDir() // '/home/ops/.cache/kplay'
 */
export function kplayCacheDir(env: Env = process.env): string {
  return path.join(env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), '.cache'), 'kplay');
}

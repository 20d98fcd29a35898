/**
 * The module SDK: everything a task module (built-in or community) needs.
 *
 * A module is one file that default-exports `defineModule({...})`. Copy any file in
 * `modules/` to start a new one.
 */

import type { Args, Static, TObject, TSchema } from './args.js';
import { writtenNote, type WrittenEntry } from './results.js';
import type { Delimiters } from './delimiters.js';

/** A JSON Schema object (draft-07 subset accepted by ajv in strict mode). */
export type JsonSchema = { [key: string]: unknown };

/** A per-object (or per-thing) change, rendered by the reporter as a unified diff. */
export interface DiffEntry {
  /** What changed, e.g. `Deployment default/web` or `haproxy be_app/srv1`. */
  label: string;
  /** Text before the change (`''` when the thing did not exist). Secrets must already be masked. */
  before: string;
  /** Text after the change (`''` when the thing is deleted). Secrets must already be masked. */
  after: string;
  /**
   * The diff as an ansible.builtin module returns it (`before`/`after` text or maps, the headers it
   * sets), for `-o ansible`'s rendering of it as ansible-core's callback; absent for kplay's own modules.
   */
  ansible?: { before: string | Record<string, unknown>; after: string | Record<string, unknown>; before_header?: string; after_header?: string };
}

/** Data a module returns; becomes the registered variable (plus `changed`, `failed`, `msg`). */
export type ResultData = { [key: string]: unknown };

/**
 * The outcome of one module run: a discriminated union on `status`. `D` is the shape of `data` on
 * success, declared by the module's `result` schema.
 */
export type ModuleResult<D extends ResultData = ResultData> =
  /** `registerDiff: false`: the diff is shown (`--diff`) but not registered (kubernetes.core registers none for a create or a delete). `registerMsg: false`: the message is shown but not registered. */
  | { status: 'ok'; msg?: string; data?: D; diff?: DiffEntry[]; registerDiff?: boolean; facts?: ResultData; registerMsg?: boolean }
  | { status: 'changed'; msg?: string; data?: D; diff?: DiffEntry[]; registerDiff?: boolean; facts?: ResultData; registerMsg?: boolean }
  /** `changed: true`: the failed attempt changed something anyway (a command that ran and exited non-zero), as Ansible reports it. */
  | { status: 'failed'; msg: string; cause?: string; data?: ResultData; diff?: DiffEntry[]; changed?: boolean; registerMsg?: boolean }
  | { status: 'skipped'; msg?: string; data?: ResultData };

/**
 * `registerMsg: false` (ok/changed): `msg` is kplay's summary for the output only; `register`
 * does not store it (an Ansible module whose successful result has no `msg`, such as
 * kubernetes.core's helm modules, so `'msg' in result` holds as under Ansible).
 */

/** Statuses a module can return. */
export type ModuleStatus = ModuleResult['status'];

/**
 * `facts` (on ok/changed) are stored as cluster variables for the rest of the run, at
 * `set_fact` precedence (that is how `set_fact` works).
 */

/** A cluster of the inventory, as a task sees it. */
export interface ClusterRef {
  /** Inventory name of the cluster. */
  name: string;
  /** kubeconfig context. @default the cluster name */
  context: string;
  /** Absolute path of the kubeconfig file, if any is set or found. */
  kubeconfig?: string;
}

/**
 * An adapter (see `ModuleContext.adapter`) that holds something only for the run — temporary
 * files, say: the run calls `endOfRun` once it is over, also when it failed or was interrupted.
 */
export interface RunScopedAdapter {
  /** Release what the adapter holds; called once, after the run's last task and background job. */
  endOfRun(): Promise<void>;
}

/** Logger handed to modules: every line is masked for secrets before it is written. */
export interface ModuleLogger {
  /** Shown with `-v`. */
  info(msg: string): void;
  /** Shown with `-vv`. */
  debug(msg: string): void;
  /** Always shown. */
  warn(msg: string): void;
  /** Live progress on a TTY (a single updating line); ignored elsewhere. */
  progress(msg: string): void;
}

/**
 * Adapters a module can ask for. Later issues add more (`k8s`, `helm`); they are typed as
 * `unknown` here and narrowed by the adapter's own module, so the SDK has no hard dependency.
 */
export interface ModuleAdapters {
  [name: string]: unknown;
}

/** What `run(args, ctx)` receives besides its arguments. */
export interface ModuleContext {
  /** The cluster this task runs for. */
  cluster: ClusterRef;
  /** All variables visible to the task (already merged by precedence). Read-only. */
  vars: Readonly<Record<string, unknown>>;
  /** True in `--check` mode (or task `check_mode: true`): change nothing, report what would change. */
  checkMode: boolean;
  /** True with `--diff` (or the task's `diff: true`): include `diff` entries in results. */
  diffMode: boolean;
  /**
   * The task's `environment:` (play, block and task keywords merged, rendered; `{}` when none):
   * set it on the processes the module starts (`{ ...process.env, ...ctx.environment }`) and read
   * connection settings from it (`K8S_AUTH_KUBECONFIG`, `K8S_AUTH_CONTEXT`, …) as Ansible's modules do.
   */
  environment: Readonly<Record<string, string>>;
  /** Aborted on Ctrl-C / SIGTERM or task `timeout`. Long operations must stop on it. */
  signal: AbortSignal;
  /** Masking logger. */
  log: ModuleLogger;
  /** Directory of the playbook (or task file) that holds the task; resolve relative paths against it. */
  baseDir: string;
  /**
   * Resolve a relative path the way ansible-core's actions look for `src`/`template` files
   * (`path_dwim_relative_stack`): for each directory of the task's `ansible_search_path` (its role
   * and the roles that brought it in, the task file's directory, the playbook directory),
   * `<dir>/<kind>/<rel>` then `<dir>/<rel>`. Returns the first that exists (the last candidate
   * when none does, so the error names a real place). Absolute paths are returned as they are.
   * @example ctx.findFile('web.yaml', 'files')
   */
  findFile(rel: string, kind: 'files' | 'templates' | 'vars'): string;
  /**
   * Render a template string (Jinja, as Ansible) with the task's variables (strict: undefined
   * variables fail). `options.delimiters`: other delimiters than Jinja's (a template file's options).
   */
  render(template: string, extraVars?: Record<string, unknown>, options?: { delimiters?: Readonly<Delimiters> }): Promise<string>;
  /** Evaluate a condition (`a == 1 and not b`) with the task's variables (+ extra vars). */
  evalCondition(condition: string, extraVars?: Record<string, unknown>): Promise<boolean>;
  /** Evaluate an expression (`a.b | default(1)`) to its native value. */
  evaluate(expression: string, extraVars?: Record<string, unknown>): Promise<unknown>;
  /**
   * Register a value that must never appear in any output (masked as `********`). `declared`:
   * the value is a secret by its source (a `!secret` scalar), not only by the name it is stored
   * under — a value derived from it is then refused where it cannot be masked (object names, …).
   */
  addSecret(value: string, declared?: boolean): void;
  /** Mask every registered secret in a string. */
  mask(text: string): string;
  /** Lazily created per-cluster adapters (Kubernetes client, helm); see `src/k8s`, `src/helm`. */
  adapter<T>(name: string, create: () => Promise<T>): Promise<T>;
  /**
   * When the batch this task runs in started: with `serial`, the start of the current batch of
   * clusters, else the start of the play. A module can look at what happened since (the `analysis`
   * gate counts Warning events and restarts from then). Absent outside a play (unit tests).
   */
  batchStarted?: Date;
  /**
   * The run's in-memory inventory, for `add_host` and `group_by` (absent outside a play): each
   * call changes it for the plays that follow, as ansible-core's, and says whether it changed.
   */
  inventory?: RunInventory;
}

/** The run's in-memory inventory as a module may change it (see {@link ModuleContext.inventory}). */
export interface RunInventory {
  /** `add_host`: the host (made when missing) gets `vars` (merged) and joins `groups` (made when missing). */
  addHost(host: { name: string; groups: string[]; vars: Record<string, unknown> }): Promise<boolean>;
  /** `group_by`: the task's cluster joins the group `key` (made when missing, under each of `parents`). */
  addGroup(key: string, parents: string[]): Promise<boolean>;
}

/** One documented example of a module, shown by `kplay modules NAME` and in the README. */
export interface ModuleExample {
  /** One line saying what the example does. */
  title: string;
  /** A task in YAML, exactly as it would appear in a playbook. */
  yaml: string;
}

/**
 * Everything that defines a module. `S` is the TypeBox schema of its arguments (declared once:
 * type, validation, defaults and docs all come from it), `R` the schema of the `data` it returns.
 */
export interface ModuleDefinition<S extends TSchema = TSchema, R extends TObject = TObject> {
  /** The task key, e.g. `k8s_apply`. Lowercase letters, digits and `_`. */
  name: string;
  /** One line shown by `kplay modules`. */
  summary: string;
  /** Longer Markdown description (optional). */
  description?: string;
  /**
   * Schema of the arguments (after templating), built with `Type` from `kplay/sdk`. Must be an
   * object schema with `additionalProperties: false` and a `description` on every property (shown
   * as docs). Defaults (`Default(...)`) are filled in by the validator before `run` is called.
   * @example Type.Object({ msg: Type.String({ description: 'What to print.' }) }, { additionalProperties: false })
   */
  schema: S;
  /**
   * Schema of the `data` a successful run returns (what `register` stores besides `changed`,
   * `failed`, `msg`, `diff`), with a `description` on every property: documented in the reference,
   * and checked against what `run` returns when `KPLAY_CHECK_RESULTS=1` (the test suite sets it).
   */
  result: R;
  /**
   * When the arguments are a plain value instead of a map (e.g. `command: ls -l`, `debug: msg`),
   * the property this value goes to.
   */
  freeForm?: string;
  /**
   * Other names of arguments, alias → argument, as the module's Ansible `argument_spec` declares
   * them (`assert`'s `msg` is `fail_msg`): an alias given is renamed before the arguments are
   * checked (the alias wins over the argument when both are given, as in Ansible).
   * @example aliases: { msg: 'fail_msg' }
   */
  aliases?: Readonly<Record<string, string>>;
  /**
   * Every argument key is a variable name (`set_fact`): keys may be templated (rendered when the
   * task runs, as ansible-core's set_fact does) and are checked as ansible-core checks variable
   * names; free-form `key=value` pairs take any key. @default false
   */
  variableKeys?: boolean;
  /** The free form `key=value …` takes any key, as arguments beyond the schema's (`add_host`'s host vars). @default false */
  anyKeys?: boolean;
  /**
   * Ansible's BYPASS_HOST_LOOP (`add_host`): the task runs once, on the first cluster of the batch,
   * and only that cluster gets its result (unlike `run_once`, nothing is copied to the others); a
   * failure not ignored stops the others too. @default false
   */
  bypassHostLoop?: boolean;
  /** Whether the module can report what it would change without changing it. */
  checkMode: 'supported' | 'unsupported';
  /** Whether the module returns `diff` entries with `--diff` (shown as unified diffs). */
  diffMode: 'supported' | 'unsupported';
  /** True when the module talks to the task's cluster (connections are lazy). @default false */
  usesCluster?: boolean;
  /**
   * True when the module never changes anything (e.g. `wait_for`, `k8s_info`): no cluster lock
   * is taken for it. @default false
   */
  readOnly?: boolean;
  /**
   * True when the module declares state (running it again changes nothing, and it takes back
   * drift): `kplay drift --repair` runs such tasks for real and every other task in check mode.
   * @default false
   */
  declaresState?: boolean;
  /** Documented examples. */
  examples: ModuleExample[];
  /**
   * Do the work. `args` are validated, coerced and have their defaults filled in. Never throws for
   * expected failures: return `{status: 'failed', msg}`.
   */
  run(args: Args<S>, ctx: ModuleContext): Promise<ModuleResult<Static<R>>>;
}

/** A module with erased argument and result types, as the registry stores it. */
export interface AnyModule extends Omit<ModuleDefinition, 'run' | 'schema' | 'result'> {
  schema: JsonSchema;
  result: JsonSchema;
  run(args: never, ctx: ModuleContext): Promise<ModuleResult>;
}

/**
 * Define a module. Identity at run time; infers `args` and the result data from the schemas.
 * @example
 * export default defineModule({
 *   name: 'hello', summary: 'Say hello', checkMode: 'supported', diffMode: 'unsupported',
 *   schema: Type.Object({ who: Default(Type.String({ description: 'Whom to greet.' }), 'world') }, { additionalProperties: false }),
 *   result: Type.Object({ greeting: Type.String({ description: 'What was said.' }) }),
 *   examples: [{ title: 'Greet', yaml: '- hello:\n    who: ops' }],
 *   async run(args) { return { status: 'ok', msg: `hello ${args.who}`, data: { greeting: `hello ${args.who}` } }; },
 * });
 */
export function defineModule<S extends TSchema, R extends TObject>(def: ModuleDefinition<S, R>): ModuleDefinition<S, R> {
  return def;
}

/** Thrown (only) when a cluster cannot be reached: the executor marks it unreachable (exit 4). */
export class UnreachableError extends Error {
  override name = 'UnreachableError';
  /** What the task had written to the cluster before it became unreachable: changes all the same (see `WrittenResult`). */
  written?: readonly WrittenEntry[];
}

/**
 * `e` (a cluster became unreachable) as the {@link UnreachableError} of a task that had `written`
 * these objects before: its message names them, its `written` holds them. `e` itself when none.
 */
export function unreachableAfter(e: Error, written: readonly WrittenEntry[]): Error {
  if (!written.length) return e;
  const out = new UnreachableError(`${e.message}${writtenNote(written)}`, { cause: e });
  out.written = [...written];
  return out;
}

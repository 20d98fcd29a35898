/**
 * The loaded, normalised playbook: plays and task trees, each node remembering where it
 * came from (`pos`) so every error can point at `file:line:col`.
 */
import type { SourcePos } from '../load/errors.js';
import type { PlayKeywordValues, TaskKeywordValues } from './syntax.js';

/** A keyword's value as declared in `syntax.ts` (given, not null). */
type Declared<K extends keyof TaskKeywordValues> = NonNullable<TaskKeywordValues[K]>;

/**
 * One use of a role (from a play's `roles:`, `import_role`, `include_role`, or a role's
 * `dependencies`): where it lives and the variables it brings. Variables are layered as in
 * Ansible (see src/vars/precedence.ts and src/playbook/roles.ts).
 */
export interface RoleUse {
  /** Role name as written (`web`, `kplay-role-web`, `./roles/web`). */
  name: string;
  /** Absolute directory of the role. */
  dir: string;
  /** `defaults/<defaults_from|main>.yml`: lowest precedence. */
  defaults: Record<string, unknown>;
  /** `vars/<vars_from|main>.yml`: role vars (above play vars_files). */
  vars: Record<string, unknown>;
  /** `vars:` of the role entry / `import_role` / `include_role` task (role vars of this use). */
  useVars: Record<string, unknown>;
  /** Inline parameters of a `roles:` entry (`- {role: web, port: 80}`): above facts. */
  params: Record<string, unknown>;
  /** Roles run before this one (`meta` `dependencies`). */
  deps: RoleUse[];
  /** The role whose tasks, or whose dependency list, used this one. */
  parent?: RoleUse;
  /** Exported to the whole play (`roles:` and `import_role`; `include_role` with `public: true`). */
  public: boolean;
}

/** What a block or play passes on to the tasks inside it. */
export interface Inherited {
  checkMode?: boolean | string;
  noLog?: boolean | string;
  diff?: boolean | string;
  ignoreErrors?: unknown;
  ignoreUnreachable?: boolean | string;
  runOnce?: boolean | string;
  timeout?: number;
  anyErrorsFatal?: boolean;
  throttle?: number | string;
  environment: unknown[];
  moduleDefaults: Record<string, unknown>[];
  /** `notify` of a block or `import_tasks` (a task without its own notifies these, as in ansible-core; an `include_tasks`' own is not passed on). */
  notify?: string[];
}

/** Keywords every task-like node (task, block, include) accepts. */
export interface TaskCommon {
  /** Display name. Templated. */
  name?: string;
  /** Liquid condition(s); all must hold. */
  when: unknown[];
  /** Tags of this node, including those inherited from blocks, imports and the play. */
  tags: string[];
  /** Variables of this node (task or block `vars`). */
  vars?: Record<string, unknown>;
  /** Variables of enclosing blocks, outer → inner. */
  blockVars: Record<string, unknown>[];
  /** Force check mode on (`true`) or off (`false`) for this node: a boolean or a template (own or inherited). */
  checkMode?: boolean | string;
  ignoreErrors?: unknown;
  /** Continue when the cluster cannot be reached (counted ok and ignored): a boolean or a template (own or inherited). */
  ignoreUnreachable?: boolean | string;
  /** Hide results: a boolean or a template (own or inherited from a block or the play). */
  noLog?: boolean | string;
  /** `run_once`: a boolean or a template (rendered with the first cluster's variables when the task starts, as ansible-core's linear strategy). */
  runOnce?: boolean | string;
  /** Seconds. */
  timeout?: number;
  /** Force diff mode on or off (`diff:` keyword): a boolean or a template. */
  diff?: boolean | string;
  /** `environment:` specs, outer (play) → inner (task): maps or templates giving maps; later keys win. */
  environment: unknown[];
  /** `module_defaults:` maps, outer (play) → inner (task); keys are registry names or `group/<name>`. */
  moduleDefaults: Record<string, unknown>[];
  /** The node's `notify`, else the one its static parents (blocks, `import_tasks`) give (see {@link Inherited.notify}). */
  inheritedNotify?: string[];
  /** `any_errors_fatal` on a task or block: a failure here stops the run. */
  anyErrorsFatal?: boolean;
  /** At most this many clusters run the task at once (`throttle:`; a number or a template). */
  throttle?: Declared<'throttle'>;
  /** A templated `delegate_to`, rendered when the task runs: the controller or the cluster itself runs it, another host fails the task. */
  delegateTo?: string;
  /** Directory relative paths are resolved against (the file that holds the node). */
  baseDir: string;
  /** The role this node belongs to (its variables apply; relative paths search the role). */
  role?: RoleUse;
  pos: SourcePos;
}

/** `loop_control`. */
export interface LoopControl {
  loopVar: string;
  label?: string;
  indexVar?: string;
  pause?: number;
  /** `extended: true`: `ansible_loop` (index, first, last, previtem, …) is set per item. */
  extended?: boolean;
  /** `extended_allitems: false`: `ansible_loop.allitems` is left out. */
  noAllitems?: boolean;
  /** `break_when`: conditions evaluated after each item (the item's result under the `register` name); when they hold, the loop stops. */
  breakWhen?: unknown[];
}

/** A task that runs one module. */
export interface ModuleTask extends TaskCommon {
  kind: 'task';
  module: string;
  /** Raw (untemplated) arguments, normalised to a map or a template string. */
  args: unknown;
  /** An error in the arguments ansible-core raises only when the task runs (a malformed template): the task fails with it then. */
  deferredError?: string;
  /**
   * `action: "{{ name }}"`: {@link module} is the template of the module's name and {@link args} the
   * arguments as written (`extra`: the task's `args:`); both are resolved when the task runs.
   */
  templatedAction?: { extra?: Record<string, unknown> };
  /** The items: a list or a template (`loop:`), or the terms of `with_<lookup>:` (see {@link loopLookup}). */
  loop?: unknown;
  /** `with_<lookup>: terms`: the items are `query('<lookup>', *terms)`, as in Ansible. */
  loopLookup?: string;
  loopControl: LoopControl;
  register?: Declared<'register'>;
  until?: unknown;
  /** Attempts after the first (a number or a template); with `until` the default is 3, without it a failed result is retried. */
  retries?: Declared<'retries'>;
  /** Seconds between attempts (a number or a template). */
  delay?: Declared<'delay'>;
  /** Seconds bounding the task as an asynchronous job (Ansible's `async`), a number or a template. */
  async?: Declared<'async'>;
  /** With `async`: `0` returns at once (read the job with `async_status`), above 0 waits. */
  poll?: Declared<'poll'>;
  failedWhen?: unknown;
  changedWhen?: unknown;
  notify: string[];
  /** Handler topics (handlers only). */
  listen: string[];
}

/** `block` / `rescue` / `always`. */
export interface BlockNode extends TaskCommon {
  kind: 'block';
  block: TaskNode[];
  rescue: TaskNode[];
  always: TaskNode[];
}

/** `include_tasks: file` — resolved per cluster at run time (the file name may be templated). */
export interface IncludeNode extends TaskCommon {
  kind: 'include';
  file: string;
  /** The file names of the includes/imports this one is inside, innermost first, up to its role (see {@link IncludeSite.parents}). */
  parents: readonly string[];
  /** In a role's `handlers/`: the file is looked for in `handlers/` instead of `tasks/`. */
  handler: boolean;
  /** `register:` the include's result (`{changed: false, include: <file>, include_args: {}}`, as ansible-core registers it). */
  register?: string;
  /** What the include's parents pass on: the included tasks inherit that, not the include's own keywords (as in Ansible). */
  parentInherit: Inherited;
  loop?: unknown;
  loopLookup?: string;
  loopControl: LoopControl;
}

/** `meta: flush_handlers | end_play | end_batch | end_cluster | noop | clear_facts | clear_host_errors`. */
export interface MetaNode extends TaskCommon {
  kind: 'meta';
  action: 'flush_handlers' | 'end_play' | 'end_batch' | 'end_cluster' | 'noop' | 'clear_facts' | 'clear_host_errors';
}

/** `include_role:` — loaded and run per cluster at run time (the name may be templated). */
export interface IncludeRoleNode extends TaskCommon {
  kind: 'include_role';
  /** What the include's parents pass on (see {@link IncludeNode.parentInherit}). */
  parentInherit: Inherited;
  /** Role name (may be templated). */
  roleName: string;
  /** `register:` the include's result (`{changed: false, include_args: <the options>}`, as ansible-core registers it). */
  register?: string;
  /** The options as written (what `include_args` registers). */
  includeArgs: Record<string, unknown>;
  /** `tasks_from`, `vars_from`, `defaults_from`, `handlers_from`. */
  from: { tasks?: string; vars?: string; defaults?: string; handlers?: string };
  /** Expose the role's defaults and vars to the rest of the play after it ran. @default false */
  public: boolean;
  allowDuplicates: boolean;
  /** Validate the role's argument spec first (`rolespec_validate`). */
  validate: boolean;
  loop?: unknown;
  loopLookup?: string;
  loopControl: LoopControl;
}

export type TaskNode = ModuleTask | BlockNode | IncludeNode | IncludeRoleNode | MetaNode;

/** `serial` entries: a count or a percentage string like `"30%"`. */
export type SerialSpec = (number | string)[];

/** One play. */
export interface Play {
  name: string;
  hosts: string | string[];
  /** `gather_facts: true`: a `Gathering Facts` task sets the controller's facts first (see src/executor/facts.ts). */
  gatherFacts: boolean;
  /** `order:` of the clusters (`inventory`, `reverse_inventory`, `sorted`, `reverse_sorted`, `shuffle`). */
  order: NonNullable<PlayKeywordValues['order']>;
  /** Keywords accepted for compatibility that change nothing in kplay (said once with -v). */
  noEffect: string[];
  serial?: SerialSpec;
  maxFailPercentage?: number;
  anyErrorsFatal: boolean;
  /** `vars_prompt` entries: asked on a terminal before the play runs (their defaults are already in `vars`). */
  prompts: VarPrompt[];
  /** `force_handlers`: notified handlers run at the end of each section also on clusters that failed in it (as Ansible does). */
  forceHandlers: boolean;
  vars: Record<string, unknown>;
  varsFiles: string[];
  /** The variables of `varsFiles`, loaded and merged in order when the playbook loads. */
  varsFromFiles: Record<string, unknown>;
  tags: string[];
  preTasks: TaskNode[];
  tasks: TaskNode[];
  postTasks: TaskNode[];
  handlers: ModuleTask[];
  /** Roles of `roles:` and `import_role` (and their dependencies), in load order: their defaults and vars are visible to the whole play. */
  publicRoles: RoleUse[];
  baseDir: string;
  pos: SourcePos;
}

/** One `vars_prompt` entry. */
export interface VarPrompt {
  name: string;
  /** The question (`prompt`, else the name). */
  prompt: string;
  /** `private` (default true, as in Ansible): the answer is not echoed. */
  private: boolean;
  /** `default`, given for an empty answer (a template is rendered with the play's variables). */
  default?: unknown;
  /** `confirm`: ask twice; the answers must match. */
  confirm: boolean;
}

/** A loaded playbook (imports flattened). */
export interface Playbook {
  file: string;
  dir: string;
  plays: Play[];
  /** Scalars tagged `!secret` in any loaded file. */
  secrets: string[];
}

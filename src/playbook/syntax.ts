/**
 * The playbook's keywords, declared once (TypeBox): plays, `import_playbook` entries, module
 * tasks, blocks, task-file and role includes, `meta`. Each declaration is at once
 *  - the JSON Schema the loader validates with (`schema.ts`) and the editor schema is built from
 *    (`editor-schema.ts`),
 *  - the static type of the keywords as written ({@link TaskKeywordValues}, {@link PlayKeywordValues}),
 *  - the key sets the task-node parsers accept ({@link BLOCK_KEYS}, {@link INCLUDE_KEYS}, …: the
 *    keys of the declarations).
 */
import { StringEnum, Type, type Static, type TSchema } from '../core/args.js';

/** A map (an object of anything): variables, `args:`. */
const map = (description?: string) => Type.Unsafe<Record<string, unknown>>({ type: 'object', ...(description !== undefined ? { description } : {}) });
const stringOrList = (description?: string) => Type.Union([Type.String(), Type.Array(Type.String())], description !== undefined ? { description } : {});
const condition = () => Type.Union([Type.String(), Type.Boolean(), Type.Array(Type.Union([Type.String(), Type.Boolean()]))], { description: 'Liquid condition(s) without braces, e.g. `env == "prod" and not skip`; a list means all must hold.' });
/** Variables (values may be templated). */
export const VarsMap = map('Variables (values may be templated).');
const templatedInt = (description: string) => Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '\\{\\{' })], { description });
/** A boolean keyword: `true`/`false`, YAML 1.1's `yes`/`no`/`on`/`off` (as Ansible reads them), or a template. */
const boolish = (description: string) => Type.Union([Type.Boolean(), Type.String()], { description });
const mapOrTemplate = (description: string) => Type.Union([map(), Type.String(), Type.Array(Type.Union([map(), Type.String()]))], { description });
const noEffect = (what: string) => Type.Unknown({ description: `${what} Accepted for Ansible compatibility; no effect in kplay (said once with -v).` });
/** A list of tasks (validated task by task in code; the editor schema gives each its own schema). */
const taskList = () => Type.Unsafe<unknown[]>({ type: 'array', items: { $ref: '#/definitions/task' } });

/** Keywords every task-like node (task, block, play) inherits from its parents, with the same meaning. */
export const INHERITED_KEYWORDS = {
  check_mode: Type.Optional(boolish('Force check mode on (true) or off (false); a template is rendered per cluster.')),
  no_log: Type.Optional(boolish('Hide results, messages and diffs from all output; a template is rendered per cluster.')),
  diff: Type.Optional(boolish('Force diff mode on (true) or off (false), as `--diff` does.')),
  ignore_errors: Type.Optional(boolish('Continue when the task fails (counted as ignored); a template is rendered per cluster.')),
  ignore_unreachable: Type.Optional(boolish('Continue when the cluster\'s apiserver cannot be reached (as Ansible: counted ok and ignored, the result registers `unreachable: true`, the cluster stays in the play); a template is rendered per cluster.')),
  environment: Type.Optional(mapOrTemplate('Environment variables (a map, a template giving one, or a list of them; later keys win) for the processes the task starts; modules see them as `ctx.environment` (K8S_AUTH_* included).')),
  module_defaults: Type.Optional(mapOrTemplate('Default arguments per module (`k8s`, `kubernetes.core.k8s`, `ansible.builtin.command`) or action group (`group/kubernetes.core.k8s`, `group/k8s`, `group/kubernetes.core.helm`): the task\'s own arguments win. Values may be templated.')),
  any_errors_fatal: Type.Optional(boolish('A failure of this task stops the whole run, on every cluster.')),
  throttle: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.String()], { description: 'At most this many clusters run the task at once.' })),
  collections: Type.Optional(Type.Union([Type.Array(Type.String()), Type.String()], { description: 'Collections short module names are searched in (Ansible\'s `collections:`): accepted; kplay\'s short names resolve already.' })),
  become: Type.Optional(noEffect('Privilege escalation on the managed host.')),
  become_user: Type.Optional(noEffect('User to become.')),
  become_method: Type.Optional(noEffect('How to become.')),
  become_flags: Type.Optional(noEffect('Flags for become.')),
  become_exe: Type.Optional(noEffect('Program used to become.')),
  connection: Type.Optional(noEffect('Connection plug-in (kplay talks to the Kubernetes API from the controller: `local`).')),
  remote_user: Type.Optional(noEffect('SSH user.')),
  port: Type.Optional(noEffect('SSH port.')),
  timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Seconds before the task is cancelled and fails.' })),
  run_once: Type.Optional(boolish('Run on the first cluster of the batch only; the result applies to all.')),
  delegate_to: Type.Optional(Type.String({ description: '`localhost`/`127.0.0.1` (or the running cluster itself): runs as usual, kplay\'s modules always run on the controller. Another host is refused.' })),
  delegate_facts: Type.Optional(boolish('With `delegate_to: localhost`: accepted (facts stay with the cluster the task runs for).')),
  debugger: Type.Optional(Type.String({ description: 'Ansible\'s task debugger: refused (only `never` is accepted).' })),
};

/** `loop_control`. */
const LoopControl = Type.Object(
  {
    loop_var: Type.Optional(Type.String({ description: 'Name of the item variable. @default item' })),
    label: Type.Optional(Type.String({ description: 'Template shown per item instead of the whole item.' })),
    index_var: Type.Optional(Type.String({ description: 'Variable holding the 0-based item index.' })),
    pause: Type.Optional(Type.Number({ minimum: 0, description: 'Seconds to wait between items.' })),
    extended: Type.Optional(Type.Union([Type.Boolean(), Type.String()], { description: 'Set `ansible_loop` per item (`index`, `index0`, `revindex`, `revindex0`, `first`, `last`, `length`, `allitems`, `previtem`, `nextitem`), as Ansible does.' })),
    extended_allitems: Type.Optional(Type.Union([Type.Boolean(), Type.String()], { description: 'With `extended: true`, whether `ansible_loop.allitems` is set (default true), as Ansible does.' })),
    break_when: Type.Optional(Type.Union([Type.String(), Type.Boolean(), Type.Array(Type.Union([Type.String(), Type.Boolean()]))], { description: 'Condition(s) evaluated after each item (with the item and the registered item result): when they hold, the remaining items are not run (ansible-core 2.18+). Module tasks only.' })),
  },
  { description: 'Loop settings.', additionalProperties: false },
);

/** Keywords of a module task (besides its one module key); other node kinds take a subset. */
export const TaskKeywords = Type.Object({
  name: Type.Optional(Type.String({ description: 'Task name shown in output (templated).' })),
  when: Type.Optional(condition()),
  loop: Type.Optional(Type.Unsafe<unknown[] | string>({ description: 'A list (or a template giving a list): the task runs once per item, as `item`. `with_<lookup>: terms` is the same as `loop: "{{ query(\'<lookup>\', terms) }}"` (with_items flattens one level), as in Ansible.', anyOf: [{ type: 'array' }, { type: 'string' }] })),
  loop_control: Type.Optional(LoopControl),
  register: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'Store the result in this variable (per cluster).' })),
  until: Type.Optional(condition()),
  retries: Type.Optional(templatedInt('Attempts after the first (as ansible-core 2.19): with `until`, retry until it holds (default 3 retries); without `until`, retry while the task fails. On giving up, `attempts` reports the number of retries. `retries: 0` runs once and ignores `until`.')),
  delay: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.String()], { description: 'Seconds between attempts. @default 5' })),
  async: Type.Optional(templatedInt('Run the task as an asynchronous job bounded by this many seconds (Ansible\'s `async`): with `poll` > 0 kplay waits for it (failing with `async task did not complete within the requested time` past the bound); with `poll: 0` the task returns at once (changed, `ansible_job_id`, `started`, `finished: false`) and `async_status: {jid: …}` reads the job later. Jobs still running when the run ends are awaited (within their bound).')),
  poll: Type.Optional(templatedInt('With `async`: seconds between checks (`0`: fire and forget, read it later with `async_status`). kplay is told when the job ends, so any value above 0 just means wait. @default 15')),
  failed_when: Type.Optional(condition()),
  changed_when: Type.Optional(condition()),
  notify: Type.Optional(stringOrList('Handler names (or `listen` topics) to notify when the task changed something.')),
  tags: Type.Optional(stringOrList('Tags for `--tags` / `--skip-tags`. `always` and `never` are special.')),
  vars: Type.Optional(VarsMap),
  args: Type.Optional(map('Module arguments given apart (Ansible\'s `args:`); the arguments under the module key win.')),
  listen: Type.Optional(stringOrList('Handlers only: topics this handler also answers to.')),
  ...INHERITED_KEYWORDS,
});

/** The task keywords as written (after the keyword check): a keyword given with no value is `null`. */
export type TaskKeywordValues = { [K in keyof Static<typeof TaskKeywords>]?: Static<typeof TaskKeywords>[K] | null };

/** The schema of each task keyword, by name. */
export const TASK_KEYWORDS: Record<string, TSchema> = TaskKeywords.properties;

const pick = <K extends keyof typeof TaskKeywords.properties>(keys: readonly K[]): Pick<typeof TaskKeywords.properties, K> =>
  Object.fromEntries(keys.map((k) => [k, TaskKeywords.properties[k]])) as Pick<typeof TaskKeywords.properties, K>;

/** A block: `block` with `rescue` and `always`, and the keywords it passes on to its tasks. */
export const BlockKeywords = Type.Object({
  ...pick(['name', 'when', 'tags', 'vars', 'notify']),
  ...INHERITED_KEYWORDS,
  block: taskList(),
  rescue: Type.Optional(taskList()),
  always: Type.Optional(taskList()),
});

/** `include_tasks` / `import_tasks` (one of the two). */
export const IncludeKeywords = Type.Object({
  ...pick(['name', 'when', 'tags', 'vars', 'loop', 'loop_control', 'register', 'notify']),
  include_tasks: Type.Optional(Type.String({ description: 'Task file to include at run time (may be templated).' })),
  import_tasks: Type.Optional(Type.String({ description: 'Task file to import when the playbook loads.' })),
  ...pick(['args']),
  ...INHERITED_KEYWORDS,
});

/** The options of `include_role` / `import_role`. */
export const RoleOptions = Type.Object(
  {
    name: Type.Optional(Type.String({ description: 'Role name or path (required, or its other name `role`).' })),
    role: Type.Optional(Type.String({ description: 'Another name of `name` (ansible-core\'s).' })),
    tasks_from: Type.Optional(Type.String({ description: 'Task file of the role to run instead of tasks/main.yml.' })),
    vars_from: Type.Optional(Type.String({ description: 'Vars file instead of vars/main.yml.' })),
    defaults_from: Type.Optional(Type.String({ description: 'Defaults file instead of defaults/main.yml.' })),
    handlers_from: Type.Optional(Type.String({ description: 'Handlers file instead of handlers/main.yml.' })),
    public: Type.Optional(Type.Boolean({ description: 'Expose the role\'s defaults and vars to the rest of the play (default: true for import_role, false for include_role).' })),
    allow_duplicates: Type.Optional(Type.Boolean({ description: 'Run the role even if it already ran with the same parameters.' })),
    rolespec_validate: Type.Optional(Type.Boolean({ description: 'Accepted for Ansible compatibility; the argument spec is always validated.' })),
    apply: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: 'object', description: 'Accepted for Ansible compatibility (keywords applied to the role\'s tasks): not supported yet, refused when given.' })),
  },
  { additionalProperties: false },
);

/** The options of a role task, or Ansible's free form of them (`name=web tasks_from=setup.yml`). */
function roleOptionsOrFreeForm() {
  return Type.Union([RoleOptions, Type.String({ description: 'The options as `key=value` pairs (Ansible\'s free form): `name=web tasks_from=setup.yml`.' })]);
}

/** `include_role` / `import_role` (one of the two). */
export const RoleTaskKeywords = Type.Object({
  ...pick(['name', 'when', 'tags', 'vars', 'loop', 'loop_control', 'register']),
  include_role: Type.Optional(roleOptionsOrFreeForm()),
  import_role: Type.Optional(roleOptionsOrFreeForm()),
  ...INHERITED_KEYWORDS,
});

/** The actions of `meta:` (`end_host` is Ansible's name for kplay's `end_cluster`). */
const META_ACTION_LIST = ['flush_handlers', 'end_play', 'end_batch', 'end_cluster', 'end_host', 'noop', 'clear_facts', 'clear_host_errors'] as const;
/** The schema of `meta:`'s value. */
export const MetaAction = StringEnum(META_ACTION_LIST);

/** `meta: <action>`. */
export const MetaKeywords = Type.Object({
  ...pick(['name', 'when', 'tags']),
  meta: MetaAction,
  ...INHERITED_KEYWORDS,
});

const { delegate_to: _d, delegate_facts: _f, ...PLAY_INHERITED } = INHERITED_KEYWORDS;
const serialEntry = () => [Type.Integer({ minimum: 1 }), Type.String({ pattern: '^\\d+%?$' })] as const;

/** One play. */
export const PlayKeywords = Type.Object(
  {
    name: Type.Optional(Type.String({ description: 'Play name.' })),
    hosts: stringOrList('Host pattern: clusters or groups, `all`, globs, `a:b`, `a:&b`, `a:!b`.'),
    serial: Type.Optional(Type.Union([...serialEntry(), Type.Array(Type.Union([...serialEntry()]), { minItems: 1 })], { description: 'Batch size(s) across clusters: a number, a percentage (`"30%"`) or a list of them (the last repeats).' })),
    max_fail_percentage: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Abort the run when more than this percentage of a batch failed.' })),
    ...PLAY_INHERITED,
    any_errors_fatal: Type.Optional(boolish('Abort the run at the first failure on any cluster.')),
    gather_facts: Type.Optional(boolish('Run a `Gathering Facts` task first that sets facts about the controller (kplay runs every task there): `ansible_date_time`, `ansible_env`, `ansible_hostname`, … (see the README). Not set: no facts are gathered (as with ANSIBLE_GATHERING=explicit).')),
    gather_subset: Type.Optional(noEffect('Which facts to gather.')),
    gather_timeout: Type.Optional(noEffect('Timeout for gathering facts.')),
    fact_path: Type.Optional(noEffect('Directory of local facts.')),
    strategy: Type.Optional(Type.Union([StringEnum(['linear', 'free', 'host_pinned', 'debug']), Type.String({ pattern: '\\{\\{' })], { description: '`linear` (kplay\'s way). `debug` is refused (no task debugger). `free` and `host_pinned` are accepted and run as `linear`: every cluster finishes a task before the next starts (results are the same; only the order of the output differs). A template (`strategy: "{{ s }}"`) is accepted the same way.' })),
    order: Type.Optional(Type.Union([StringEnum(['inventory', 'reverse_inventory', 'sorted', 'reverse_sorted', 'shuffle']), Type.String({ pattern: '\\{\\{' })], { description: 'Order in which the clusters run. A template (`order: "{{ o | default(\'inventory\') }}"`) is rendered with the play\'s vars, vars_files and -e when the playbook loads, as ansible-core renders it before the play. @default inventory' })),
    force_handlers: Type.Optional(boolish('Run the handlers notified on a cluster also when a later task of the same section (pre_tasks, tasks, post_tasks) failed there, before the cluster leaves the play (as Ansible does).')),
    vars_prompt: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ description: 'Variable name.' }),
            prompt: Type.Optional(Type.String({ description: 'Question (not asked by kplay).' })),
            default: Type.Optional(Type.Unknown({ description: 'Value used (templated).' })),
            private: Type.Optional(Type.Unknown({ description: 'Accepted (nothing is typed).' })),
            confirm: Type.Optional(Type.Unknown({ description: 'Accepted (nothing is typed).' })),
            encrypt: Type.Optional(Type.Unknown({ description: 'Accepted; the value is not hashed.' })),
            salt_size: Type.Optional(Type.Unknown({ description: 'Accepted.' })),
            unsafe: Type.Optional(Type.Unknown({ description: 'Accepted.' })),
          },
          { additionalProperties: false },
        ),
        { description: 'Variables asked before the play, as ansible-playbook asks them: on a terminal each variable not given with `-e` is asked (`private` answers are not echoed and are masked; an empty answer takes `default`; `confirm` asks twice); without a terminal (or with `--output json`) `default` is used, else the empty string.' },
      ),
    ),
    vars: Type.Optional(VarsMap),
    vars_files: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Array(Type.String())]), { description: 'YAML files of variables, relative to the playbook; an entry that is a list reads the first of its files found. Entries may be templated (play vars, the files read before, `-e`); a file that is not there, or an entry with an undefined variable (with a warning), is skipped, as ansible-playbook 2.19 does.' })),
    tags: Type.Optional(stringOrList('Tags inherited by every task of the play.')),
    pre_tasks: Type.Optional(taskList()),
    roles: Type.Optional(
      Type.Array(
        Type.Union([
          Type.String(),
          Type.Object(
            {
              role: Type.Optional(Type.String({ description: 'Role name (roles/<name> next to the playbook, $KPLAY_ROLES_PATH, or an npm package kplay-role-<name>) or path.' })),
              name: Type.Optional(Type.String({ description: 'Same as `role`.' })),
              vars: Type.Optional(VarsMap),
              when: Type.Optional(condition()),
              tags: Type.Optional(stringOrList('Tags inherited by every task of the role.')),
              allow_duplicates: Type.Optional(Type.Boolean({ description: 'Run the role again even if it already ran with the same parameters in this play.' })),
            },
            { description: 'Other keys are role parameters (above set_fact in precedence, as in Ansible).' },
          ),
        ]),
        { description: 'Roles run after pre_tasks, before tasks: a role name, or `{role: name, vars: {...}, when, tags, <param>: value}`.' },
      ),
    ),
    tasks: Type.Optional(taskList()),
    post_tasks: Type.Optional(taskList()),
    handlers: Type.Optional(taskList()),
  },
  { additionalProperties: false },
);

/** A play's keywords as written (after the play check). */
export type PlayKeywordValues = Static<typeof PlayKeywords>;

/** `- import_playbook: file`. */
export const ImportPlaybookKeywords = Type.Object(
  { import_playbook: Type.String(), name: Type.Optional(Type.String()), vars: Type.Optional(VarsMap), when: Type.Optional(condition()), tags: Type.Optional(stringOrList()) },
  { additionalProperties: false },
);

/** The same entry by its other names (`ansible.builtin.import_playbook`, `ansible.legacy.import_playbook`), as ansible-core accepts them. */
export const FQCN_IMPORT_PLAYBOOK = ['ansible.builtin.import_playbook', 'ansible.legacy.import_playbook'].map((key) =>
  Type.Object({ ...ImportPlaybookKeywords.properties, import_playbook: Type.Optional(Type.Never()), [key]: Type.String() }, { additionalProperties: false }),
);

/** The keys a declaration accepts, as a set. */
const keysOf = (schema: { properties: object }): ReadonlySet<string> => new Set(Object.keys(schema.properties));

/** Keys of a block (`block`, `rescue`, `always` and the keywords it passes on). */
export const BLOCK_KEYS = keysOf(BlockKeywords);
/** Keys of an `include_tasks` / `import_tasks` task. */
export const INCLUDE_KEYS = keysOf(IncludeKeywords);
/** Keys of an `include_role` / `import_role` task. */
export const ROLE_TASK_KEYS = keysOf(RoleTaskKeywords);
/** Options of `include_role` / `import_role`. */
export const ROLE_OPTIONS = keysOf(RoleOptions);
/** Keys of a `meta` task. */
export const META_KEYS = keysOf(MetaKeywords);
/** The actions `meta:` takes. */
export const META_ACTIONS: ReadonlySet<string> = new Set(META_ACTION_LIST);
/** Keys of a play. */
export const PLAY_KEYS = keysOf(PlayKeywords);
/** Keys of an `import_playbook` entry. */
export const IMPORT_PLAYBOOK_KEYS = keysOf(ImportPlaybookKeywords);
/** Keywords every node inherits. */
export const INHERITED_KEYS = keysOf({ properties: INHERITED_KEYWORDS });

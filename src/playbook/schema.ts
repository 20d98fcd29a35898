/**
 * The playbook JSON Schema the loader validates against: `basePlaybookSchema()` (task module
 * arguments are checked per module, with better messages), one play, one `import_playbook` entry,
 * the task keywords. The editor schema built from it is in `editor-schema.ts`.
 */
import type { JsonSchema } from '../core/module.js';

const stringOrList: JsonSchema = {
  anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
};
const condition: JsonSchema = {
  description: 'Liquid condition(s) without braces, e.g. `env == "prod" and not skip`; a list means all must hold.',
  anyOf: [{ type: 'string' }, { type: 'boolean' }, { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'boolean' }] } }],
};
export const varsMap: JsonSchema = { type: 'object', description: 'Variables (values may be templated).' };
const templatedInt = (description: string): JsonSchema => ({
  description,
  anyOf: [{ type: 'integer', minimum: 0 }, { type: 'string', pattern: '\\{\\{' }],
});

/** A boolean keyword: `true`/`false`, YAML 1.1's `yes`/`no`/`on`/`off` (as Ansible reads them), or a template. */
const boolish = (description: string): JsonSchema => ({ description, anyOf: [{ type: 'boolean' }, { type: 'string' }] });
const mapOrTemplate = (description: string): JsonSchema => ({ description, anyOf: [{ type: 'object' }, { type: 'string' }, { type: 'array', items: { anyOf: [{ type: 'object' }, { type: 'string' }] } }] });
const noEffect = (what: string): JsonSchema => ({ description: `${what} Accepted for Ansible compatibility; no effect in kplay (said once with -v).` });

/** Keywords every task-like node (task, block, play) inherits from its parents, with the same meaning. */
export const INHERITED_KEYWORDS: Record<string, JsonSchema> = {
  check_mode: boolish('Force check mode on (true) or off (false); a template is rendered per cluster.'),
  no_log: boolish('Hide results, messages and diffs from all output; a template is rendered per cluster.'),
  diff: boolish('Force diff mode on (true) or off (false), as `--diff` does.'),
  ignore_errors: boolish('Continue when the task fails (counted as ignored); a template is rendered per cluster.'),
  ignore_unreachable: boolish('Continue when the cluster\'s apiserver cannot be reached (as Ansible: counted ok and ignored, the result registers `unreachable: true`, the cluster stays in the play); a template is rendered per cluster.'),
  environment: mapOrTemplate('Environment variables (a map, a template giving one, or a list of them; later keys win) for the processes the task starts; modules see them as `ctx.environment` (K8S_AUTH_* included).'),
  module_defaults: mapOrTemplate('Default arguments per module (`k8s`, `kubernetes.core.k8s`, `ansible.builtin.command`) or action group (`group/kubernetes.core.k8s`, `group/k8s`, `group/kubernetes.core.helm`): the task\'s own arguments win. Values may be templated.'),
  any_errors_fatal: boolish('A failure of this task stops the whole run, on every cluster.'),
  throttle: { description: 'At most this many clusters run the task at once.', anyOf: [{ type: 'integer', minimum: 0 }, { type: 'string' }] },
  collections: { description: 'Collections short module names are searched in (Ansible\'s `collections:`): accepted; kplay\'s short names resolve already.', anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'string' }] },
  become: noEffect('Privilege escalation on the managed host.'),
  become_user: noEffect('User to become.'),
  become_method: noEffect('How to become.'),
  become_flags: noEffect('Flags for become.'),
  become_exe: noEffect('Program used to become.'),
  connection: noEffect('Connection plug-in (kplay talks to the Kubernetes API from the controller: `local`).'),
  remote_user: noEffect('SSH user.'),
  port: noEffect('SSH port.'),
  timeout: { type: 'number', exclusiveMinimum: 0, description: 'Seconds before the task is cancelled and fails.' },
  run_once: boolish('Run on the first cluster of the batch only; the result applies to all.'),
  delegate_to: { type: 'string', description: '`localhost`/`127.0.0.1` (or the running cluster itself): runs as usual, kplay\'s modules always run on the controller. Another host is refused.' },
  delegate_facts: boolish('With `delegate_to: localhost`: accepted (facts stay with the cluster the task runs for).'),
  debugger: { type: 'string', description: 'Ansible\'s task debugger: refused (only `never` is accepted).' },
};

/** Keywords of a module task (besides its one module key). */
export const TASK_KEYWORDS: Record<string, JsonSchema> = {
  name: { type: 'string', description: 'Task name shown in output (templated).' },
  when: condition,
  loop: { description: 'A list (or a template giving a list): the task runs once per item, as `item`. `with_<lookup>: terms` is the same as `loop: "{{ query(\'<lookup>\', terms) }}"` (with_items flattens one level), as in Ansible.', anyOf: [{ type: 'array' }, { type: 'string' }] },
  loop_control: {
    type: 'object',
    description: 'Loop settings.',
    additionalProperties: false,
    properties: {
      loop_var: { type: 'string', description: 'Name of the item variable. @default item' },
      label: { type: 'string', description: 'Template shown per item instead of the whole item.' },
      index_var: { type: 'string', description: 'Variable holding the 0-based item index.' },
      pause: { type: 'number', minimum: 0, description: 'Seconds to wait between items.' },
      extended: { anyOf: [{ type: 'boolean' }, { type: 'string' }], description: 'Set `ansible_loop` per item (`index`, `index0`, `revindex`, `revindex0`, `first`, `last`, `length`, `allitems`, `previtem`, `nextitem`), as Ansible does.' },
      extended_allitems: { anyOf: [{ type: 'boolean' }, { type: 'string' }], description: 'Accepted for Ansible compatibility (`allitems` is always set).' },
    },
  },
  register: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'Store the result in this variable (per cluster).' },
  until: condition,
  retries: templatedInt('Attempts after the first (as ansible-core 2.19): with `until`, retry until it holds (default 3 retries); without `until`, retry while the task fails. On giving up, `attempts` reports the number of retries. `retries: 0` runs once and ignores `until`.'),
  delay: { description: 'Seconds between attempts. @default 5', anyOf: [{ type: 'number', minimum: 0 }, { type: 'string' }] },
  async: templatedInt('Run the task as an asynchronous job bounded by this many seconds (Ansible\'s `async`): with `poll` > 0 kplay waits for it (failing with `async task did not complete within the requested time` past the bound); with `poll: 0` the task returns at once (changed, `ansible_job_id`, `started`, `finished: false`) and `async_status: {jid: …}` reads the job later. Jobs still running when the run ends are awaited (within their bound).'),
  poll: templatedInt('With `async`: seconds between checks (`0`: fire and forget, read it later with `async_status`). kplay is told when the job ends, so any value above 0 just means wait. @default 15'),
  failed_when: condition,
  changed_when: condition,
  notify: { ...stringOrList, description: 'Handler names (or `listen` topics) to notify when the task changed something.' },
  tags: { ...stringOrList, description: 'Tags for `--tags` / `--skip-tags`. `always` and `never` are special.' },
  vars: varsMap,
  args: { type: 'object', description: 'Module arguments given apart (Ansible\'s `args:`); the arguments under the module key win.' },
  listen: { ...stringOrList, description: 'Handlers only: topics this handler also answers to.' },
  ...INHERITED_KEYWORDS,
};

/** Keywords of a block. */
export const BLOCK_KEYWORDS = ['name', 'when', 'tags', 'vars', ...Object.keys(INHERITED_KEYWORDS)];

function taskListSchema(): JsonSchema {
  return { type: 'array', items: { $ref: '#/definitions/task' } };
}

function playSchema(): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      name: { type: 'string', description: 'Play name.' },
      hosts: { ...stringOrList, description: 'Host pattern: clusters or groups, `all`, globs, `a:b`, `a:&b`, `a:!b`.' },
      serial: {
        description: 'Batch size(s) across clusters: a number, a percentage (`"30%"`) or a list of them (the last repeats).',
        anyOf: [{ type: 'integer', minimum: 1 }, { type: 'string', pattern: '^\\d+%?$' }, { type: 'array', minItems: 1, items: { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'string', pattern: '^\\d+%?$' }] } }],
      },
      max_fail_percentage: { type: 'number', minimum: 0, maximum: 100, description: 'Abort the run when more than this percentage of a batch failed.' },
      ...Object.fromEntries(Object.entries(INHERITED_KEYWORDS).filter(([k]) => k !== 'delegate_to' && k !== 'delegate_facts')),
      any_errors_fatal: boolish('Abort the run at the first failure on any cluster.'),
      gather_facts: boolish('Run a `Gathering Facts` task first that sets facts about the controller (kplay runs every task there): `ansible_date_time`, `ansible_env`, `ansible_hostname`, … (see the README). Not set: no facts are gathered (as with ANSIBLE_GATHERING=explicit).'),
      gather_subset: noEffect('Which facts to gather.'),
      gather_timeout: noEffect('Timeout for gathering facts.'),
      fact_path: noEffect('Directory of local facts.'),
      strategy: { enum: ['linear', 'free', 'host_pinned', 'debug'], description: '`linear` (kplay\'s way). `debug` is refused (no task debugger). `free` and `host_pinned` are accepted and run as `linear`: every cluster finishes a task before the next starts (results are the same; only the order of the output differs).' },
      order: { enum: ['inventory', 'reverse_inventory', 'sorted', 'reverse_sorted', 'shuffle'], description: 'Order in which the clusters run. @default inventory' },
      force_handlers: boolish('Run the handlers notified on a cluster also when a later task of the same section (pre_tasks, tasks, post_tasks) failed there, before the cluster leaves the play (as Ansible does).'),
      vars_prompt: {
        type: 'array',
        description: 'Variables asked before the play, as ansible-playbook asks them: on a terminal each variable not given with `-e` is asked (`private` answers are not echoed and are masked; an empty answer takes `default`; `confirm` asks twice); without a terminal (or with `--output json`) `default` is used, else the empty string.',
        items: {
          type: 'object',
          required: ['name'],
          properties: {
            name: { type: 'string', description: 'Variable name.' },
            prompt: { type: 'string', description: 'Question (not asked by kplay).' },
            default: { description: 'Value used (templated).' },
            private: { description: 'Accepted (nothing is typed).' },
            confirm: { description: 'Accepted (nothing is typed).' },
            encrypt: { description: 'Accepted; the value is not hashed.' },
            salt_size: { description: 'Accepted.' },
            unsafe: { description: 'Accepted.' },
          },
          additionalProperties: false,
        },
      },
      vars: varsMap,
      vars_files: { type: 'array', items: { type: 'string' }, description: 'YAML files of variables, relative to the playbook.' },
      tags: { ...stringOrList, description: 'Tags inherited by every task of the play.' },
      pre_tasks: taskListSchema(),
      roles: {
        type: 'array',
        description: 'Roles run after pre_tasks, before tasks: a role name, or `{role: name, vars: {...}, when, tags, <param>: value}`.',
        items: {
          anyOf: [
            { type: 'string' },
            {
              type: 'object',
              properties: {
                role: { type: 'string', description: 'Role name (roles/<name> next to the playbook, $KPLAY_ROLES_PATH, or an npm package kplay-role-<name>) or path.' },
                name: { type: 'string', description: 'Same as `role`.' },
                vars: varsMap,
                when: condition,
                tags: { ...stringOrList, description: 'Tags inherited by every task of the role.' },
                allow_duplicates: { type: 'boolean', description: 'Run the role again even if it already ran with the same parameters in this play.' },
              },
              description: 'Other keys are role parameters (above set_fact in precedence, as in Ansible).',
            },
          ],
        },
      },
      tasks: taskListSchema(),
      post_tasks: taskListSchema(),
      handlers: taskListSchema(),
    },
    required: ['hosts'],
  };
}

/** Schema validated at load time: structure of plays; tasks are checked one by one in code. */
export function basePlaybookSchema(): JsonSchema {
  // One object for the whole process: compiled validators are cached by schema identity.
  basePlaybook ??= {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'array',
    items: {
      anyOf: [
        IMPORT_PLAYBOOK,
        { $ref: '#/definitions/play' },
      ],
    },
    definitions: { play: playSchema(), task: { type: 'object' } },
  };
  return basePlaybook;
}
let basePlaybook: JsonSchema | undefined;

/** Keys of an `- import_playbook:` entry. */
const IMPORT_PLAYBOOK: JsonSchema = { type: 'object', additionalProperties: false, required: ['import_playbook'], properties: { import_playbook: { type: 'string' }, name: { type: 'string' }, vars: varsMap, when: condition, tags: stringOrList } };

/** Schema of one play (validated per entry, so an error is about the play, not about `import_playbook`). */
export function playEntrySchema(): JsonSchema {
  playEntry ??= { ...playSchema(), definitions: { task: { type: 'object' } } };
  return playEntry;
}
let playEntry: JsonSchema | undefined;

/** Schema of one `- import_playbook: file` entry. */
export function importEntrySchema(): JsonSchema {
  return IMPORT_PLAYBOOK;
}

/** The keys a play accepts. */
export function playKeys(): string[] {
  return Object.keys((playSchema().properties ?? {}) as Record<string, unknown>);
}

/** Schema of one task's keywords (module key excluded). */
export function taskKeywordSchema(): JsonSchema {
  // One object for the whole process: compiled validators are cached by schema identity.
  taskKeywords ??= { type: 'object', properties: TASK_KEYWORDS };
  return taskKeywords;
}
let taskKeywords: JsonSchema | undefined;

/** Names allowed on a block next to block/rescue/always. */
export const BLOCK_KEYS = new Set([...BLOCK_KEYWORDS, 'block', 'rescue', 'always']);

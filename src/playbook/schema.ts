/**
 * The playbook JSON Schema. `basePlaybookSchema()` is what the loader validates against (task
 * module arguments are checked per module, with better messages); `composedPlaybookSchema()`
 * adds every registered module's argument schema for editors (`npm run schemas` writes it to
 * `schemas/playbook.schema.json`).
 */
import type { JsonSchema, AnyModule } from '../sdk/module.js';

const stringOrList: JsonSchema = {
  anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
};
const condition: JsonSchema = {
  description: 'Liquid condition(s) without braces, e.g. `env == "prod" and not skip`; a list means all must hold.',
  anyOf: [{ type: 'string' }, { type: 'boolean' }, { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'boolean' }] } }],
};
const varsMap: JsonSchema = { type: 'object', description: 'Variables (values may be templated).' };
const templatedInt = (description: string): JsonSchema => ({
  description,
  anyOf: [{ type: 'integer', minimum: 0 }, { type: 'string', pattern: '\\{\\{' }],
});

/** Keywords of a module task (besides its one module key). */
export const TASK_KEYWORDS: Record<string, JsonSchema> = {
  name: { type: 'string', description: 'Task name shown in output (templated).' },
  when: condition,
  loop: { description: 'A list (or a template giving a list): the task runs once per item, as `item`.', anyOf: [{ type: 'array' }, { type: 'string' }] },
  loop_control: {
    type: 'object',
    description: 'Loop settings.',
    additionalProperties: false,
    properties: {
      loop_var: { type: 'string', description: 'Name of the item variable. @default item' },
      label: { type: 'string', description: 'Template shown per item instead of the whole item.' },
      index_var: { type: 'string', description: 'Variable holding the 0-based item index.' },
      pause: { type: 'number', minimum: 0, description: 'Seconds to wait between items.' },
    },
  },
  register: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'Store the result in this variable (per cluster).' },
  until: condition,
  retries: templatedInt('Attempts after the first for `until`. @default 3'),
  delay: { description: 'Seconds between `until` attempts. @default 5', anyOf: [{ type: 'number', minimum: 0 }, { type: 'string' }] },
  failed_when: condition,
  changed_when: condition,
  ignore_errors: { description: 'Continue when the task fails (counted as ignored).', anyOf: [{ type: 'boolean' }, { type: 'string' }] },
  notify: { ...stringOrList, description: 'Handler names (or `listen` topics) to notify when the task changed something.' },
  tags: { ...stringOrList, description: 'Tags for `--tags` / `--skip-tags`. `always` and `never` are special.' },
  run_once: { type: 'boolean', description: 'Run on the first cluster of the batch only; the result applies to all.' },
  check_mode: { type: 'boolean', description: 'Force check mode on (true) or off (false) for this task.' },
  no_log: { type: 'boolean', description: 'Hide the result and diff of this task from all output.' },
  vars: varsMap,
  timeout: { type: 'number', exclusiveMinimum: 0, description: 'Seconds before the task is cancelled and fails.' },
  listen: { ...stringOrList, description: 'Handlers only: topics this handler also answers to.' },
};

/** Keywords of a block. */
const BLOCK_KEYWORDS = ['name', 'when', 'tags', 'vars', 'check_mode', 'no_log', 'ignore_errors', 'run_once', 'timeout'];

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
      any_errors_fatal: { type: 'boolean', description: 'Abort the run at the first failure on any cluster.' },
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
        { type: 'object', additionalProperties: false, required: ['import_playbook'], properties: { import_playbook: { type: 'string' }, name: { type: 'string' }, vars: varsMap, when: condition } },
        { $ref: '#/definitions/play' },
      ],
    },
    definitions: { play: playSchema(), task: { type: 'object' } },
  };
  return basePlaybook;
}
let basePlaybook: JsonSchema | undefined;

/** Schema of one task's keywords (module key excluded). */
export function taskKeywordSchema(): JsonSchema {
  // One object for the whole process: compiled validators are cached by schema identity.
  taskKeywords ??= { type: 'object', properties: TASK_KEYWORDS };
  return taskKeywords;
}
let taskKeywords: JsonSchema | undefined;

/** Names allowed on a block next to block/rescue/always. */
export const BLOCK_KEYS = new Set([...BLOCK_KEYWORDS, 'block', 'rescue', 'always']);

/**
 * The full schema for editors (yaml-language-server): every module's arguments composed in, so
 * completion and validation work per module key.
 */
export function composedPlaybookSchema(modules: AnyModule[]): JsonSchema {
  const base = basePlaybookSchema();
  const sorted = [...modules].sort((a, b) => a.name.localeCompare(b.name));
  const moduleTasks = sorted.map((m) => {
    const args = templatableArgs(m.schema);
    const argSchema: JsonSchema = m.freeForm ? { anyOf: [{ type: 'string' }, args] } : args;
    return {
      type: 'object',
      description: m.summary,
      required: [m.name],
      properties: { ...TASK_KEYWORDS, [m.name]: { description: m.summary, ...stripSchemaMeta(argSchema) } },
      additionalProperties: false,
    };
  });
  const taskList = { type: 'array', items: { $ref: '#/definitions/task' } };
  const blockTask = {
    type: 'object',
    required: ['block'],
    additionalProperties: false,
    properties: {
      ...Object.fromEntries(BLOCK_KEYWORDS.map((k) => [k, TASK_KEYWORDS[k]])),
      block: taskList,
      rescue: taskList,
      always: taskList,
    },
  };
  const includeTask = (key: string): JsonSchema => ({
    type: 'object',
    required: [key],
    additionalProperties: false,
    properties: {
      name: TASK_KEYWORDS.name,
      when: TASK_KEYWORDS.when,
      tags: TASK_KEYWORDS.tags,
      vars: TASK_KEYWORDS.vars,
      loop: TASK_KEYWORDS.loop,
      loop_control: TASK_KEYWORDS.loop_control,
      [key]: { type: 'string', description: `Task file to ${key === 'import_tasks' ? 'import when the playbook loads' : 'include at run time (may be templated)'}.` },
    },
  });
  const roleTask = (key: string): JsonSchema => ({
    type: 'object',
    required: [key],
    additionalProperties: false,
    properties: {
      name: TASK_KEYWORDS.name,
      when: TASK_KEYWORDS.when,
      tags: TASK_KEYWORDS.tags,
      vars: { ...varsMap, description: 'Role parameters (include params: above set_fact in precedence, as in Ansible).' },
      ...(key === 'include_role' ? { loop: TASK_KEYWORDS.loop, loop_control: TASK_KEYWORDS.loop_control } : {}),
      [key]: {
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        description: key === 'import_role' ? 'Run a role here, loaded when the playbook loads.' : 'Run a role here, loaded at run time (the name may be templated).',
        properties: {
          name: { type: 'string', description: 'Role name or path.' },
          tasks_from: { type: 'string', description: 'Task file of the role to run instead of tasks/main.yml.' },
          vars_from: { type: 'string', description: 'Vars file instead of vars/main.yml.' },
          defaults_from: { type: 'string', description: 'Defaults file instead of defaults/main.yml.' },
          handlers_from: { type: 'string', description: 'Handlers file instead of handlers/main.yml.' },
          public: { type: 'boolean', description: 'Expose the role\'s defaults and vars to the rest of the play (default: true for import_role, false for include_role).' },
          allow_duplicates: { type: 'boolean', description: 'Run the role even if it already ran with the same parameters.' },
          rolespec_validate: { type: 'boolean', description: 'Accepted for Ansible compatibility; the argument spec is always validated.' },
          apply: { type: 'object', description: 'Accepted for Ansible compatibility (keywords applied to the role\'s tasks): not supported yet, refused when given.' },
        },
      },
    },
  });
  const metaTask = {
    type: 'object',
    required: ['meta'],
    additionalProperties: false,
    properties: {
      name: TASK_KEYWORDS.name,
      when: TASK_KEYWORDS.when,
      tags: TASK_KEYWORDS.tags,
      meta: { enum: ['flush_handlers', 'end_play', 'end_cluster', 'end_host', 'noop', 'clear_facts'] },
    },
  };
  const defs = base.definitions as Record<string, JsonSchema>;
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'https://kplay.dev/schemas/playbook.schema.json',
    title: 'kplay playbook',
    description: 'A kplay playbook: a list of plays (generated by `npm run schemas`; do not edit).',
    type: 'array',
    items: base.items,
    definitions: {
      play: defs.play,
      task: { anyOf: [...moduleTasks, blockTask, includeTask('include_tasks'), includeTask('import_tasks'), roleTask('include_role'), roleTask('import_role'), metaTask] },
    },
  };
}

/** A string that is (or contains) a template: kplay renders it, then coerces and validates the result. */
const TEMPLATED: JsonSchema = { type: 'string', pattern: '\\{\\{|\\{%', description: 'A template, rendered (and coerced to the expected type) before the argument is checked.' };

/**
 * The schema with every constrained value also accepting a template string, recursively: the
 * engine renders `{{ … }}` first and checks (and coerces) the result, so `retries: "{{ n }}"` or
 * `url: "{{ endpoint }}/"` are valid where an integer or an `https://` URL is expected.
 */
export function templatable(schema: JsonSchema): JsonSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const out: JsonSchema = { ...schema };
  const map = (v: unknown): unknown => (typeof v === 'object' && v !== null && !Array.isArray(v) ? templatable(v as JsonSchema) : v);
  if (typeof out.properties === 'object' && out.properties !== null) out.properties = Object.fromEntries(Object.entries(out.properties as Record<string, unknown>).map(([k, v]) => [k, map(v)]));
  if (typeof out.items === 'object' && out.items !== null && !Array.isArray(out.items)) out.items = map(out.items);
  if (typeof out.additionalProperties === 'object' && out.additionalProperties !== null) out.additionalProperties = map(out.additionalProperties);
  for (const k of ['anyOf', 'oneOf'] as const) if (Array.isArray(out[k])) out[k] = (out[k] as unknown[]).map(map);
  const constrained = out.enum !== undefined || out.const !== undefined || out.pattern !== undefined || out.format !== undefined || out.minLength !== undefined || out.maxLength !== undefined;
  const acceptsAnyString = out.type === 'string' && !constrained;
  const untyped = out.type === undefined && out.anyOf === undefined && out.oneOf === undefined && !constrained;
  if (acceptsAnyString || untyped) return out;
  const { description, default: dflt, ...rest } = out;
  return { ...(description !== undefined ? { description } : {}), ...(dflt !== undefined ? { default: dflt } : {}), anyOf: [rest, TEMPLATED] };
}

/** A module's argument schema for editors: every argument may also be a template string. */
function templatableArgs(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...schema };
  if (typeof out.properties === 'object' && out.properties !== null) out.properties = Object.fromEntries(Object.entries(out.properties as Record<string, JsonSchema>).map(([k, v]) => [k, templatable(v)]));
  return out;
}

function stripSchemaMeta(schema: JsonSchema): JsonSchema {
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}

/**
 * The playbook schema for editors (yaml-language-server), written to `schemas/playbook.schema.json`
 * by `npm run schemas`: the loader's schema with every registered module's arguments composed in,
 * so completion and validation work per module key. Every piece used more than once (a module's
 * arguments under its short and qualified names, each task keyword, the template and Ansible
 * boolean forms an argument also accepts) is written once under `definitions` and referenced with
 * `$ref`, which keeps the file small; a `$ref` only ever has annotations (`description`,
 * `default`) beside it, so validators that ignore its siblings (draft-07) validate the same.
 */
import type { AnyModule, JsonSchema } from '../core/module.js';
import { qualifiedNames } from './names.js';
import { basePlaybookSchema } from './schema.js';
import { BLOCK_KEYS, INCLUDE_KEYS, IncludeKeywords, META_KEYS, MetaAction, ROLE_TASK_KEYS, RoleOptions, TASK_KEYWORDS, VarsMap } from './syntax.js';

/** A reference to one of the editor schema's `definitions`. */
const ref = (name: string): JsonSchema => ({ $ref: `#/definitions/${name}` });

/** The definition name of a task keyword's schema. */
const keywordDef = (keyword: string): string => `keyword.${keyword}`;

/** The definition name of a module's argument schema (shared by its short and qualified names). */
const moduleDef = (module: string): string => `module.${module}`;

/** References to the schemas of `keywords`, as a `properties` map. */
const keywordRefs = (keywords: readonly string[]): Record<string, JsonSchema> => Object.fromEntries(keywords.map((k) => [k, ref(keywordDef(k))]));

/** `with_<lookup>:` loops, on module tasks and includes. */
const WITH_LOOPS: Record<string, JsonSchema> = { '^with_[a-z0-9_]+$': ref('withLoop') };

/** A boolean as Ansible spells it: kplay reads these as booleans. */
const ANSIBLE_BOOLEAN: JsonSchema = { type: 'string', pattern: '^([yY]([eE][sS])?|[nN]([oO])?|[oO]([nN]|[fF][fF])|[tT]([rR][uU][eE])?|[fF]([aA][lL][sS][eE])?|[01])$', description: 'A boolean as Ansible spells it (yes/no, on/off, y/n, true/false, 1/0).' };
/** A string that is (or contains) a template: kplay renders it, then coerces and validates the result. */
const TEMPLATED: JsonSchema = { type: 'string', pattern: '\\{\\{|\\{%', description: 'A template, rendered (and coerced to the expected type) before the argument is checked.' };
const PLAIN_BOOLEAN = JSON.stringify({ type: 'boolean' });

/** The definitions every other part refers to (templates, booleans, `with_<lookup>`, the task keywords). */
function sharedDefinitions(): Record<string, JsonSchema> {
  return {
    templated: TEMPLATED,
    ansibleBoolean: ANSIBLE_BOOLEAN,
    boolean: { anyOf: [{ type: 'boolean' }, ref('ansibleBoolean'), ref('templated')] },
    withLoop: { description: '`with_<lookup>: terms`: loop over `query(\'<lookup>\', terms)`, as in Ansible.' },
    ...Object.fromEntries(Object.entries(TASK_KEYWORDS).map(([k, v]) => [keywordDef(k), v])),
  };
}

/**
 * The full schema for editors (yaml-language-server): every module's arguments composed in, so
 * completion and validation work per module key.
 */
export function composedPlaybookSchema(modules: AnyModule[]): JsonSchema {
  const base = basePlaybookSchema();
  const sorted = [...modules].sort((a, b) => a.name.localeCompare(b.name));
  const moduleDefs: Record<string, JsonSchema> = {};
  const allKeywords = Object.keys(TASK_KEYWORDS);
  const moduleTasks = sorted.map((m) => {
    // a string is the free-form argument or Ansible's `key=value` form; null: the arguments are in `args:`
    const argSchema: JsonSchema = { anyOf: [{ type: 'string' }, { type: 'null' }, templatableArgs(withAliasProperties(m))] };
    moduleDefs[moduleDef(m.name)] = { description: m.summary, ...stripSchemaMeta(argSchema) };
    const names = [m.name, ...qualifiedNames(m.name)];
    return {
      type: 'object',
      description: m.summary,
      ...(names.length === 1 ? { required: [m.name] } : { anyOf: names.map((n) => ({ required: [n] })) }),
      properties: { ...keywordRefs(allKeywords), ...Object.fromEntries(names.map((n) => [n, ref(moduleDef(m.name))])) },
      patternProperties: WITH_LOOPS,
      additionalProperties: false,
    };
  });
  const taskList = { type: 'array', items: ref('task') };
  /** The keys of a node kind as its editor schema's properties: task keywords by reference, the others as given. */
  const nodeProperties = (keys: ReadonlySet<string>, own: Record<string, JsonSchema>): Record<string, JsonSchema> =>
    Object.fromEntries([...keys].filter((k) => k in own || k in TASK_KEYWORDS).map((k) => [k, own[k] ?? ref(keywordDef(k))]));
  const blockTask = {
    type: 'object',
    required: ['block'],
    additionalProperties: false,
    properties: nodeProperties(BLOCK_KEYS, { block: taskList, rescue: taskList, always: taskList }),
  };
  const includeTask = (key: 'include_tasks' | 'import_tasks'): JsonSchema => ({
    type: 'object',
    anyOf: [key, ...qualifiedNames(key)].map((n) => ({ required: [n] })),
    additionalProperties: false,
    patternProperties: WITH_LOOPS,
    properties: {
      ...Object.fromEntries(qualifiedNames(key).map((n) => [n, { type: 'string', description: `Same as \`${key}\`.` }])),
      ...nodeProperties(new Set([...INCLUDE_KEYS].filter((k) => k !== (key === 'include_tasks' ? 'import_tasks' : 'include_tasks'))), { [key]: IncludeKeywords.properties[key] }),
    },
  });
  const roleTask = (key: 'include_role' | 'import_role'): JsonSchema => ({
    type: 'object',
    required: [key],
    additionalProperties: false,
    properties: nodeProperties(new Set([...ROLE_TASK_KEYS].filter((k) => k !== (key === 'include_role' ? 'import_role' : 'include_role') && (key === 'include_role' || (k !== 'loop' && k !== 'loop_control')))), {
      vars: { ...VarsMap, description: 'Role parameters (include params: above set_fact in precedence, as in Ansible).' },
      [key]: {
        description: key === 'import_role' ? 'Run a role here, loaded when the playbook loads.' : 'Run a role here, loaded at run time (the name may be templated).',
        anyOf: [RoleOptions, { type: 'string', description: "The options as `key=value` pairs (Ansible's free form): `name=web tasks_from=setup.yml`." }],
      },
    }),
  });
  const metaTask = {
    type: 'object',
    required: ['meta'],
    additionalProperties: false,
    properties: nodeProperties(META_KEYS, { meta: MetaAction }),
  };
  // `action: module args` / `local_action: {module: x, …}`: the module is named inside
  const actionTask = (key: string): JsonSchema => ({
    type: 'object',
    required: [key],
    additionalProperties: false,
    patternProperties: WITH_LOOPS,
    properties: {
      ...keywordRefs(allKeywords),
      [key]: { description: `The module and its arguments, as Ansible's \`${key}\`: \`module key=value …\` or \`{module: name, …arguments}\`.`, anyOf: [{ type: 'string' }, { type: 'object', required: ['module'], properties: { module: { type: 'string' } } }] },
    },
  });
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
      task: { anyOf: [...moduleTasks, actionTask('action'), actionTask('local_action'), blockTask, includeTask('include_tasks'), includeTask('import_tasks'), roleTask('include_role'), roleTask('import_role'), metaTask] },
      ...sharedDefinitions(),
      ...moduleDefs,
    },
  };
}

/**
 * The schema with every constrained value also accepting a template string, recursively: the
 * engine renders `{{ … }}` first and checks (and coerces) the result, so `retries: "{{ n }}"` or
 * `url: "{{ endpoint }}/"` are valid where an integer or an `https://` URL is expected. The
 * result refers to the editor schema's `definitions` (`templated`, `boolean`, `ansibleBoolean`).
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
  // a boolean also takes the spellings Ansible reads as one (`yes`, `on`, `n`, `1`, any case)
  if (out.type === 'boolean') {
    const { description, default: dflt, ...rest } = out;
    const annotations = { ...(description !== undefined ? { description } : {}), ...(dflt !== undefined ? { default: dflt } : {}) };
    if (JSON.stringify(rest) === PLAIN_BOOLEAN) return { ...annotations, ...ref('boolean') };
    return { ...annotations, anyOf: [rest, ref('ansibleBoolean'), ref('templated')] };
  }
  const acceptsAnyString = out.type === 'string' && !constrained;
  const untyped = out.type === undefined && out.anyOf === undefined && out.oneOf === undefined && !constrained;
  if (acceptsAnyString || untyped) return out;
  const { description, default: dflt, ...rest } = out;
  return { ...(description !== undefined ? { description } : {}), ...(dflt !== undefined ? { default: dflt } : {}), anyOf: [rest, ref('templated')] };
}

/** A module's argument schema with its aliases as properties too (each as the argument it stands for). */
function withAliasProperties(m: AnyModule): JsonSchema {
  const props = m.schema.properties as Record<string, JsonSchema> | undefined;
  if (!m.aliases || !props) return m.schema;
  const extra = Object.fromEntries(Object.entries(m.aliases).flatMap(([alias, to]) => (props[to] ? [[alias, { ...props[to], description: `Alias of \`${to}\`.` }]] : [])));
  return { ...m.schema, properties: { ...props, ...extra } };
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

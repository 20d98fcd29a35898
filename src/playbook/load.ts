/**
 * Playbook loading: YAML → schema check → normalised plays and task trees (see `types.ts`).
 * Everything static is checked here, before any cluster is contacted: structure, unknown
 * modules and keywords, module arguments that are not templated, template syntax, handler
 * references, and `import_tasks` / `import_playbook` files (with cycle detection).
 */
import path from 'node:path';
import { InputError, type SourcePos } from '../load/errors.js';
import { validateOrThrow, compileSchema, describeAjvError, validateArgs } from '../load/schema.js';
import { copyPos, loadYamlDoc, posOf, posOfPath } from '../load/yaml.js';
import type { ModuleRegistry } from '../plugins/registry.js';
import type { AnyModule } from '../core/module.js';
import { templar, Templar } from '../template/index.js';
import { importEntrySchema, playEntrySchema, playKeys, taskKeywordSchema } from './schema.js';
import { BLOCK_KEYS, INCLUDE_KEYS, META_ACTIONS, META_KEYS, ROLE_OPTIONS, ROLE_TASK_KEYS, TASK_KEYWORDS } from './syntax.js';
import { canonicalTask, checkConnection, checkDebugger, checkDelegate, inheritedKeywords, moduleDefaultsFor, NOTHING_INHERITED, parseKv, staticBool, withLookup, yaml11Bool, type Inherited } from './keywords.js';
import { KEYWORD_ACTIONS } from './names.js';
import { ansibleBooleans } from './booleans.js';
import { closest } from '../load/suggest.js';
import './validators.js';
import { specProblems, checkOptions } from './argspec.js';
import { findRole, parseRoleEntry, roleArgumentSpecs, roleDisplayName, roleFile, roleMap } from './roles.js';
import type { BlockNode, IncludeNode, IncludeRoleNode, MetaNode, ModuleTask, Play, Playbook, RoleUse, TaskCommon, TaskNode, VarPrompt } from './types.js';

type Obj = Record<string, unknown>;


/**
 * What loading the roles of one play collects (one owner: the play being loaded, or at run time
 * the play run that loads an `include_role` / `include_tasks`).
 */
export interface RoleCollector {
  /** Directory of the playbook: roles are found relative to it. */
  playbookDir: string;
  /** Roles whose defaults and vars the whole play sees, in load order. */
  publicRoles: RoleUse[];
  /** Handlers of the roles used. */
  handlers: ModuleTask[];
  /** Keywords accepted with no effect met on tasks and blocks (said once with -v). */
  noEffect: Set<string>;
  /** Role directories whose handlers were added. */
  handlerDirs: Set<string>;
  /** Uses of static roles already expanded (a role runs once per play unless its parameters differ). */
  seen: Set<string>;
  /**
   * Where scalars tagged `!secret` in the files loaded (task files, role files) go: the playbook's
   * secrets when it loads, the run's masker for files loaded at run time.
   */
  addSecrets(values: readonly string[]): void;
}

/** A fresh collector for a play of a playbook in `playbookDir`. */
export function roleCollector(playbookDir: string, addSecrets: (values: readonly string[]) => void): RoleCollector {
  return { playbookDir, publicRoles: [], handlers: [], handlerDirs: new Set(), seen: new Set(), addSecrets, noEffect: new Set() };
}

/** Inherited context while normalising a task list. */
export interface Scope {
  baseDir: string;
  tags: string[];
  blockVars: Obj[];
  /** Task files being imported (cycle detection). */
  stack: string[];
  handler: boolean;
  /** The role whose files are being loaded. */
  role?: RoleUse;
  roles: RoleCollector;
  /** Keywords the play and enclosing blocks pass on (no_log, environment, module_defaults, …). */
  inherit: Inherited;
}

export interface LoadOptions {
  registry: ModuleRegistry;
}

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function toList(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.map(String);
  return String(v)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function conditionList(v: unknown): unknown[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

const posFallback = (file: string): SourcePos => ({ file, line: 0, col: 0 });

/** Load a playbook file (and everything it imports). */
export async function loadPlaybook(file: string, opts: LoadOptions): Promise<Playbook> {
  const abs = path.resolve(file);
  const secrets: string[] = [];
  const plays = await loadPlays(abs, opts, [abs], secrets, undefined);
  return { file: abs, dir: path.dirname(abs), plays, secrets };
}

async function loadPlays(file: string, opts: LoadOptions, stack: string[], secrets: string[], from: SourcePos | undefined): Promise<Play[]> {
  const { value, secrets: s } = await loadYamlDoc(file, from);
  secrets.push(...s);
  if (value === null || value === undefined) throw new InputError('playbook is empty: expected a list of plays', { file, line: 1, col: 1 });
  if (!Array.isArray(value)) {
    throw new InputError('a playbook must be a list of plays (each starting with `- name:` / `hosts:`)', posOf(value) ?? { file, line: 1, col: 1 });
  }
  const plays: Play[] = [];
  for (const [i, entry] of (value as unknown[]).entries()) {
    const where = posOf(value, i) ?? posFallback(file);
    checkPlayEntry(entry, where, file);
    if ('import_playbook' in entry) {
      const target = path.resolve(path.dirname(file), String(entry.import_playbook));
      if (stack.includes(target)) throw new InputError(`import_playbook cycle: ${[...stack, target].map((f) => path.basename(f)).join(' → ')}`, where);
      const imported = await loadPlays(target, opts, [...stack, target], secrets, where);
      const extra = isObj(entry.vars) ? entry.vars : {};
      for (const p of imported) plays.push({ ...p, vars: { ...p.vars, ...extra } });
      continue;
    }
    plays.push(await normalisePlay(entry, file, i, opts, secrets, stack));
  }
  return plays;
}

/**
 * Check one entry of a playbook: a play (an unknown key is reported as that, with the nearest
 * known key) or an `import_playbook` entry.
 */
function checkPlayEntry(entry: unknown, where: SourcePos, file: string): asserts entry is Obj {
  if (!isObj(entry)) throw new InputError('a play must be a map (`- hosts: …` with `tasks:`), or `- import_playbook: file.yml`', where);
  const isImport = 'import_playbook' in entry;
  const allowed = isImport ? Object.keys((importEntrySchema().properties ?? {}) as Obj) : playKeys();
  for (const k of Object.keys(entry)) {
    if (allowed.includes(k)) continue;
    const near = closest(k, allowed);
    const what = isImport ? 'import_playbook entry' : 'play';
    const hint = near.length ? `did you mean '${near[0]}'?` : `a ${what} accepts: ${allowed.join(', ')}`;
    throw new InputError(`${what}: unknown key '${k}'${!isImport && (k in TASK_KEYWORDS || k.startsWith('with_')) ? ' (a task keyword: put it on a task under `tasks:`)' : ''}`, posOf(entry, k) ?? where, hint);
  }
  if (!isImport && !('hosts' in entry)) throw new InputError("play: missing required key 'hosts'", where, 'add `hosts: <pattern>` (e.g. `hosts: all` or `hosts: localhost`)');
  validateOrThrow(isImport ? importEntrySchema() : playEntrySchema(), withoutNulls(entry), isImport ? 'import_playbook' : 'play', { root: entry, fallbackPos: where ?? posFallback(file) });
}

async function normalisePlay(raw: Obj, file: string, index: number, opts: LoadOptions, secrets: string[], stack: string[]): Promise<Play> {
  const baseDir = path.dirname(file);
  const pos = posOf(raw) ?? posFallback(file);
  const tags = toList(raw.tags);
  const roles = roleCollector(path.dirname(stack[0] ?? file), (values) => secrets.push(...values));
  checkDebugger(raw);
  checkConnection(raw);
  if (raw.strategy === 'debug') throw new InputError("strategy: 'debug' (Ansible's task debugger) is not supported by kplay", posOf(raw, 'strategy'), 'remove it; run with -vv to see each result');
  const inherit = inheritedKeywords(raw, NOTHING_INHERITED, knownAction(opts));
  const scope: Scope = { baseDir, tags, blockVars: [], stack, handler: false, roles, inherit };
  const serial = raw.serial === undefined ? undefined : Array.isArray(raw.serial) ? (raw.serial as (number | string)[]) : [raw.serial as number | string];
  const name = typeof raw.name === 'string' ? raw.name : `play ${index + 1}`;
  if (raw.vars !== undefined) templar.check(raw.vars, { where: posOf(raw, 'vars') });
  const { vars: promptVars, prompts } = varsPrompt(raw);
  const varsFiles = Array.isArray(raw.vars_files) ? (raw.vars_files as string[]) : [];
  const filesVars: Obj = {};
  for (const [i, vf] of varsFiles.entries()) {
    const where = posOf(raw.vars_files, i) ?? pos;
    if (Templar.isTemplated(vf)) throw new InputError(`vars_files entries cannot be templated: ${vf}`, where, 'use a fixed path relative to the playbook');
    const vfPath = path.resolve(baseDir, vf);
    const { value, secrets: s } = await loadYamlDoc(vfPath, where);
    secrets.push(...s);
    if (value === null) continue;
    if (!isObj(value)) throw new InputError('a vars file must be a map of variables', posOf(value) ?? { file: vfPath, line: 1, col: 1 });
    templar.check(value);
    Object.assign(filesVars, value);
  }
  const section = async (key: string, handler = false): Promise<TaskNode[]> => {
    const list = raw[key];
    if (list === undefined || list === null) return [];
    return normaliseList(list as unknown[], { ...scope, handler }, opts);
  };
  const handlers = await section('handlers', true);
  const preTasks = await section('pre_tasks');
  // `roles:` run after pre_tasks (and their handlers), before tasks, as in Ansible.
  const roleBlocks: TaskNode[] = [];
  if (raw.roles !== undefined && raw.roles !== null) {
    if (!Array.isArray(raw.roles)) throw new InputError('`roles` must be a list of role names or `{role: name, ...}` entries', posOf(raw, 'roles'));
    for (const [i, entry] of (raw.roles as unknown[]).entries()) {
      const where = posOf(raw.roles, i) ?? pos;
      const dep = parseRoleEntry(entry, where);
      const c: TaskCommon = { ...common(roleEntryKeywords(dep, d0(entry)), where, scope, opts), name: undefined };
      const node = await expandRole({ name: dep.name, from: {}, useVars: dep.useVars, params: dep.params, public: true, allowDuplicates: isObj(entry) && entry.allow_duplicates === true }, c, scope, opts, where, isObj(entry) ? entry : undefined);
      if (node) roleBlocks.push(node);
    }
  }
  const tasks = [...roleBlocks, ...(await section('tasks'))];
  const play: Play = {
    name,
    hosts: raw.hosts as string | string[],
    gatherFacts: staticBool(raw, 'gather_facts') ?? false,
    order: typeof raw.order === 'string' ? (raw.order as Play['order']) : 'inventory',
    noEffect: Object.keys(raw).filter((k) => NO_EFFECT.has(k)),
    serial,
    maxFailPercentage: typeof raw.max_fail_percentage === 'number' ? raw.max_fail_percentage : undefined,
    anyErrorsFatal: inherit.anyErrorsFatal === true,
    forceHandlers: staticBool(raw, 'force_handlers') === true,
    prompts,
    vars: { ...promptVars, ...(isObj(raw.vars) ? raw.vars : {}) },
    varsFiles,
    varsFromFiles: filesVars,
    tags,
    preTasks,
    tasks,
    postTasks: await section('post_tasks'),
    handlers: [...checkedHandlers(handlers), ...roles.handlers],
    publicRoles: roles.publicRoles,
    baseDir,
    pos,
  };
  // keywords with no effect on tasks and blocks (post_tasks included) are said with the play's
  play.noEffect = [...new Set([...play.noEffect, ...roles.noEffect])];
  checkNotifications(play);
  return play;
}

/** Keywords accepted for Ansible compatibility that change nothing in kplay. */
const NO_EFFECT = new Set(['become', 'become_user', 'become_method', 'become_flags', 'become_exe', 'connection', 'remote_user', 'port', 'gather_subset', 'gather_timeout', 'fact_path', 'collections', 'strategy']);

/** Whether `short` is an action kplay has: a registry module or a keyword action. */
function knownAction(opts: LoadOptions): (short: string) => boolean {
  return (short) => opts.registry.has(short) || KEYWORD_ACTIONS.has(short);
}

/**
 * `vars_prompt`: each variable is a play variable with its `default` (an `-e name=…` wins, as
 * extra vars do; without a default it is the empty string), and a prompt the run asks on a
 * terminal before the play (src/cli/prompt.ts); without a terminal the default stays, as in Ansible.
 */
function varsPrompt(raw: Obj): { vars: Obj; prompts: VarPrompt[] } {
  const list = raw.vars_prompt;
  if (list === undefined || list === null) return { vars: {}, prompts: [] };
  const out: Obj = {};
  const prompts: VarPrompt[] = [];
  for (const [i, p] of (list as Obj[]).entries()) {
    const where = posOf(list, i);
    if (p.encrypt !== undefined && p.encrypt !== null) throw new InputError(`vars_prompt '${String(p.name)}': \`encrypt\` (hashing the answer) is not supported by kplay`, posOf(p, 'encrypt') ?? where, 'hash the value with the password_hash filter where it is used');
    if (p.default !== undefined) templar.check(p.default, { where: posOf(p, 'default') ?? where });
    out[String(p.name)] = p.default ?? '';
    prompts.push({
      name: String(p.name),
      prompt: typeof p.prompt === 'string' && p.prompt !== '' ? p.prompt : String(p.name),
      private: yaml11Bool(p.private) ?? true,
      ...(p.default !== undefined && p.default !== null ? { default: p.default } : {}),
      confirm: yaml11Bool(p.confirm) === true,
    });
  }
  return { vars: out, prompts };
}

/** The map a role entry's keywords are read from (positions kept: the entry itself when it is a map). */
function d0(entry: unknown): Obj | undefined {
  return isObj(entry) ? entry : undefined;
}

/** A role entry's `when`, `tags` and keywords, as a node's raw keys (read from the entry, for positions). */
function roleEntryKeywords(dep: { when: unknown[]; tags: string[]; keywords: Obj }, entry: Obj | undefined): Obj {
  if (!entry) return { when: dep.when, tags: dep.tags };
  const out: Obj = { ...dep.keywords, when: dep.when, tags: dep.tags };
  copyPos(entry, out);
  return out;
}

/** Handlers are module tasks with a name or topics. */
function checkedHandlers(handlers: TaskNode[]): ModuleTask[] {
  return handlers.map((h) => {
    if (h.kind !== 'task') throw new InputError('handlers must be module tasks (no block, include or meta)', h.pos);
    if (!h.name && h.listen.length === 0) throw new InputError('a handler needs a `name` (or `listen`) so tasks can notify it', h.pos);
    return h;
  });
}

/** One use of a role, as the loader sees it. */
interface RoleSpec {
  name: string;
  from: IncludeRoleNode['from'];
  useVars: Obj;
  params: Obj;
  public: boolean;
  allowDuplicates: boolean;
  /** Validate the role's argument spec first. @default true */
  validate?: boolean;
}

/**
 * Expand one use of a role into a block: its dependencies' blocks, the argument-spec validation
 * task (when the role declares a spec for the entry point), then its tasks. Its handlers join the
 * play's. Returns undefined for a static role already used with the same parameters (it runs once
 * per play, as in Ansible, unless `allow_duplicates`).
 */
export async function expandRole(spec: RoleSpec, c: TaskCommon, scope: Scope, opts: LoadOptions, pos: SourcePos, raw: Obj | undefined, dynamic = false): Promise<BlockNode | undefined> {
  const dir = findRole(spec.name, { playbookDir: scope.roles.playbookDir, parentRoleDir: scope.role?.dir }, pos);
  const secrets = scope.roles.addSecrets;
  const meta = await roleMap(dir, 'meta', undefined, pos, secrets);
  const key = JSON.stringify([dir, spec.from, spec.params, spec.useVars]);
  const allowDuplicates = spec.allowDuplicates || meta.allow_duplicates === true;
  if (!dynamic && !allowDuplicates) {
    if (scope.roles.seen.has(key)) return undefined;
    scope.roles.seen.add(key);
  }
  if (scope.stack.includes(dir)) throw new InputError(`role dependency cycle: ${[...scope.stack.filter((s) => !s.endsWith('.yml') && !s.endsWith('.yaml')), dir].map((d) => path.basename(d)).join(' → ')}`, pos);
  const role: RoleUse = {
    name: roleDisplayName(spec.name, dir),
    dir,
    defaults: await roleMap(dir, 'defaults', spec.from.defaults, pos, secrets),
    vars: await roleMap(dir, 'vars', spec.from.vars, pos, secrets),
    useVars: spec.useVars,
    params: spec.params,
    deps: [],
    parent: scope.role,
    public: spec.public,
  };
  templar.check(spec.params, { where: pos });
  templar.check(spec.useVars, { where: pos });
  const inner: Scope = { ...scope, role, tags: c.tags, stack: [...scope.stack, dir], handler: false, inherit: inheritOf(c) };
  // dependencies (meta/main.yml) run first, each once per play
  const depBlocks: TaskNode[] = [];
  const deps = meta.dependencies;
  if (deps !== undefined && deps !== null) {
    if (!Array.isArray(deps)) throw new InputError(`role ${role.name}: meta dependencies must be a list`, posOf(meta, 'dependencies') ?? pos);
    for (const [i, d] of deps.entries()) {
      const where = posOf(deps, i) ?? pos;
      const dep = parseRoleEntry(d, where);
      const dc: TaskCommon = { ...common(roleEntryKeywords(dep, d0(d)), where, inner, opts), name: undefined };
      const node = await expandRole({ name: dep.name, from: {}, useVars: dep.useVars, params: dep.params, public: false, allowDuplicates: isObj(d) && d.allow_duplicates === true }, dc, inner, opts, where, isObj(d) ? d : undefined);
      if (node?.role) role.deps.push(node.role);
      if (node) depBlocks.push(node);
    }
  }
  // argument specs: validated first (a task, as in Ansible), literal params checked now
  const entry = spec.from.tasks ?? 'main';
  const specs = await roleArgumentSpecs(dir, meta, secrets);
  const argSpec = isObj(specs[entry]) ? specs[entry] : undefined;
  const validation: TaskNode[] = [];
  if (argSpec && spec.validate !== false) {
    const options = isObj(argSpec.options) ? argSpec.options : {};
    const problems = specProblems(options);
    const specFile = roleFile(dir, 'meta', 'argument_specs') ?? roleFile(dir, 'meta') ?? dir;
    if (problems.length) throw new InputError(`role ${role.name}: invalid argument spec '${entry}': ${problems.join('; ')}`, posOf(argSpec) ?? { file: specFile, line: 1, col: 1 });
    staticRoleArgs(role.name, options, spec.params, raw, pos);
    const name = `Validating arguments against arg spec '${entry}'${typeof argSpec.short_description === 'string' ? ` - ${argSpec.short_description}` : ''}`;
    const task: ModuleTask = {
      ...common({ name }, pos, inner, opts),
      name,
      tags: [...new Set([...inner.tags, 'always'])],
      kind: 'task',
      module: 'validate_argument_spec',
      args: { argument_spec: options, provided_arguments: spec.params },
      loopControl: { loopVar: 'item' },
      notify: [],
      listen: [],
    };
    validation.push(task);
  }
  // tasks and handlers
  const tasksFile = roleFile(dir, 'tasks', spec.from.tasks);
  if (!tasksFile && spec.from.tasks) throw new InputError(`role ${role.name}: tasks/${spec.from.tasks} not found`, pos);
  const tasks = tasksFile ? await loadTaskFile(tasksFile, inner, opts, pos) : [];
  const handlersFile = roleFile(dir, 'handlers', spec.from.handlers);
  const handlerKey = `${dir}\u0000${spec.from.handlers ?? 'main'}`;
  if (handlersFile && !scope.roles.handlerDirs.has(handlerKey)) {
    scope.roles.handlerDirs.add(handlerKey);
    const { value, secrets: handlerSecrets } = await loadYamlDoc(handlersFile, pos);
    secrets(handlerSecrets);
    if (value !== null && value !== undefined) {
      if (!Array.isArray(value)) throw new InputError('a handlers file must be a list of handlers', posOf(value) ?? { file: handlersFile, line: 1, col: 1 });
      const hs = checkedHandlers(await normaliseList(value, { ...inner, baseDir: path.dirname(handlersFile), handler: true, stack: [...inner.stack, handlersFile] }, opts));
      // a role's handler also answers to `<role> : <name>`, as in Ansible
      for (const h of hs) if (h.name) h.listen = [...h.listen, `${role.name} : ${h.name}`];
      scope.roles.handlers.push(...hs);
    }
  }
  if (spec.public && !dynamic) scope.roles.publicRoles.push(role);
  return { ...c, name: c.name ?? `role: ${role.name}`, kind: 'block', role, block: [...depBlocks, ...validation, ...tasks], rescue: [], always: [] };
}

/** Literal (untemplated) role parameters checked against the argument spec when the playbook loads. */
function staticRoleArgs(role: string, options: Obj, params: Obj, raw: Obj | undefined, pos: SourcePos): void {
  for (const [k, v] of Object.entries(params)) {
    const spec = options[k];
    if (Templar.isTemplated(v) || !isObj(spec)) continue;
    // `required` is checked at run time: a required option may come from any variable scope.
    const errors: string[] = [];
    checkOptions({ [k]: { ...spec, required: false } }, { [k]: v }, errors);
    if (errors.length) throw new InputError(`role ${role}: invalid arguments: ${errors.join('; ')}`, (raw ? posOf(raw, k) : undefined) ?? pos, "see the role's meta/argument_specs.yml");
  }
}

function checkNotifications(play: Play): void {
  const known = new Set<string>();
  for (const h of play.handlers) {
    if (h.name) known.add(h.name);
    for (const l of h.listen) known.add(l);
  }
  const visit = (nodes: TaskNode[]): void => {
    for (const n of nodes) {
      if (n.kind === 'task') {
        for (const name of n.notify) {
          if (!Templar.isTemplated(name) && !known.has(name)) {
            const hint = known.size ? `known handlers: ${[...known].join(', ')}` : 'this play has no handlers';
            throw new InputError(`notify: no handler named '${name}'`, n.pos, hint);
          }
        }
      } else if (n.kind === 'block') {
        visit(n.block);
        visit(n.rescue);
        visit(n.always);
      }
    }
  };
  visit(play.preTasks);
  visit(play.tasks);
  visit(play.postTasks);
  visit(play.handlers);
}

async function normaliseList(list: unknown[], scope: Scope, opts: LoadOptions): Promise<TaskNode[]> {
  const out: TaskNode[] = [];
  for (const [i, raw] of list.entries()) {
    const where = posOf(list, i) ?? posFallback(scope.baseDir);
    if (!isObj(raw)) throw new InputError('a task must be a map (e.g. `- name: …` followed by one module)', where);
    out.push(await normaliseTask(raw, where, scope, opts));
  }
  return out;
}

function common(raw: Obj, pos: SourcePos, scope: Scope, opts: LoadOptions): TaskCommon {
  const name = typeof raw.name === 'string' ? raw.name : undefined;
  if (name) templar.check(name, { where: posOf(raw, 'name') });
  const when = conditionList(raw.when);
  for (const c of when) templar.checkCondition(c, { where: posOf(raw, 'when') });
  if (isObj(raw.vars)) templar.check(raw.vars, { where: posOf(raw, 'vars') });
  checkDelegate(raw);
  checkDebugger(raw);
  checkConnection(raw);
  for (const key of Object.keys(raw)) if (NO_EFFECT.has(key) && raw[key] !== null) scope.roles.noEffect.add(key);
  const k = inheritedKeywords(raw, scope.inherit, knownAction(opts));
  return {
    name,
    when,
    tags: [...new Set([...scope.tags, ...toList(raw.tags)])],
    vars: isObj(raw.vars) ? raw.vars : undefined,
    blockVars: scope.blockVars,
    checkMode: k.checkMode,
    ignoreErrors: k.ignoreErrors,
    ignoreUnreachable: k.ignoreUnreachable,
    noLog: k.noLog,
    runOnce: k.runOnce,
    timeout: k.timeout,
    diff: k.diff,
    environment: k.environment,
    moduleDefaults: k.moduleDefaults,
    anyErrorsFatal: k.anyErrorsFatal,
    throttle: k.throttle,
    baseDir: scope.baseDir,
    role: scope.role,
    pos,
  };
}

/** What a node passes on to the tasks inside it (a block's, an import's). */
function inheritOf(c: TaskCommon): Inherited {
  return { checkMode: c.checkMode, noLog: c.noLog, diff: c.diff, ignoreErrors: c.ignoreErrors, ignoreUnreachable: c.ignoreUnreachable, runOnce: c.runOnce, timeout: c.timeout, anyErrorsFatal: c.anyErrorsFatal, throttle: c.throttle, environment: c.environment, moduleDefaults: c.moduleDefaults };
}

function unknownKeyError(raw: Obj, key: string, allowed: Iterable<string>, what: string): InputError {
  const near = closest(key, allowed);
  return new InputError(`${what}: unknown key '${key}'`, posOf(raw, key), near.length ? `did you mean '${near[0]}'?` : `allowed here: ${[...allowed].join(', ')}`);
}

async function normaliseTask(original: Obj, pos: SourcePos, scope: Scope, opts: LoadOptions): Promise<TaskNode> {
  // Blocks.
  if ('block' in original) {
    const raw = original;
    for (const k of Object.keys(raw)) if (!BLOCK_KEYS.has(k)) throw unknownKeyError(raw, k, BLOCK_KEYS, 'block');
    validateKeywords(raw, pos);
    const c = common(raw, pos, scope, opts);
    const inner: Scope = { ...scope, tags: c.tags, blockVars: c.vars ? [...scope.blockVars, c.vars] : scope.blockVars, inherit: inheritOf(c) };
    const list = (k: string): Promise<TaskNode[]> => {
      const v = raw[k];
      if (v === undefined || v === null) return Promise.resolve([]);
      if (!Array.isArray(v)) throw new InputError(`\`${k}\` must be a list of tasks`, posOf(raw, k));
      return normaliseList(v, inner, opts);
    };
    // The children see the block's vars through `blockVars`; the block keeps them for its own `when`.
    const node: BlockNode = { ...c, kind: 'block', block: await list('block'), rescue: await list('rescue'), always: await list('always') };
    return node;
  }
  // `ansible.builtin.debug` → `debug`, `action: …` → the module key, with_<lookup> → a loop.
  const raw = canonicalTask(original, knownAction(opts));
  const withLoop = withLookup(raw);
  const loopOf = (r: Obj): { loop?: unknown; loopLookup?: string } => (withLoop ? { loop: r[withLoop.key], loopLookup: withLoop.lookup } : { loop: r.loop });
  const allowedWith = (keys: ReadonlySet<string>): ReadonlySet<string> => (withLoop ? new Set([...keys, withLoop.key]) : keys);
  // Static and dynamic task file inclusion.
  if ('import_tasks' in raw || 'include_tasks' in raw) {
    const allowed = allowedWith(INCLUDE_KEYS);
    for (const k of Object.keys(raw)) if (!allowed.has(k)) throw unknownKeyError(raw, k, INCLUDE_KEYS, 'include');
    validateKeywords(raw, pos);
    const c = common(raw, pos, scope, opts);
    const dynamic = 'include_tasks' in raw;
    const key = dynamic ? 'include_tasks' : 'import_tasks';
    let fileRaw = raw[key];
    // `include_tasks: {file: x.yml}` (Ansible's long form) and `args: {file: …}`
    if (isObj(fileRaw) && typeof fileRaw.file === 'string') fileRaw = fileRaw.file;
    if ((fileRaw === null || fileRaw === undefined) && isObj(raw.args) && typeof raw.args.file === 'string') fileRaw = raw.args.file;
    if (typeof fileRaw !== 'string' || !fileRaw) throw new InputError(`\`${key}\` needs a file name`, pos);
    const loopControl = loopControlOf(raw);
    const { loop, loopLookup } = loopOf(raw);
    if (dynamic) {
      templar.check(fileRaw, { where: posOf(raw, 'include_tasks') });
      if (loop !== undefined) templar.check(loop, { where: posOf(raw, 'loop') });
      const node: IncludeNode = { ...c, kind: 'include', file: fileRaw, loop, loopLookup, loopControl, parentInherit: scope.inherit };
      if (!Templar.isTemplated(fileRaw)) {
        // Check the file statically now (it is loaded again, per cluster, at run time).
        await loadTaskFile(path.resolve(scope.baseDir, fileRaw), { ...scope, tags: c.tags }, opts, posOf(raw, 'include_tasks') ?? pos);
      }
      return node;
    }
    if (Templar.isTemplated(fileRaw)) throw new InputError('import_tasks is static and cannot be templated; use include_tasks', posOf(raw, 'import_tasks'));
    if (loop !== undefined) throw new InputError('import_tasks cannot loop; use include_tasks', posOf(raw, withLoop?.key ?? 'loop'));
    const target = path.resolve(scope.baseDir, fileRaw);
    const inner: Scope = { ...scope, tags: c.tags, blockVars: c.vars ? [...scope.blockVars, c.vars] : scope.blockVars, inherit: inheritOf(c) };
    const tasks = await loadTaskFile(target, inner, opts, posOf(raw, 'import_tasks') ?? pos);
    const node: BlockNode = { ...c, name: c.name ?? `import_tasks: ${fileRaw}`, kind: 'block', block: tasks, rescue: [], always: [] };
    return node;
  }
  if ('import_role' in raw || 'include_role' in raw) {
    const allowed = allowedWith(ROLE_TASK_KEYS);
    for (const k of Object.keys(raw)) if (!allowed.has(k)) throw unknownKeyError(raw, k, ROLE_TASK_KEYS, 'role task');
    validateKeywords(raw, pos);
    const dynamic = 'include_role' in raw;
    const key = dynamic ? 'include_role' : 'import_role';
    const o = raw[key];
    if (!isObj(o)) throw new InputError(`\`${key}\` needs a map with \`name: <role>\``, posOf(raw, key) ?? pos);
    for (const k of Object.keys(o)) if (!ROLE_OPTIONS.has(k)) throw new InputError(`${key}: unknown option '${k}'`, posOf(o, k), `allowed: ${[...ROLE_OPTIONS].join(', ')}`);
    if (typeof o.name !== 'string' || !o.name) throw new InputError(`\`${key}\` needs \`name: <role>\``, posOf(raw, key) ?? pos);
    if (o.apply !== undefined) throw new InputError(`${key}: \`apply\` is not supported`, posOf(o, 'apply'), 'put the keywords on a block around the role task instead (when, tags, vars are inherited)');
    const validate = o.rolespec_validate !== false;
    const str = (k: string): string | undefined => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
    const from = { tasks: str('tasks_from'), vars: str('vars_from'), defaults: str('defaults_from'), handlers: str('handlers_from') };
    const c = common(raw, pos, scope, opts);
    // `vars:` of import_role/include_role are include params (above facts), not block vars.
    const cc: TaskCommon = { ...c, vars: undefined };
    const params = c.vars ?? {};
    const { loop, loopLookup } = loopOf(raw);
    if (!dynamic) {
      if (Templar.isTemplated(o.name)) throw new InputError('import_role is static and its name cannot be templated; use include_role', posOf(o, 'name'));
      if (loop !== undefined) throw new InputError('import_role cannot loop; use include_role', posOf(raw, withLoop?.key ?? 'loop'));
      const node = await expandRole({ name: o.name, from, useVars: {}, params, public: o.public !== false, allowDuplicates: o.allow_duplicates !== false, validate }, cc, scope, opts, posOf(raw, key) ?? pos, isObj(raw.vars) ? raw.vars : raw);
      return node ?? { ...cc, kind: 'block', block: [], rescue: [], always: [] };
    }
    if (loop !== undefined) templar.check(loop, { where: posOf(raw, withLoop?.key ?? 'loop') });
    const node: IncludeRoleNode = {
      ...c,
      kind: 'include_role',
      roleName: o.name,
      from,
      public: o.public === true,
      allowDuplicates: o.allow_duplicates !== false,
      validate,
      loop,
      loopLookup,
      loopControl: loopControlOf(raw),
      parentInherit: scope.inherit,
    };
    if (!Templar.isTemplated(o.name)) {
      // Check the role statically now (it is loaded again, per cluster, at run time); its handlers
      // join the play's. A check is not a use: its dependencies do not count as already run.
      const check: Scope = { ...scope, roles: { ...scope.roles, seen: new Set(scope.roles.seen) } };
      await expandRole({ name: o.name, from, useVars: {}, params, public: false, allowDuplicates: true }, cc, check, opts, posOf(raw, key) ?? pos, isObj(raw.vars) ? raw.vars : raw, true);
    }
    return node;
  }
  if ('meta' in raw) {
    for (const k of Object.keys(raw)) if (!META_KEYS.has(k)) throw unknownKeyError(raw, k, META_KEYS, 'meta');
    const action = String(raw.meta);
    if (!META_ACTIONS.has(action)) throw new InputError(`unknown meta action '${action}'`, posOf(raw, 'meta'), `use one of: ${[...META_ACTIONS].join(', ')}`);
    // `end_host` is Ansible's name for kplay's `end_cluster`.
    const node: MetaNode = { ...common(raw, pos, scope, opts), kind: 'meta', action: (action === 'end_host' ? 'end_cluster' : action) as MetaNode['action'] };
    return node;
  }
  // A module task.
  const moduleKeys = Object.keys(raw).filter((k) => !(k in TASK_KEYWORDS) && k !== withLoop?.key);
  if (moduleKeys.length === 0) {
    throw new InputError('task has no module: add one module key (e.g. `debug: {msg: hi}`)', pos, `modules: ${opts.registry.names().join(', ')}`);
  }
  for (const k of moduleKeys) {
    if (!opts.registry.has(k)) {
      const sugg = [...opts.registry.suggest(k), ...closestKeyword(k)];
      throw new InputError(`unknown module or keyword '${k}'`, posOf(raw, k), sugg.length ? `did you mean: ${sugg.join(', ')}?` : `modules: ${opts.registry.names().join(', ')}`);
    }
  }
  if (moduleKeys.length > 1) throw new InputError(`task has several modules (${moduleKeys.join(', ')}): use exactly one per task`, posOf(raw, moduleKeys[1]));
  if (!scope.handler && 'listen' in raw) throw new InputError('`listen` is only valid on handlers', posOf(raw, 'listen'));
  validateKeywords(raw, pos);
  const name = moduleKeys[0] ?? '';
  const mod = opts.registry.get(name) as AnyModule;
  await opts.registry.prepare(name);
  const c = common(raw, pos, scope, opts);
  const defaults = moduleDefaultsFor(c.moduleDefaults, name);
  const args = normaliseArgs(mod, raw[name], raw, name, isObj(raw.args) ? raw.args : undefined, defaults);
  for (const k of ['until', 'failed_when', 'changed_when'] as const) {
    for (const cond of conditionList(raw[k])) templar.checkCondition(cond, { where: posOf(raw, k) });
  }
  const { loop, loopLookup } = loopOf(raw);
  if (raw.loop !== undefined) templar.check(raw.loop, { where: posOf(raw, 'loop') });
  for (const k of ['retries', 'delay', 'async', 'poll'] as const) if (typeof raw[k] === 'string') templar.check(raw[k], { where: posOf(raw, k) });
  const task: ModuleTask = {
    ...c,
    kind: 'task',
    module: name,
    args,
    loop,
    loopLookup,
    loopControl: loopControlOf(raw),
    register: typeof raw.register === 'string' ? raw.register : undefined,
    until: raw.until,
    retries: typeof raw.retries === 'number' || typeof raw.retries === 'string' ? raw.retries : undefined,
    delay: typeof raw.delay === 'number' || typeof raw.delay === 'string' ? raw.delay : undefined,
    async: typeof raw.async === 'number' || typeof raw.async === 'string' ? raw.async : undefined,
    poll: typeof raw.poll === 'number' || typeof raw.poll === 'string' ? raw.poll : undefined,
    failedWhen: raw.failed_when,
    changedWhen: raw.changed_when,
    notify: toList(raw.notify),
    listen: toList(raw.listen),
  };
  return task;
}

function closestKeyword(k: string): string[] {
  return Object.keys(TASK_KEYWORDS).filter((kw) => kw !== k && (kw.startsWith(k) || k.startsWith(kw) || lev1(kw, k)));
}

function lev1(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 2) return false;
  let diff = 0;
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) diff++;
  return diff <= 2;
}

function loopControlOf(raw: Obj): ModuleTask['loopControl'] {
  const lc = isObj(raw.loop_control) ? raw.loop_control : {};
  return {
    loopVar: typeof lc.loop_var === 'string' ? lc.loop_var : 'item',
    label: typeof lc.label === 'string' ? lc.label : undefined,
    indexVar: typeof lc.index_var === 'string' ? lc.index_var : undefined,
    pause: typeof lc.pause === 'number' ? lc.pause : undefined,
    extended: yaml11Bool(lc.extended) === true ? true : undefined,
  };
}

/** `key:` with no value is the keyword left unset (as Ansible reads it): checked as absent. */
function withoutNulls(raw: Obj): Obj {
  if (!Object.values(raw).some((v) => v === null)) return raw;
  return Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== null));
}

function validateKeywords(raw: Obj, pos: SourcePos): void {
  const validate = compileSchema(taskKeywordSchema());
  if (validate(withoutNulls(raw))) return;
  const e = (validate.errors ?? [])[0];
  if (!e) throw new InputError('invalid task keywords', pos);
  const p = e.instancePath.slice(1).split('/').filter(Boolean);
  throw new InputError(describeAjvError(e, 'task'), posOfPath(raw, p) ?? pos);
}

/** Modules whose free-form string is a command line: only their few `key=value` options are taken out of it (Ansible's RAW_PARAM_MODULES). */
const RAW_MODULES = new Set(['command', 'shell', 'script', 'raw']);
const RAW_OPTIONS = new Set(['chdir', 'creates', 'removes', 'executable', 'stdin', 'stdin_add_newline', 'strip_empty_ends', 'argv']);

/**
 * A free-form string as Ansible splits it: `key=value` pairs naming the module's arguments become
 * arguments (`file: path=/x state=touch`); the rest is the free-form argument.
 */
function freeFormArgs(mod: AnyModule, value: string): Obj | undefined {
  const props = isObj(mod.schema.properties) ? mod.schema.properties : {};
  if (RAW_MODULES.has(mod.name)) {
    const { kv, rest } = parseKv(value, (k) => RAW_OPTIONS.has(k) && k in props);
    if (Object.keys(kv).length === 0 || !mod.freeForm) return undefined;
    return { ...kv, [mod.freeForm]: rest };
  }
  const { kv, rest } = parseKv(value);
  const keys = Object.keys(kv);
  if (keys.length === 0) return undefined;
  if (!keys.every((k) => k in props)) return undefined;
  if (rest === '') return kv;
  return mod.freeForm ? { ...kv, [mod.freeForm]: rest } : undefined;
}

/**
 * Normalise a module's arguments and check what can be checked without variables. `extra`: the
 * task's `args:` (the module key's arguments win); `defaults`: `module_defaults` that apply (the
 * task's arguments win; checked together, applied again at run time once rendered).
 */
function normaliseArgs(mod: AnyModule, value: unknown, raw: Obj, key: string, extra: Obj | undefined, defaults: unknown[] | undefined): unknown {
  const where = posOf(raw, key);
  let args: unknown = value;
  // what is checked: module_defaults under the arguments, Ansible's boolean spellings read as booleans
  const withDefaults = (given: Obj): Obj => {
    const merged: Obj = defaults ? (Object.assign({}, ...defaults.filter(isObj), given) as Obj) : given;
    if (merged !== given) copyPos(given, merged);
    return ansibleBooleans(mod.schema, merged) as Obj;
  };
  if (value === null || value === undefined) args = extra ? { ...extra } : {};
  else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    if (typeof value === 'string' && /^\s*\{\{[^]*\}\}\s*$/.test(value) && !mod.freeForm) {
      templar.check(value, { where });
      return value; // the whole argument map comes from a template
    }
    const split = typeof value === 'string' ? freeFormArgs(mod, value) : undefined;
    if (!mod.freeForm && !split) throw new InputError(`${mod.name}: arguments must be a map`, where, `see \`kplay modules ${mod.name}\``);
    args = { ...(extra ?? {}), ...(split ?? { [mod.freeForm as string]: value }) };
    templar.check(args, { where });
    staticValidate(mod, withDefaults(args as Obj), where, raw, key);
    return args;
  } else if (!isObj(value)) {
    throw new InputError(`${mod.name}: arguments must be a map`, where, `see \`kplay modules ${mod.name}\``);
  } else if (extra) {
    args = { ...extra, ...value };
    copyPos(value, args as Obj);
  }
  templar.check(args, { where });
  staticValidate(mod, withDefaults(args as Obj), where, value, undefined);
  return args;
}

/**
 * Validate module arguments before templating: errors about templated values are ignored (their
 * type is only known at run time); unknown keys and missing required keys are always reported.
 */
export function staticValidate(mod: AnyModule, args: unknown, where: SourcePos | undefined, root: unknown, key: string | undefined): void {
  // Same rules and the same compiled validator as at run time (defaults and coercion on a copy;
  // the loaded value keeps its positions): one schema compilation per module and process.
  const checked = validateArgs(mod.schema, args, { defaults: true });
  if (checked.ok) return;
  const errors = checked.errors.filter((e) => {
    const segs = e.instancePath.slice(1).split('/').filter(Boolean).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    let cur: unknown = args;
    if (Templar.isTemplated(cur)) return false;
    for (const s of segs) {
      if (cur === null || typeof cur !== 'object') break;
      cur = (cur as Obj)[s];
      if (Templar.isTemplated(cur)) return false;
    }
    if (Templar.isTemplated(cur)) return false;
    // oneOf/anyOf summaries are noise when a branch error is also present.
    return !(e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if');
  });
  if (errors.length === 0) return;
  const rank = (k: string): number => (k === 'additionalProperties' ? 0 : k === 'required' ? 1 : 2);
  const e = errors.sort((a, b) => rank(a.keyword) - rank(b.keyword))[0];
  if (!e) return;
  const segs = e.instancePath.slice(1).split('/').filter(Boolean);
  if (e.keyword === 'additionalProperties') segs.push(String((e.params as Obj).additionalProperty));
  const base = key === undefined ? [] : [key];
  const pos = posOfPath(root, [...base, ...segs]) ?? where;
  throw new InputError(describeAjvError(e, mod.name), pos, `see \`kplay modules ${mod.name}\``);
}

/** Load a task file (for import_tasks statically, and for include_tasks at run time). */
export async function loadTaskFile(file: string, scope: Scope, opts: LoadOptions, from: SourcePos): Promise<TaskNode[]> {
  if (scope.stack.includes(file)) throw new InputError(`task file include cycle: ${[...scope.stack, file].map((f) => path.basename(f)).join(' → ')}`, from);
  const { value, secrets } = await loadYamlDoc(file, from);
  scope.roles.addSecrets(secrets);
  if (value === null) return [];
  if (!Array.isArray(value)) throw new InputError('a task file must be a list of tasks', posOf(value) ?? { file, line: 1, col: 1 });
  return normaliseList(value, { ...scope, baseDir: path.dirname(file), stack: [...scope.stack, file] }, opts);
}

/** Scope used to load an include_tasks file at run time (`roles`: the play run's collector). */
export function includeScope(node: IncludeNode, roles: RoleCollector): Scope {
  return { baseDir: node.baseDir, tags: node.tags, blockVars: node.vars ? [...node.blockVars, node.vars] : node.blockVars, stack: [], handler: false, role: node.role, roles, inherit: node.parentInherit };
}

/** Scope used to expand an `include_role` at run time. */
export function includeRoleScope(node: IncludeRoleNode, roles: RoleCollector): Scope {
  return { baseDir: node.baseDir, tags: node.tags, blockVars: node.blockVars, stack: [], handler: false, role: node.role, roles, inherit: node.parentInherit };
}

/**
 * Playbook loading: YAML → schema check → normalised plays and task trees (see `types.ts`).
 * Everything static is checked here, before any cluster is contacted: structure, unknown
 * modules and keywords, module arguments that are not templated, template syntax, handler
 * references, and `import_tasks` / `import_playbook` files (with cycle detection).
 */
import path from 'node:path';
import { InputError, type SourcePos } from '../load/errors.js';
import { validateOrThrow, compileSchema, describeAjvError, validateArgs } from '../load/schema.js';
import { loadYamlDoc, posOf, posOfPath } from '../load/yaml.js';
import type { ModuleRegistry } from '../sdk/registry.js';
import type { AnyModule } from '../sdk/module.js';
import { templar, Templar } from '../template/index.js';
import { basePlaybookSchema, BLOCK_KEYS, TASK_KEYWORDS, taskKeywordSchema } from './schema.js';
import type { BlockNode, IncludeNode, MetaNode, ModuleTask, Play, Playbook, TaskCommon, TaskNode } from './types.js';

type Obj = Record<string, unknown>;

const META_ACTIONS = new Set(['flush_handlers', 'end_play', 'end_cluster', 'end_host', 'noop', 'clear_facts']);
const INCLUDE_KEYS = new Set(['name', 'when', 'tags', 'vars', 'loop', 'loop_control', 'include_tasks', 'import_tasks']);
const META_KEYS = new Set(['name', 'when', 'tags', 'meta']);

/** Inherited context while normalising a task list. */
interface Scope {
  baseDir: string;
  tags: string[];
  blockVars: Obj[];
  /** Task files being imported (cycle detection). */
  stack: string[];
  handler: boolean;
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
  validateOrThrow(basePlaybookSchema(), value, 'playbook', { root: value, fallbackPos: posFallback(file) });
  const plays: Play[] = [];
  for (const [i, entry] of (value as Obj[]).entries()) {
    const where = posOf(value, i) ?? posFallback(file);
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

async function normalisePlay(raw: Obj, file: string, index: number, opts: LoadOptions, secrets: string[], stack: string[]): Promise<Play> {
  const baseDir = path.dirname(file);
  const pos = posOf(raw) ?? posFallback(file);
  const tags = toList(raw.tags);
  const scope: Scope = { baseDir, tags, blockVars: [], stack, handler: false };
  const serial = raw.serial === undefined ? undefined : Array.isArray(raw.serial) ? (raw.serial as (number | string)[]) : [raw.serial as number | string];
  const name = typeof raw.name === 'string' ? raw.name : `play ${index + 1}`;
  if (raw.vars !== undefined) templar.check(raw.vars, { where: posOf(raw, 'vars') });
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
  const play: Play = {
    name,
    hosts: raw.hosts as string | string[],
    serial,
    maxFailPercentage: typeof raw.max_fail_percentage === 'number' ? raw.max_fail_percentage : undefined,
    anyErrorsFatal: raw.any_errors_fatal === true,
    vars: isObj(raw.vars) ? raw.vars : {},
    varsFiles,
    varsFromFiles: filesVars,
    tags,
    preTasks: await section('pre_tasks'),
    tasks: await section('tasks'),
    postTasks: await section('post_tasks'),
    handlers: handlers.map((h) => {
      if (h.kind !== 'task') throw new InputError('handlers must be module tasks (no block, include or meta)', h.pos);
      if (!h.name && h.listen.length === 0) throw new InputError('a handler needs a `name` (or `listen`) so tasks can notify it', h.pos);
      return h;
    }),
    baseDir,
    pos,
  };
  checkNotifications(play);
  return play;
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

function common(raw: Obj, pos: SourcePos, scope: Scope): TaskCommon {
  const name = typeof raw.name === 'string' ? raw.name : undefined;
  if (name) templar.check(name, { where: posOf(raw, 'name') });
  const when = conditionList(raw.when);
  for (const c of when) templar.checkCondition(c, { where: posOf(raw, 'when') });
  if (isObj(raw.vars)) templar.check(raw.vars, { where: posOf(raw, 'vars') });
  return {
    name,
    when,
    tags: [...new Set([...scope.tags, ...toList(raw.tags)])],
    vars: isObj(raw.vars) ? raw.vars : undefined,
    blockVars: scope.blockVars,
    checkMode: typeof raw.check_mode === 'boolean' ? raw.check_mode : undefined,
    ignoreErrors: raw.ignore_errors,
    noLog: raw.no_log === true ? true : undefined,
    runOnce: raw.run_once === true ? true : undefined,
    timeout: typeof raw.timeout === 'number' ? raw.timeout : undefined,
    baseDir: scope.baseDir,
    pos,
  };
}

function unknownKeyError(raw: Obj, key: string, allowed: Iterable<string>, what: string): InputError {
  return new InputError(`${what}: unknown key '${key}'`, posOf(raw, key), `allowed here: ${[...allowed].join(', ')}`);
}

async function normaliseTask(raw: Obj, pos: SourcePos, scope: Scope, opts: LoadOptions): Promise<TaskNode> {
  // Blocks.
  if ('block' in raw) {
    for (const k of Object.keys(raw)) if (!BLOCK_KEYS.has(k)) throw unknownKeyError(raw, k, BLOCK_KEYS, 'block');
    validateKeywords(raw, pos);
    const c = common(raw, pos, scope);
    const inner: Scope = { ...scope, tags: c.tags, blockVars: c.vars ? [...scope.blockVars, c.vars] : scope.blockVars };
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
  // Static and dynamic task file inclusion.
  if ('import_tasks' in raw || 'include_tasks' in raw) {
    for (const k of Object.keys(raw)) if (!INCLUDE_KEYS.has(k)) throw unknownKeyError(raw, k, INCLUDE_KEYS, 'include');
    validateKeywords(raw, pos);
    const c = common(raw, pos, scope);
    const dynamic = 'include_tasks' in raw;
    const fileRaw = raw[dynamic ? 'include_tasks' : 'import_tasks'];
    if (typeof fileRaw !== 'string' || !fileRaw) throw new InputError(`\`${dynamic ? 'include_tasks' : 'import_tasks'}\` needs a file name`, pos);
    const loopControl = loopControlOf(raw);
    if (dynamic) {
      templar.check(fileRaw, { where: posOf(raw, 'include_tasks') });
      if (raw.loop !== undefined) templar.check(raw.loop, { where: posOf(raw, 'loop') });
      const node: IncludeNode = { ...c, kind: 'include', file: fileRaw, loop: raw.loop, loopControl };
      if (!Templar.isTemplated(fileRaw)) {
        // Check the file statically now (it is loaded again, per cluster, at run time).
        await loadTaskFile(path.resolve(scope.baseDir, fileRaw), { ...scope, tags: c.tags }, opts, posOf(raw, 'include_tasks') ?? pos);
      }
      return node;
    }
    if (Templar.isTemplated(fileRaw)) throw new InputError('import_tasks is static and cannot be templated; use include_tasks', posOf(raw, 'import_tasks'));
    if (raw.loop !== undefined) throw new InputError('import_tasks cannot loop; use include_tasks', posOf(raw, 'loop'));
    const target = path.resolve(scope.baseDir, fileRaw);
    const inner: Scope = { ...scope, tags: c.tags, blockVars: c.vars ? [...scope.blockVars, c.vars] : scope.blockVars };
    const tasks = await loadTaskFile(target, inner, opts, posOf(raw, 'import_tasks') ?? pos);
    const node: BlockNode = { ...c, name: c.name ?? `import_tasks: ${fileRaw}`, kind: 'block', block: tasks, rescue: [], always: [] };
    return node;
  }
  if ('meta' in raw) {
    for (const k of Object.keys(raw)) if (!META_KEYS.has(k)) throw unknownKeyError(raw, k, META_KEYS, 'meta');
    const action = String(raw.meta);
    if (!META_ACTIONS.has(action)) throw new InputError(`unknown meta action '${action}'`, posOf(raw, 'meta'), `use one of: ${[...META_ACTIONS].join(', ')}`);
    // `end_host` is Ansible's name for kplay's `end_cluster`.
    const node: MetaNode = { ...common(raw, pos, scope), kind: 'meta', action: (action === 'end_host' ? 'end_cluster' : action) as MetaNode['action'] };
    return node;
  }
  // A module task.
  const moduleKeys = Object.keys(raw).filter((k) => !(k in TASK_KEYWORDS));
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
  const args = normaliseArgs(mod, raw[name], raw, name);
  const c = common(raw, pos, scope);
  for (const k of ['until', 'failed_when', 'changed_when'] as const) {
    for (const cond of conditionList(raw[k])) templar.checkCondition(cond, { where: posOf(raw, k) });
  }
  if (raw.loop !== undefined) templar.check(raw.loop, { where: posOf(raw, 'loop') });
  const task: ModuleTask = {
    ...c,
    kind: 'task',
    module: name,
    args,
    loop: raw.loop,
    loopControl: loopControlOf(raw),
    register: typeof raw.register === 'string' ? raw.register : undefined,
    until: raw.until,
    retries: typeof raw.retries === 'number' ? raw.retries : undefined,
    delay: typeof raw.delay === 'number' ? raw.delay : undefined,
    failedWhen: raw.failed_when,
    changedWhen: raw.changed_when,
    notify: toList(raw.notify),
    listen: toList(raw.listen),
  };
  if (task.until === undefined && task.retries !== undefined) {
    throw new InputError('`retries` without `until`: nothing decides when to stop retrying', posOf(raw, 'retries'), 'add `until: <condition>`');
  }
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
  };
}

function validateKeywords(raw: Obj, pos: SourcePos): void {
  const validate = compileSchema(taskKeywordSchema());
  if (validate(raw)) return;
  const e = (validate.errors ?? [])[0];
  if (!e) throw new InputError('invalid task keywords', pos);
  const p = e.instancePath.slice(1).split('/').filter(Boolean);
  throw new InputError(describeAjvError(e, 'task'), posOfPath(raw, p) ?? pos);
}

/** Normalise a module's arguments and check what can be checked without variables. */
function normaliseArgs(mod: AnyModule, value: unknown, raw: Obj, key: string): unknown {
  const where = posOf(raw, key);
  let args: unknown = value;
  if (value === null || value === undefined) args = {};
  else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    if (typeof value === 'string' && /^\s*\{\{[^]*\}\}\s*$/.test(value) && !mod.freeForm) {
      templar.check(value, { where });
      return value; // the whole argument map comes from a template
    }
    if (!mod.freeForm) throw new InputError(`${mod.name}: arguments must be a map`, where, `see \`kplay modules ${mod.name}\``);
    args = { [mod.freeForm]: value };
    templar.check(value, { where });
    staticValidate(mod, args, where, raw, key);
    return args;
  } else if (!isObj(value)) {
    throw new InputError(`${mod.name}: arguments must be a map`, where, `see \`kplay modules ${mod.name}\``);
  }
  templar.check(args, { where });
  staticValidate(mod, args, where, value, undefined);
  return args;
}

/**
 * Validate module arguments before templating: errors about templated values are ignored (their
 * type is only known at run time); unknown keys and missing required keys are always reported.
 */
export function staticValidate(mod: AnyModule, args: unknown, where: SourcePos | undefined, root: unknown, key: string | undefined): void {
  // Same rules as at run time (coercion is tried on a copy; the loaded value keeps its positions).
  const checked = validateArgs(mod.schema, args);
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
  const { value } = await loadYamlDoc(file, from);
  if (value === null) return [];
  if (!Array.isArray(value)) throw new InputError('a task file must be a list of tasks', posOf(value) ?? { file, line: 1, col: 1 });
  return normaliseList(value, { ...scope, baseDir: path.dirname(file), stack: [...scope.stack, file] }, opts);
}

/** Scope used to load an include_tasks file at run time. */
export function includeScope(node: IncludeNode): Scope {
  return { baseDir: node.baseDir, tags: node.tags, blockVars: node.vars ? [...node.blockVars, node.vars] : node.blockVars, stack: [], handler: false };
}

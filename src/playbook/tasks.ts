/**
 * The task-list reader: each task of a list goes to the parser of its node kind (a table: block,
 * include/import_tasks, include/import_role, meta; anything else is a module task), after Ansible's
 * spellings are made kplay's (`ansible.builtin.debug` → `debug`, `action:` → the module key).
 * Also what the executor needs to read at run time: task files of `include_tasks`, roles of
 * `include_role`, and their scopes.
 */
import { isRecord } from '../core/shape.js';
import path from 'node:path';
import { InputError, type SourcePos } from '../load/errors.js';
import { loadYamlDoc, posOf } from '../load/yaml.js';
import { canonicalTask, withLookup } from './keywords.js';
import { parseBlock } from './nodes/block.js';
import { knownAction, posFallback, type LoadOptions, type NodeParser, type Obj, type ParseContext, type RoleCollector, type Scope } from './nodes/context.js';
import { parseInclude } from './nodes/include.js';
import { parseMeta } from './nodes/meta.js';
import { parseModuleTask } from './nodes/module.js';
import { parseRoleTask } from './nodes/role.js';
import { expandRole as expandRoleIn, type RoleSpec } from './role-expand.js';
import type { BlockNode, IncludeNode, IncludeRoleNode, TaskCommon, TaskNode } from './types.js';

/**
 * The parsers of the task nodes, tried in order: the first whose key the task has reads it. A
 * block is recognised as written; the others after `canonicalTask` (so `ansible.builtin.include_tasks`
 * is an include). A task none of them takes is a module task.
 */
const NODE_PARSERS: readonly { keys: readonly string[]; asWritten: boolean; parse: NodeParser }[] = [
  { keys: ['block'], asWritten: true, parse: parseBlock },
  { keys: ['import_tasks', 'include_tasks'], asWritten: false, parse: parseInclude },
  { keys: ['import_role', 'include_role'], asWritten: false, parse: parseRoleTask },
  { keys: ['meta'], asWritten: false, parse: parseMeta },
];

/** The context the parsers read nested lists and files through. */
function contextOf(opts: LoadOptions): ParseContext {
  return { opts, list: (list, scope) => normaliseList(list, scope, opts), file: (file, scope, from) => loadTaskFile(file, scope, opts, from) };
}

/** Read a list of tasks. */
export async function normaliseList(list: unknown[], scope: Scope, opts: LoadOptions): Promise<TaskNode[]> {
  const out: TaskNode[] = [];
  for (const [i, raw] of list.entries()) {
    const where = posOf(list, i) ?? posFallback(scope.baseDir);
    if (!isRecord(raw)) throw new InputError('a task must be a map (e.g. `- name: …` followed by one module)', where);
    out.push(await normaliseTask(raw, where, scope, opts));
  }
  return out;
}

/** Read one task with the parser of its kind. */
async function normaliseTask(original: Obj, pos: SourcePos, scope: Scope, opts: LoadOptions): Promise<TaskNode> {
  const ctx = contextOf(opts);
  const written = NODE_PARSERS.find((p) => p.asWritten && p.keys.some((k) => k in original));
  if (written) return written.parse(original, { pos, scope, ctx, withLoop: undefined });
  // `ansible.builtin.debug` → `debug`, `action: …` → the module key, with_<lookup> → a loop.
  const raw = canonicalTask(original, knownAction(opts));
  const withLoop = withLookup(raw);
  const parser = NODE_PARSERS.find((p) => !p.asWritten && p.keys.some((k) => k in raw));
  return (parser?.parse ?? parseModuleTask)(raw, { pos, scope, ctx, withLoop });
}

/**
 * Expand one use of a role into a block (see `role-expand.ts`). Returns undefined for a static
 * role already used with the same parameters.
 */
export function expandRole(spec: RoleSpec, c: TaskCommon, scope: Scope, opts: LoadOptions, pos: SourcePos, raw: Obj | undefined, dynamic = false): Promise<BlockNode | undefined> {
  return expandRoleIn(spec, c, scope, contextOf(opts), pos, raw, dynamic);
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

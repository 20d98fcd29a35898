/**
 * What the task-node parsers share: the scope a task list is read in (inherited tags, block
 * variables, the role, the keywords the play and blocks pass on), the role collector of the play
 * being read, and the {@link ParseContext} through which a parser reads nested task lists and
 * task files (so the parsers and the reader that dispatches to them import no cycle).
 */
import type { SourcePos } from '../../load/errors.js';
import type { ModuleRegistry } from '../../plugins/registry.js';
import type { Inherited } from '../keywords.js';
import { KEYWORD_ACTIONS } from '../names.js';
import type { ModuleTask, RoleUse, TaskNode } from '../types.js';

/** A map as read from YAML. */
export type Obj = Record<string, unknown>;

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
  /** The file names of the includes/imports being read, innermost first, since the role (or play) began. */
  includes?: readonly string[];
  roles: RoleCollector;
  /** Keywords the play and enclosing blocks pass on (no_log, environment, module_defaults, …). */
  inherit: Inherited;
  /** Inside a `block:` that has a `rescue:` (a task failure there is handled). */
  rescued?: boolean;
}

/** What loading needs from the rest of kplay. */
export interface LoadOptions {
  registry: ModuleRegistry;
  /** The extra vars (`-e`): templated `vars_files` entries are rendered with them, as ansible-playbook does. */
  extraVars?: Record<string, unknown>;
  /** Where a warning of the load goes (ansible-core's `[WARNING]`s: a skipped `vars_files` entry, a duplicate key). */
  warn?: (msg: string) => void;
}

/** How a parser reads what a node contains (given by the reader in `tasks.ts`). */
export interface ParseContext {
  opts: LoadOptions;
  /** Read a list of tasks in `scope`. */
  list(list: unknown[], scope: Scope): Promise<TaskNode[]>;
  /** Load and read a task file (cycles are refused); `from` is where it is named. */
  file(file: string, scope: Scope, from: SourcePos): Promise<TaskNode[]>;
}

/** A `with_<lookup>:` key of a task and its lookup. */
export type WithLoop = { key: string; lookup: string } | undefined;

/** One task node to read: where it is, its scope, its `with_<lookup>` loop. */
export interface NodeInput {
  pos: SourcePos;
  scope: Scope;
  ctx: ParseContext;
  withLoop: WithLoop;
}

/** Reads one kind of task node (a block, an include, a role task, meta, a module task). */
export type NodeParser = (raw: Obj, at: NodeInput) => Promise<TaskNode>;

/** A string list keyword (`tags`, `notify`): a list, or a comma-separated string. */
export function toList(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.map(String);
  return String(v)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A condition keyword (`when`, `until`, …) as a list. */
export function conditionList(v: unknown): unknown[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

/** The position of a node whose own is unknown: the file. */
export const posFallback = (file: string): SourcePos => ({ file, line: 0, col: 0 });

/** Keywords accepted for Ansible compatibility that change nothing in kplay. */
export const NO_EFFECT = new Set(['become', 'become_user', 'become_method', 'become_flags', 'become_exe', 'connection', 'remote_user', 'port', 'gather_subset', 'gather_timeout', 'fact_path', 'collections', 'strategy']);

/** Whether `short` is an action kplay has: a registry module or a keyword action. */
export function knownAction(opts: LoadOptions): (short: string) => boolean {
  return (short) => opts.registry.has(short) || KEYWORD_ACTIONS.has(short);
}

/** The items of a task (`loop:`, or the terms of its `with_<lookup>:`). */
export function loopOf(raw: Obj, withLoop: WithLoop): { loop?: unknown; loopLookup?: string } {
  return withLoop ? { loop: raw[withLoop.key], loopLookup: withLoop.lookup } : { loop: raw.loop };
}

/** The keys a node kind accepts, with its `with_<lookup>:` key. */
export function allowedWith(keys: ReadonlySet<string>, withLoop: WithLoop): ReadonlySet<string> {
  return withLoop ? new Set([...keys, withLoop.key]) : keys;
}

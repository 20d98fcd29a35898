/**
 * The loaded, normalised playbook: plays and task trees, each node remembering where it
 * came from (`pos`) so every error can point at `file:line:col`.
 */
import type { SourcePos } from '../load/errors.js';

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
  /** Force check mode on (`true`) or off (`false`) for this node. */
  checkMode?: boolean;
  ignoreErrors?: unknown;
  noLog?: boolean;
  runOnce?: boolean;
  /** Seconds. */
  timeout?: number;
  /** Directory relative paths are resolved against (the file that holds the node). */
  baseDir: string;
  pos: SourcePos;
}

/** A task that runs one module. */
export interface ModuleTask extends TaskCommon {
  kind: 'task';
  module: string;
  /** Raw (untemplated) arguments, normalised to a map or a template string. */
  args: unknown;
  loop?: unknown;
  loopControl: { loopVar: string; label?: string; indexVar?: string; pause?: number };
  register?: string;
  until?: unknown;
  retries?: number;
  delay?: number;
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
  loop?: unknown;
  loopControl: { loopVar: string; label?: string; indexVar?: string; pause?: number };
}

/** `meta: flush_handlers | end_play | end_cluster | noop`. */
export interface MetaNode extends TaskCommon {
  kind: 'meta';
  action: 'flush_handlers' | 'end_play' | 'end_cluster' | 'noop' | 'clear_facts';
}

export type TaskNode = ModuleTask | BlockNode | IncludeNode | MetaNode;

/** `serial` entries: a count or a percentage string like `"30%"`. */
export type SerialSpec = (number | string)[];

/** One play. */
export interface Play {
  name: string;
  hosts: string | string[];
  serial?: SerialSpec;
  maxFailPercentage?: number;
  anyErrorsFatal: boolean;
  vars: Record<string, unknown>;
  varsFiles: string[];
  /** The variables of `varsFiles`, loaded and merged in order when the playbook loads. */
  varsFromFiles: Record<string, unknown>;
  tags: string[];
  preTasks: TaskNode[];
  tasks: TaskNode[];
  postTasks: TaskNode[];
  handlers: ModuleTask[];
  baseDir: string;
  pos: SourcePos;
}

/** A loaded playbook (imports flattened). */
export interface Playbook {
  file: string;
  dir: string;
  plays: Play[];
  /** Scalars tagged `!secret` in any loaded file. */
  secrets: string[];
}

/** A task's keywords rendered for one cluster: `no_log`, `check_mode` (and a repair run's), `diff`, `environment`. */
import type { ModuleTask } from '../playbook/types.js';
import { templar } from '../template/index.js';
import type { RunOptions } from './state.js';
import type { TaskHost, TaskKeywords } from './task-types.js';

type Obj = Record<string, unknown>;

/** Python's `str()` of an environment value. */
function envString(v: unknown): string {
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** Render the keywords of `task` for one cluster (`no_log`, `check_mode`, `diff`, `environment`). */
export async function taskKeywords(task: ModuleTask, pr: TaskHost, vars: Obj): Promise<TaskKeywords> {
  const opts = pr.opts;
  const hide = task.noLog !== undefined && pr.truthy(task.noLog, vars);
  const forced = task.checkMode === undefined ? undefined : pr.truthy(task.checkMode, vars);
  const check = taskCheckMode(task, opts, forced);
  const diff = task.diff === undefined ? opts.diff : pr.truthy(task.diff, vars);
  const environment: Record<string, string> = {};
  for (const spec of task.environment) {
    const v = typeof spec === 'string' ? await templar.render(spec, vars, { where: task.pos }) : await templar.renderValue(spec, vars, { where: task.pos });
    if (v === null || v === undefined || v === '') continue;
    if (typeof v !== 'object' || Array.isArray(v)) throw new Error(`environment must be a map of variables, got ${JSON.stringify(v)?.slice(0, 80)}`);
    for (const [k, x] of Object.entries(v as Obj)) environment[k] = envString(x);
  }
  return { hide, check, diff, environment };
}

/**
 * Whether a task runs in check mode: its own `check_mode`, else the run's; in a repair run
 * (`kplay drift --repair`) only the modules that declare state (`opts.repair`) change anything.
 */
export function taskCheckMode(task: ModuleTask, opts: RunOptions, forced: boolean | undefined): boolean {
  if (forced !== undefined) return forced || opts.repair !== undefined;
  if (opts.repair) return !opts.repair.has(task.module);
  return opts.check;
}

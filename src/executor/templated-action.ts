/**
 * A task whose `action:` names its module with a template (`action: "{{ module_to_run }}"`): as
 * ansible-core's `Task._post_validate_args`, the name is rendered when the task runs (after its
 * `when`), resolved to a module, and the arguments are read and checked for that module then. What
 * goes wrong there fails the task (with ansible-core's message where it has one).
 */
import { errorMessage, InputError } from '../load/errors.js';
import { moduleDefaultsFor } from '../playbook/keywords.js';
import { normaliseArgs } from '../playbook/module-args.js';
import { KEYWORD_ACTIONS, resolveAction } from '../playbook/names.js';
import type { ModuleTask } from '../playbook/types.js';
import type { ModuleRegistry } from '../plugins/registry.js';
import { templar } from '../template/index.js';

/**
 * The task with its module resolved (`module` the registry name, `args` normalised), or why it
 * fails: ansible-core's `Task failed: Cannot resolve '<name>' to an action or module.` for a name it does not
 * know, kplay's reason for one kplay does not implement.
 */
export async function resolveTemplatedAction(task: ModuleTask, vars: Record<string, unknown>, registry: ModuleRegistry): Promise<ModuleTask | string> {
  let rendered: unknown;
  try {
    rendered = await templar.render(task.module, vars, { where: task.pos });
  } catch (e) {
    return errorMessage(e);
  }
  if (rendered === null || rendered === undefined || rendered === '') return 'Omit is not valid for the `action` keyword.';
  const written = String(rendered).trim();
  const r = resolveAction(written, (short) => registry.has(short) || KEYWORD_ACTIONS.has(short));
  if (r.kind === 'unsupported') return r.why;
  if (r.kind === 'unknown') return `Task failed: Cannot resolve '${written}' to an action or module.`;
  if (KEYWORD_ACTIONS.has(r.name)) return `a templated \`action\` that names '${r.name}' is not supported by kplay: write \`${r.name}:\` as the task's key`;
  const mod = await registry.load(r.name);
  if (!mod) return `Task failed: Cannot resolve '${written}' to an action or module.`;
  await registry.prepare(r.name);
  const raw: Record<string, unknown> = { [r.name]: task.args };
  try {
    const args = normaliseArgs(mod, task.args, raw, r.name, task.templatedAction?.extra, moduleDefaultsFor(task.moduleDefaults, r.name), ignoreHere);
    const { templatedAction: _resolved, ...rest } = task;
    return { ...rest, module: r.name, args };
  } catch (e) {
    if (e instanceof InputError) return e.describe();
    throw e;
  }
}

/** The arguments' check against the module's schema is left to the run-time check (its message is ansible-core's). */
const ignoreHere = (): void => undefined;

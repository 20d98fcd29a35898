/**
 * A module task: exactly one module key (a registry module) with its arguments (see
 * `module-args.ts`) and the task keywords (declared in `syntax.ts`): loops, retries, async,
 * conditions, register, notify.
 */
import { isRecord } from '../../core/shape.js';
import { InputError } from '../../load/errors.js';
import { posOf } from '../../load/yaml.js';
import type { AnyModule } from '../../core/module.js';
import { templar } from '../../template/index.js';
import { moduleDefaultsFor, TEMPLATED_ACTION, templatedActionOf, type TemplatedAction } from '../keywords.js';
import { normaliseArgs } from '../module-args.js';
import { TASK_KEYWORDS } from '../syntax.js';
import type { ModuleTask, TaskCommon } from '../types.js';
import { closestKeyword, common, loopControlOf, validateKeywords } from './common.js';
import { conditionList, loopOf, toList, type NodeInput, type Obj, type WithLoop } from './context.js';

/** Read a module task. */
export async function parseModuleTask(raw: Obj, at: NodeInput): Promise<ModuleTask> {
  const { pos, scope, ctx, withLoop } = at;
  const templated = templatedActionOf(raw);
  const moduleKeys = Object.keys(raw).filter((k) => !(k in TASK_KEYWORDS) && k !== withLoop?.key && !(templated && k === TEMPLATED_ACTION));
  if (templated) {
    if (moduleKeys.length > 0) throw new InputError(`task has several modules (a templated \`action\` and ${moduleKeys.join(', ')}): use exactly one per task`, posOf(raw, moduleKeys[0]));
    return templatedActionTask(raw, at, templated);
  }
  if (moduleKeys.length === 0) {
    throw new InputError('task has no module: add one module key (e.g. `debug: {msg: hi}`)', pos, `modules: ${ctx.opts.registry.names().join(', ')}`);
  }
  for (const k of moduleKeys) {
    if (!ctx.opts.registry.has(k)) {
      const sugg = [...ctx.opts.registry.suggest(k), ...closestKeyword(k)];
      throw new InputError(`unknown module or keyword '${k}'`, posOf(raw, k), sugg.length ? `did you mean: ${sugg.join(', ')}?` : `modules: ${ctx.opts.registry.names().join(', ')}`);
    }
  }
  if (moduleKeys.length > 1) throw new InputError(`task has several modules (${moduleKeys.join(', ')}): use exactly one per task`, posOf(raw, moduleKeys[1]));
  if (!scope.handler && 'listen' in raw) throw new InputError('`listen` is only valid on handlers', posOf(raw, 'listen'));
  validateKeywords(raw, pos);
  const name = moduleKeys[0] ?? '';
  const mod = (await ctx.opts.registry.load(name)) as AnyModule;
  await ctx.opts.registry.prepare(name);
  const c = common(raw, pos, scope, ctx.opts, true);
  const defaults = moduleDefaultsFor(c.moduleDefaults, name);
  let args: unknown;
  let deferredError: string | undefined;
  try {
    // An argument the module's spec refuses is an error ansible-core raises when the task runs. Where
    // the playbook handles a failure of this task (ignore_errors, failed_when, a rescue) it fails
    // then, as there (the run-time check gives the same message); elsewhere kplay refuses the
    // playbook before anything runs (README: a window must not stop half-way on a typo).
    const handled = scope.rescued === true || (c.ignoreErrors !== undefined && c.ignoreErrors !== false) || raw.failed_when !== undefined;
    const onArgError = handled ? (e: InputError): void => ctx.opts.warn?.(`${e.describe().split('\n')[0] ?? ''} (the task fails when it runs, as in ansible-core)`) : undefined;
    args = normaliseArgs(mod, raw[name], raw, name, isRecord(raw.args) ? raw.args : undefined, defaults, onArgError);
  } catch (e) {
    // a malformed template in the arguments is an error ansible-core raises when the task runs
    // (ignore_errors and rescue apply): the task fails then; loading says so as a warning
    if (!(e instanceof InputError) || !/^(?:template|expression) error in |^Action '[\w.]+' does not support raw params\.$/.test(e.message)) throw e;
    deferredError = e.describe();
    args = raw[name] ?? {};
    ctx.opts.warn?.(`${deferredError.split('\n')[0] ?? ''} (the task fails when it runs, as in ansible-core)`);
  }
  return { ...taskKeywordsOf(raw, c, withLoop), module: name, args, ...(deferredError !== undefined ? { deferredError } : {}) };
}

/**
 * A task whose `action:` names the module with a template (`action: "{{ module_to_run }}"`): as
 * ansible-core, the module is known when the task runs, and its arguments are checked then (see
 * src/executor/templated-action.ts).
 */
function templatedActionTask(raw: Obj, at: NodeInput, action: TemplatedAction): ModuleTask {
  if (!at.scope.handler && 'listen' in raw) throw new InputError('`listen` is only valid on handlers', posOf(raw, 'listen'));
  validateKeywords(raw, at.pos);
  const c = common(raw, at.pos, at.scope, at.ctx.opts, true);
  templar.check(action.args, { where: posOf(raw, TEMPLATED_ACTION) });
  return { ...taskKeywordsOf(raw, c, at.withLoop), module: action.module, args: action.args, templatedAction: { ...(isRecord(raw.args) ? { extra: raw.args } : {}) } };
}

/** The keywords of a module task besides its module and arguments, checked. */
function taskKeywordsOf(raw: Obj, c: TaskCommon, withLoop: WithLoop): Omit<ModuleTask, 'module' | 'args'> {
  for (const k of ['until', 'failed_when', 'changed_when'] as const) {
    for (const cond of conditionList(raw[k])) templar.checkCondition(cond, { where: posOf(raw, k) });
  }
  const { loop, loopLookup } = loopOf(raw, withLoop);
  if (raw.loop !== undefined) templar.check(raw.loop, { where: posOf(raw, 'loop') });
  for (const k of ['retries', 'delay', 'async', 'poll'] as const) if (typeof raw[k] === 'string') templar.check(raw[k], { where: posOf(raw, k) });
  return {
    ...c,
    kind: 'task',
    loop,
    loopLookup,
    loopControl: loopControlOf(raw, true),
    register: typeof raw.register === 'string' ? raw.register : undefined,
    until: raw.until,
    retries: typeof raw.retries === 'number' || typeof raw.retries === 'string' ? raw.retries : undefined,
    delay: typeof raw.delay === 'number' || typeof raw.delay === 'string' ? raw.delay : undefined,
    async: typeof raw.async === 'number' || typeof raw.async === 'string' ? raw.async : undefined,
    poll: typeof raw.poll === 'number' || typeof raw.poll === 'string' ? raw.poll : undefined,
    failedWhen: raw.failed_when,
    changedWhen: raw.changed_when,
    notify: c.inheritedNotify ?? [],
    listen: toList(raw.listen),
  };
}

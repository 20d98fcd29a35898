/**
 * What every task node is read with: its common keywords (name, when, tags, vars and the inherited
 * ones), what it passes on, `loop_control`, the keyword check against the declaration, and the
 * unknown-key error with the nearest known key.
 */
import { isRecord } from '../../core/shape.js';
import { InputError, type SourcePos } from '../../load/errors.js';
import { compileSchema, describeAjvError } from '../../load/schema.js';
import { copyPos, posOf, posOfPath } from '../../load/yaml.js';
import { closest } from '../../load/suggest.js';
import { templar } from '../../template/index.js';
import { variableNameProblem, VARIABLE_NAME_HELP } from '../aliases.js';
import { checkConnection, checkDebugger, checkDelegate, inheritedKeywords, yaml11Bool, type Inherited } from '../keywords.js';
import { taskKeywordSchema } from '../schema.js';
import { TASK_KEYWORDS } from '../syntax.js';
import type { ModuleTask, TaskCommon, TaskNode } from '../types.js';
import '../validators.js';
import { conditionList, knownAction, NO_EFFECT, toList, type LoadOptions, type Obj, type Scope } from './context.js';

/** The keywords every node has (name, when, tags, vars, the inherited ones), checked. */
export function common(raw: Obj, pos: SourcePos, scope: Scope, opts: LoadOptions, moduleTask = false): TaskCommon {
  const name = typeof raw.name === 'string' ? raw.name : undefined;
  if (name) templar.check(name, { where: posOf(raw, 'name') });
  const when = conditionList(raw.when);
  // a malformed `when` (`"foo" in {{ x }}`) is an error ansible-core raises when the task runs: where the
  // playbook handles the task's failure (ignore_errors, a rescue) it fails then; elsewhere it is refused now
  const ignoring = raw.ignore_errors ?? scope.inherit.ignoreErrors;
  const handled = moduleTask && (scope.rescued === true || (ignoring !== undefined && ignoring !== null && ignoring !== false && yaml11Bool(ignoring) !== false));
  for (const c of when) {
    try {
      templar.checkCondition(c, { where: posOf(raw, 'when') });
    } catch (e) {
      if (!handled || !(e instanceof InputError)) throw e;
      opts.warn?.(`${e.describe().split('\n')[0] ?? ''} (the task fails when it runs, as in ansible-core)`);
    }
  }
  if (isRecord(raw.vars)) templar.check(raw.vars, { where: posOf(raw, 'vars') });
  const delegateTo = checkDelegate(raw);
  checkDebugger(raw);
  checkConnection(raw);
  for (const key of Object.keys(raw)) if (NO_EFFECT.has(key) && raw[key] !== null) scope.roles.noEffect.add(key);
  const k = inheritedKeywords(raw, scope.inherit, knownAction(opts));
  return {
    name,
    when,
    tags: [...new Set([...scope.tags, ...toList(raw.tags)])],
    vars: isRecord(raw.vars) ? raw.vars : undefined,
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
    ...(k.notify ? { inheritedNotify: k.notify } : {}),
    anyErrorsFatal: k.anyErrorsFatal,
    throttle: k.throttle,
    delegateTo,
    baseDir: scope.baseDir,
    role: scope.role,
    pos,
  };
}

/** What a node passes on to the tasks inside it (a block's, an import's). */
export function inheritOf(c: TaskCommon): Inherited {
  return { checkMode: c.checkMode, noLog: c.noLog, diff: c.diff, ignoreErrors: c.ignoreErrors, ignoreUnreachable: c.ignoreUnreachable, runOnce: c.runOnce, timeout: c.timeout, anyErrorsFatal: c.anyErrorsFatal, throttle: c.throttle, environment: c.environment, moduleDefaults: c.moduleDefaults, ...(c.inheritedNotify ? { notify: c.inheritedNotify } : {}) };
}

/** An unknown key of a node, with the nearest allowed key. */
export function unknownKeyError(raw: Obj, key: string, allowed: Iterable<string>, what: string): InputError {
  const near = closest(key, allowed);
  return new InputError(`${what}: unknown key '${key}'`, posOf(raw, key), near.length ? `did you mean '${near[0]}'?` : `allowed here: ${[...allowed].join(', ')}`);
}

/** Task keywords near `k` (for "did you mean"). */
export function closestKeyword(k: string): string[] {
  return Object.keys(TASK_KEYWORDS).filter((kw) => kw !== k && (kw.startsWith(k) || k.startsWith(kw) || lev1(kw, k)));
}

function lev1(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 2) return false;
  let diff = 0;
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) diff++;
  return diff <= 2;
}

/** `loop_control`, with its defaults (`break_when` only where `breakWhen` is allowed: module tasks). */
export function loopControlOf(raw: Obj, breakWhen = false): ModuleTask['loopControl'] {
  const lc = isRecord(raw.loop_control) ? raw.loop_control : {};
  const brk = conditionList(lc.break_when);
  if (brk.length && !breakWhen) throw new InputError('`loop_control.break_when` is supported by kplay on module tasks only (not on includes)', posOf(lc, 'break_when'));
  for (const c of brk) templar.checkCondition(c, { where: posOf(lc, 'break_when') });
  return {
    ...(brk.length ? { breakWhen: brk } : {}),
    loopVar: typeof lc.loop_var === 'string' ? lc.loop_var : 'item',
    label: typeof lc.label === 'string' ? lc.label : undefined,
    indexVar: typeof lc.index_var === 'string' ? lc.index_var : undefined,
    pause: typeof lc.pause === 'number' ? lc.pause : undefined,
    extended: yaml11Bool(lc.extended) === true ? true : undefined,
    noAllitems: yaml11Bool(lc.extended_allitems) === false ? true : undefined,
  };
}

/** `key:` with no value is the keyword left unset (as Ansible reads it): checked as absent. */
export function withoutNulls(raw: Obj): Obj {
  if (!Object.values(raw).some((v) => v === null)) return raw;
  return Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== null));
}

/** Check a node's keywords against their declaration; the error points at the offending value. */
export function validateKeywords(raw: Obj, pos: SourcePos): void {
  // ansible-core checks `register` when it reads the task (Task._validate_register), in these words
  const badRegister = raw.register !== undefined && raw.register !== null ? variableNameProblem(raw.register) : undefined;
  if (badRegister) throw new InputError(`Invalid 'register' specified: ${badRegister}`, posOf(raw, 'register'), VARIABLE_NAME_HELP);
  const validate = compileSchema(taskKeywordSchema());
  if (validate(withoutNulls(raw))) return;
  const e = (validate.errors ?? [])[0];
  if (!e) throw new InputError('invalid task keywords', pos);
  const p = e.instancePath.slice(1).split('/').filter(Boolean);
  throw new InputError(describeAjvError(e, 'task'), posOfPath(raw, p) ?? pos);
}

/** Handlers are module tasks with a name or topics. */
export function checkedHandlers(handlers: TaskNode[]): ModuleTask[] {
  return handlers.map((h) => {
    if (h.kind !== 'task') throw new InputError('handlers must be module tasks (no block, include or meta)', h.pos);
    if (!h.name && h.listen.length === 0) throw new InputError('a handler needs a `name` (or `listen`) so tasks can notify it', h.pos);
    return h;
  });
}

/** The map a role entry's keywords are read from (positions kept: the entry itself when it is a map). */
export function d0(entry: unknown): Obj | undefined {
  return isRecord(entry) ? entry : undefined;
}

/** A role entry's `when`, `tags` and keywords, as a node's raw keys (read from the entry, for positions). */
export function roleEntryKeywords(dep: { when: unknown[]; tags: string[]; keywords: Obj }, entry: Obj | undefined): Obj {
  if (!entry) return { when: dep.when, tags: dep.tags };
  const out: Obj = { ...dep.keywords, when: dep.when, tags: dep.tags };
  copyPos(entry, out);
  return out;
}

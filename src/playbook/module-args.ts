/**
 * A module task's arguments as the loader reads them: Ansible's free-form and `key=value` forms,
 * `args:` and `module_defaults` merged in, and the check of everything not templated against the
 * module's schema (the same compiled validator as at run time).
 */
import { isRecord } from '../core/shape.js';
import { InputError, type SourcePos } from '../load/errors.js';
import { describeAjvError, validateArgs } from '../load/schema.js';
import { copyPos, posOf, posOfPath } from '../load/yaml.js';
import type { AnyModule } from '../core/module.js';
import { templar, Templar } from '../template/index.js';
import { withAliases } from './aliases.js';
import { ansibleBooleans } from './booleans.js';
import { kcoreActionRefusal } from './kcore-action-plugin.js';
import { parseKv } from './keywords.js';
import { qualifiedNames } from './names.js';
import { type Obj } from './nodes/context.js';

/** Modules whose free-form string is a command line: only their few `key=value` options are taken out of it (Ansible's RAW_PARAM_MODULES). */
const RAW_MODULES = new Set(['command', 'shell', 'script', 'raw']);
const RAW_OPTIONS = new Set(['chdir', 'creates', 'removes', 'executable', 'stdin', 'stdin_add_newline', 'strip_empty_ends', 'argv']);

/**
 * A free-form string as Ansible splits it: `key=value` pairs naming the module's arguments become
 * arguments (`file: path=/x state=touch`); the rest is the free-form argument.
 */
function freeFormArgs(mod: AnyModule, value: string): Obj | undefined {
  const props = isRecord(mod.schema.properties) ? mod.schema.properties : {};
  if (RAW_MODULES.has(mod.name)) {
    const { kv, rest } = parseKv(value, (k) => RAW_OPTIONS.has(k) && k in props);
    if (Object.keys(kv).length === 0 || !mod.freeForm) return undefined;
    return { ...kv, [mod.freeForm]: rest };
  }
  const { kv, rest } = parseKv(value);
  const keys = Object.keys(kv);
  if (keys.length === 0) return undefined;
  // a module whose keys are its own (set_fact's variables) takes every pair; the others only their arguments
  if (!mod.variableKeys && !mod.anyKeys && !keys.every((k) => k in props || k in (mod.aliases ?? {}))) return undefined;
  if (rest === '') return kv;
  return mod.freeForm ? { ...kv, [mod.freeForm]: rest } : undefined;
}

/**
 * Normalise a module's arguments and check what can be checked without variables. `extra`: the
 * task's `args:` (the module key's arguments win); `defaults`: `module_defaults` that apply (the
 * task's arguments win; checked together, applied again at run time once rendered).
 */
export function normaliseArgs(mod: AnyModule, value: unknown, raw: Obj, key: string, extra: Obj | undefined, defaults: unknown[] | undefined, onArgError?: (e: InputError) => void): unknown {
  const where = posOf(raw, key);
  // the schema check; with `onArgError` its error is handed over (the task fails when it runs)
  const staticValidate = (...a: Parameters<typeof validateStatic>): void => {
    if (!onArgError) return validateStatic(...a);
    try {
      validateStatic(...a);
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      onArgError(e);
    }
  };
  let args: unknown = value;
  // what is checked: module_defaults under the arguments, Ansible's boolean spellings read as booleans
  const withDefaults = (given: Obj): Obj => {
    const merged: Obj = defaults ? (Object.assign({}, ...defaults.filter(isRecord), given) as Obj) : given;
    if (merged !== given) copyPos(given, merged);
    const named = withAliases(mod, merged) as Obj;
    if (named !== merged) copyPos(merged, named);
    return ansibleBooleans(mod.schema, named) as Obj;
  };
  if (value === null || value === undefined) args = extra ? { ...extra } : {};
  else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    const split = typeof value === 'string' ? freeFormArgs(mod, value) : undefined;
    if (!split && typeof value === 'string' && /^\s*\{\{[^]*\}\}\s*$/.test(value) && !mod.freeForm) {
      templar.check(value, { where });
      return value; // the whole argument map comes from a template
    }
    // ansible-core fails such a task when it runs (TaskExecutor's post-validation): deferred by the loader
    if (!mod.freeForm && !split) throw new InputError(`Action '${qualifiedNames(mod.name)[0] ?? mod.name}' does not support raw params.`, where, `give ${mod.name} its arguments as a map or as key=value pairs (see \`kplay modules ${mod.name}\`)`);
    args = { ...(extra ?? {}), ...(split ?? { [mod.freeForm as string]: value }) };
    templar.check(args, { where });
    staticValidate(mod, withDefaults(args as Obj), where, raw, key);
    return args;
  } else if (!isRecord(value)) {
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
export function validateStatic(mod: AnyModule, args: unknown, where: SourcePos | undefined, root: unknown, key: string | undefined): void {
  // kubernetes.core's action plugin refuses the task when it runs, before the module's arguments are checked
  if (kcoreActionRefusal(mod.name, args)) return;
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
    // set_fact's keys are templated when the task runs
    if (mod.variableKeys && e.keyword === 'additionalProperties' && Templar.isTemplated(String((e.params as Obj).additionalProperty))) return false;
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

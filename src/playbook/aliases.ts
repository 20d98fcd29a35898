/**
 * Module argument aliases (a module's `aliases`, from its Ansible `argument_spec`) and
 * ansible-core's check of variable names (set_fact's keys): shared by the loader and the executor.
 */
import { isRecord } from '../core/shape.js';
import type { AnyModule } from '../core/module.js';

/**
 * `args` with the module's aliases renamed to the arguments they stand for (`assert: {msg: x}` →
 * `{fail_msg: x}`), as ansible-core's argument spec handles them: the alias wins when both are
 * given. `args` itself when it names no alias (or is not a map).
 */
export function withAliases(mod: Pick<AnyModule, 'aliases'>, args: unknown): unknown {
  const aliases = mod.aliases;
  if (!aliases || !isRecord(args) || !Object.keys(args).some((k) => k in aliases)) return args;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) if (!(k in aliases)) out[k] = v;
  for (const [k, v] of Object.entries(args)) {
    const target = aliases[k];
    if (target !== undefined) out[target] = v;
  }
  return out;
}

/** Names Jinja resolves itself (ansible-core's `JINJA_KEYWORDS`): never variable names. */
const JINJA_KEYWORDS = new Set(['true', 'false', 'none', 'True', 'False', 'None', 'not']);

/** Python's type name of a value (as ansible-core's messages show it). */
function pyType(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'string') return 'str';
  return Array.isArray(v) ? 'list' : 'dict';
}

/** Python's `str()` of a scalar key. */
function pyStr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  return String(v);
}

/**
 * ansible-core's `validate_variable_name`: undefined when `name` is a valid variable name, else
 * its message (`Invalid variable name 'true'.`, `Invalid variable name '1' of type 'int'.`).
 */
export function variableNameProblem(name: unknown): string | undefined {
  if (typeof name === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !JINJA_KEYWORDS.has(name)) return undefined;
  const scalar = name === null || name === undefined || ['string', 'number', 'boolean'].includes(typeof name);
  let what = scalar ? `name '${pyStr(name)}'` : 'name';
  if (typeof name !== 'string') what += ` of type '${pyType(name)}'`;
  return `Invalid variable ${what}.`;
}

/** What ansible-core says after an invalid variable name. */
export const VARIABLE_NAME_HELP = 'Variable names must be strings starting with a letter or underscore character, and contain only letters, numbers and underscores.';

/**
 * A module argument the module's schema refuses, worded as ansible-core's argument spec validation
 * words it (`ansible.module_utils.common.parameters`): playbooks read these messages
 * (`'field_manager' in result.msg`). The kplay description and position follow in brackets.
 */
import type { ErrorObject } from 'ajv';
import type { AnyModule } from '../core/module.js';
import { isRecord } from '../core/shape.js';
import { formatPos } from '../load/errors.js';
import { describeAjvError } from '../load/schema.js';
import { posOfPath } from '../load/yaml.js';
import type { ModuleTask } from '../playbook/types.js';
import { qualifiedNames } from '../playbook/names.js';

function segments(pointer: string): string[] {
  return pointer.slice(1).split('/').filter(Boolean).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** ` found in a.b` for an argument under sub-options, as ansible-core adds it. */
function foundIn(path: string[]): string {
  const named = path.filter((s) => !/^\d+$/.test(s));
  return named.length ? ` found in ${named.join(' -> ')}` : '';
}

/**
 * The names a schema level accepts as ansible-core lists them: the arguments sorted, then every
 * alias in one bracket (an alias: a key of the module's `aliases`, or a property documented as one).
 */
function supported(schema: unknown, aliases: Readonly<Record<string, string>>): string {
  const props = isRecord(schema) && isRecord(schema.properties) ? schema.properties : {};
  const isAlias = (p: string): boolean => {
    const d = props[p];
    return p in aliases || (isRecord(d) && typeof d.description === 'string' && d.description.startsWith('Alias of'));
  };
  const names = [...new Set([...Object.keys(props), ...Object.keys(aliases)])];
  const canonical = names.filter((p) => !isAlias(p)).sort();
  const alias = names.filter(isAlias).sort();
  return `${canonical.join(', ')}${alias.length ? ` (${alias.join(', ')})` : ''}`;
}

/**
 * ansible-core's message for the first error of `errors` (ajv, all errors), or undefined when it
 * words that kind of error in a way kplay does not reproduce (type conversions): the caller then
 * keeps its own description.
 */
export function ansibleArgMessage(errors: readonly ErrorObject[], moduleName: string, schema: unknown, args: unknown, aliases: Readonly<Record<string, string>> = {}): string | undefined {
  const unknown = errors.filter((e) => e.keyword === 'additionalProperties');
  if (unknown.length) {
    const at = segments(unknown[0]?.instancePath ?? '');
    const names = unknown.filter((e) => e.instancePath === unknown[0]?.instancePath).map((e) => [...at, String((e.params as Record<string, unknown>).additionalProperty)].join('.'));
    const level = at.length === 0 ? schema : undefined;
    const list = level === undefined ? '' : ` Supported parameters include: ${supported(level, aliases)}.`;
    return `Unsupported parameters for (${moduleName}) module: ${[...new Set(names)].sort().join(', ')}.${list}`;
  }
  const required = errors.filter((e) => e.keyword === 'required');
  if (required.length) {
    const at = required[0]?.instancePath ?? '';
    const names = required.filter((e) => e.instancePath === at).map((e) => String((e.params as Record<string, unknown>).missingProperty));
    return `missing required arguments: ${[...new Set(names)].sort().join(', ')}${foundIn(segments(at))}`;
  }
  const choice = errors.find((e) => e.keyword === 'enum');
  if (choice) {
    const path = segments(choice.instancePath);
    const name = path[path.length - 1] ?? '';
    const allowed = ((choice.params as Record<string, unknown>).allowedValues as unknown[]).map(String).join(', ');
    let value: unknown = args;
    for (const s of path) value = isRecord(value) || Array.isArray(value) ? (value as Record<string, unknown>)[s] : undefined;
    const got = value === undefined ? '' : `, got: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`;
    return `value of ${name} must be one of: ${allowed}${got}${foundIn(path.slice(0, -1))}`;
  }
  return undefined;
}

/** The name ansible-core gives a module in these messages: `kubernetes.core.k8s`, `ansible.legacy.file`. */
export function ansibleModuleName(short: string): string {
  const names = qualifiedNames(short);
  return names.find((n) => n.startsWith('kubernetes.core.')) ?? names.find((n) => n.startsWith('ansible.legacy.')) ?? short;
}

/**
 * The failed task's message for arguments the module's schema refused when the task ran:
 * ansible-core's words where kplay reproduces them, then kplay's description at `file:line:col`.
 */
export function argumentsMessage(errors: readonly ErrorObject[], mod: AnyModule, args: unknown, task: Pick<ModuleTask, 'args' | 'pos'>): string {
  const e = errors[0] ?? { instancePath: '', keyword: 'invalid', params: {}, schemaPath: '', message: 'invalid arguments' };
  const segs = e.instancePath.slice(1).split('/').filter(Boolean);
  const pos = typeof task.args === 'object' ? posOfPath(task.args, segs) : undefined;
  const own = `${formatPos(pos ?? task.pos)}: invalid arguments: ${describeAjvError(e, mod.name)}`;
  const asAnsible = ansibleArgMessage(errors, ansibleModuleName(mod.name), mod.schema, args, mod.aliases);
  return asAnsible ? `${asAnsible} (${own})` : own;
}

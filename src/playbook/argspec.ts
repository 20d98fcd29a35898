/**
 * Role argument specs (`meta/argument_specs.yml`), checked as ansible-core's ArgumentSpecValidator
 * checks them: types with Ansible's conversions (`"3"` is an int, `yes` a bool, `a,b` a list),
 * `required`, `choices`, `elements` and nested `options`, with Ansible's wording of the errors.
 */
import { isRecord } from '../core/shape.js';

type Obj = Record<string, unknown>;

const TRUE = new Set(['y', 'yes', 'on', '1', 'true', 't', '1.0']);
const FALSE = new Set(['n', 'no', 'off', '0', 'false', 'f', '0.0']);

function typeName(v: unknown): string {
  if (v === null) return 'NoneType';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'string') return 'str';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'object') return 'dict';
  return typeof v;
}

/** Convert `v` to the spec type as Ansible does; a string is the reason it cannot be. */
function convert(v: unknown, type: string): { value: unknown } | string {
  switch (type) {
    case 'str':
    case 'path':
      if (typeof v === 'string') return { value: v };
      if (typeof v === 'number' || typeof v === 'boolean') return { value: String(v) };
      return `cannot convert a ${typeName(v)} to a string`;
    case 'int':
      if (typeof v === 'number' && Number.isInteger(v)) return { value: v };
      if (typeof v === 'string' && /^\s*[-+]?\d+\s*$/.test(v)) return { value: Number.parseInt(v, 10) };
      if (typeof v === 'number' && Number.isInteger(v)) return { value: v };
      return `invalid literal for int(): ${JSON.stringify(v)}`;
    case 'float':
      if (typeof v === 'number') return { value: v };
      if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return { value: Number(v) };
      return `could not convert ${typeName(v)} to float: ${JSON.stringify(v)}`;
    case 'bool':
      if (typeof v === 'boolean') return { value: v };
      if (typeof v === 'string' || typeof v === 'number') {
        const s = String(v).toLowerCase();
        if (TRUE.has(s)) return { value: true };
        if (FALSE.has(s)) return { value: false };
      }
      return `The value '${String(v)}' is not a valid boolean.  Valid booleans include: 'yes', 'on', 'true', '1', 'no', 'off', 'false', '0'`;
    case 'list':
      if (Array.isArray(v)) return { value: v };
      if (typeof v === 'string') return { value: v.split(',') };
      if (typeof v === 'number') return { value: [String(v)] };
      return `${typeName(v)} cannot be converted to a list`;
    case 'dict':
      if (isRecord(v)) return { value: v };
      return `${typeName(v)} cannot be converted to a dict`;
    default:
      return { value: v }; // raw, json, jsonarg, bytes, bits: accepted as given
  }
}

function checkValue(name: string, spec: Obj, raw: unknown, errors: string[]): unknown {
  const type = typeof spec.type === 'string' ? spec.type : 'str';
  const converted = convert(raw, type);
  if (typeof converted === 'string') {
    errors.push(`argument '${name}' is of type ${typeName(raw)} and we were unable to convert to ${type}: ${converted}`);
    return raw;
  }
  let value = converted.value;
  if (type === 'list' && Array.isArray(value)) {
    const elements = typeof spec.elements === 'string' ? spec.elements : undefined;
    value = value.map((item, i) => {
      if (!elements) return item;
      const c = convert(item, elements);
      if (typeof c === 'string') {
        errors.push(`Elements value for option '${name}' is of type ${typeName(item)} and we were unable to convert to ${elements}: ${c}`);
        return item;
      }
      if (elements === 'dict' && isRecord(spec.options)) return checkOptions(spec.options, c.value as Obj, errors, `${name}[${i}]`);
      return c.value;
    });
  } else if (type === 'dict' && isRecord(spec.options) && isRecord(value)) {
    value = checkOptions(spec.options, value, errors, name);
  }
  if (Array.isArray(spec.choices)) {
    const choices = spec.choices as unknown[];
    const bad = (Array.isArray(value) && type === 'list' ? value : [value]).filter((x) => !choices.some((c) => c === x || String(c) === String(x)));
    if (bad.length) {
      const shown = choices.map(String).join(', ');
      errors.push(type === 'list' ? `value of ${name} must be one or more of: ${shown}. Got no match for: ${bad.map(String).join(', ')}` : `value of ${name} must be one of: ${shown}, got: ${String(value)}`);
    }
  }
  return value;
}

/**
 * Check `values` against the `options` of an argument spec; returns the converted values and the
 * errors (empty when valid). Options absent from `values` are not invented (a spec `default` is
 * documentation, as in Ansible: defaults come from `defaults/main.yml`).
 */
export function checkOptions(options: Obj, values: Obj, errors: string[] = [], prefix?: string): Obj {
  const out: Obj = { ...values };
  const missing: string[] = [];
  for (const [name, specRaw] of Object.entries(options)) {
    const spec = isRecord(specRaw) ? specRaw : {};
    const v = values[name];
    if (v === undefined || v === null) {
      if (spec.required === true) missing.push(name);
      continue;
    }
    out[name] = checkValue(name, spec, v, errors);
  }
  if (missing.length) errors.push(`missing required arguments: ${missing.join(', ')}${prefix ? ` found in ${prefix}` : ''}`);
  return out;
}

/** Problems with the argument spec itself (what a role author wrote), for a clear load-time error. */
export function specProblems(options: unknown): string[] {
  if (!isRecord(options)) return ['`options` must be a map of option name → spec'];
  const out: string[] = [];
  const types = new Set(['str', 'int', 'float', 'bool', 'list', 'dict', 'path', 'raw', 'json', 'jsonarg', 'bytes', 'bits']);
  for (const [name, spec] of Object.entries(options)) {
    if (!isRecord(spec)) {
      out.push(`option '${name}' must be a map (type, required, description, ...)`);
      continue;
    }
    if (spec.type !== undefined && (typeof spec.type !== 'string' || !types.has(spec.type))) out.push(`option '${name}': unknown type '${String(spec.type)}' (one of ${[...types].join(', ')})`);
    if (spec.elements !== undefined && (typeof spec.elements !== 'string' || !types.has(spec.elements))) out.push(`option '${name}': unknown elements type '${String(spec.elements)}'`);
    if (spec.options !== undefined) out.push(...specProblems(spec.options).map((p) => `${name}.${p}`));
  }
  return out;
}

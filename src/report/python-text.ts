/**
 * Values printed as ansible-core's Python prints them: `json.dumps(v, sort_keys=True,
 * ensure_ascii=False, indent=…)` (its `_dump_results`) and `str(v)` (a loop item's label).
 */

import { strRepr } from '../template/pyrepr.js';

/** A JSON string as Python's `json.dumps(..., ensure_ascii=False)` writes it (the same escapes as JSON.stringify but for lone surrogates, which it writes as they are). */
function pyJsonString(s: string): string {
  return JSON.stringify(s);
}

function pyNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return 'Infinity';
  if (n === -Infinity) return '-Infinity';
  return String(n);
}

/**
 * `json.dumps(value, sort_keys=True, ensure_ascii=False, indent=indent)`: without `indent` one
 * line with `, ` and `: ` separators; with it one item a line, indented, `,` at line ends.
 * @example pyJson({ b: 1, a: [1, 2] }) // '{"a": [1, 2], "b": 1}'
 */
export function pyJson(value: unknown, indent?: number, level = 0): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return pyJsonString(value);
  if (typeof value === 'number') return pyNumber(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  const pad = indent === undefined ? '' : `\n${' '.repeat(indent * (level + 1))}`;
  const end = indent === undefined ? '' : `\n${' '.repeat(indent * level)}`;
  const sep = indent === undefined ? ', ' : ',';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[${value.map((v) => `${pad}${pyJson(v, indent, level + 1)}`).join(sep)}${end}]`;
  }
  if (value instanceof Date) return pyJsonString(value.toISOString());
  if (typeof value === 'object') {
    const keys = Object.keys(value).sort();
    if (keys.length === 0) return '{}';
    const obj = value as Record<string, unknown>;
    return `{${keys.map((k) => `${pad}${pyJsonString(k)}: ${pyJson(obj[k], indent, level + 1)}`).join(sep)}${end}}`;
  }
  return pyJsonString(String(value));
}

/** Python's `repr` of a value read from YAML/JSON (dicts keep their order, as Python's do). */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'string') return strRepr(value);
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'nan';
    if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
    return String(value);
  }
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${strRepr(k)}: ${pyRepr(v)}`)
      .join(', ')}}`;
  }
  return String(value);
}

/**
 * Python's `str(value)`: a string as it is, anything else as its `repr`.
 * @example pyStr({ a: 1 }) // "{'a': 1}"
 */
export function pyStr(value: unknown): string {
  return typeof value === 'string' ? value : pyRepr(value);
}

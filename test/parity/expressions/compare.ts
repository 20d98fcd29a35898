// Outcomes of the differential expression suite and how they are compared and shown.
//
// Ansible's side comes as JSON from ansible_eval.py: `{ok: true, value, type}` (type = the Python type
// name; ints beyond 2**53 as `{"$int": "digits"}`) or `{ok: false, error}`. kplay's side is what `templar.renderTyped` / `templar.evalCondition`
// return or throw. Two outcomes agree when both failed, or when both succeeded with the same type and
// deep-equal values (numbers within a relative 1e-9; mappings compared without regard to key order,
// lists in order).
import { PyFloat } from '../../../src/template/values.js';
import { isRecord } from '../../../src/core/shape.js';

/** One side's result for a case. */
export type Outcome = { ok: true; value: unknown; type: string } | { ok: false; error: string };

/** `{"$float": "inf"|"-inf"|"nan"}` (non-finite floats from the Ansible side) as a JS number. */
function specialFloat(v: unknown): number | undefined {
  if (!isRecord(v) || Object.keys(v).length !== 1 || typeof v['$float'] !== 'string') return undefined;
  return v['$float'] === 'nan' ? NaN : v['$float'] === 'inf' ? Infinity : v['$float'] === '-inf' ? -Infinity : undefined;
}

/** `{"$int": "digits"}` (an int beyond 2**53 from the Ansible side) as a bigint. */
function bigInt(v: unknown): bigint | undefined {
  if (!isRecord(v) || Object.keys(v).length !== 1 || typeof v['$int'] !== 'string') return undefined;
  return BigInt(v['$int']);
}

/** A naive ISO date-time as Python's `datetime.isoformat()` writes it (UTC fields). */
function pyIsoformat(d: Date): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  const base = `${p(d.getUTCFullYear(), 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}T${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
  return d.getUTCMilliseconds() ? `${base}.${p(d.getUTCMilliseconds() * 1000, 6)}` : base;
}

/**
 * kplay's value as plain JSON-like data: Maps become objects, Sets sorted lists, Dates their Python
 * ISO form, `undefined` None, a {@link PyFloat} its number, and any other wrapper object (a class
 * instance whose `valueOf()` is a primitive) its primitive value.
 */
export function plainKplay(value: unknown): unknown {
  if (value === undefined) return null;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(plainKplay);
  if (value instanceof Date) return pyIsoformat(value);
  if (value instanceof Map) return Object.fromEntries([...value.entries()].map(([k, v]) => [String(k), plainKplay(v)]));
  if (value instanceof Set) return [...value].map(plainKplay).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  if (value instanceof PyFloat) return value.value;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    const prim: unknown = (value as { valueOf(): unknown }).valueOf();
    if (prim !== value && (prim === null || typeof prim !== 'object')) return prim;
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plainKplay(v)]));
}

/** Deep equality of an Ansible JSON value and a plain kplay value. */
export function sameValue(a: unknown, k: unknown): boolean {
  const ia = bigInt(a);
  // exact: kplay keeps such ints as bigints (a number would have lost digits)
  if (ia !== undefined) return typeof k === 'bigint' && k === ia;
  const fa = specialFloat(a);
  if (fa !== undefined) return typeof k === 'number' && (Number.isNaN(fa) ? Number.isNaN(k) : fa === k);
  if (typeof a === 'number') {
    return typeof k === 'number' && (a === k || Math.abs(a - k) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(k)));
  }
  if (a === null || typeof a !== 'object') return a === k;
  if (Array.isArray(a)) return Array.isArray(k) && a.length === k.length && a.every((x, i) => sameValue(x, k[i]));
  if (!isRecord(k)) return false;
  const ak = Object.keys(a);
  if (ak.length !== Object.keys(k).length) return false;
  return ak.every((key) => Object.prototype.hasOwnProperty.call(k, key) && sameValue((a as Record<string, unknown>)[key], k[key]));
}

/** Whether the two outcomes agree (both failed, or same type and value). */
export function agree(ansible: Outcome, kplay: Outcome): boolean {
  if (!ansible.ok || !kplay.ok) return !ansible.ok && !kplay.ok;
  return ansible.type === kplay.type && sameValue(ansible.value, plainKplay(kplay.value));
}

function pyStr(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  const body = s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
  return q + (q === "'" ? body.replace(/'/g, "\\'") : body) + q;
}

/** A Python-repr-like display of a JSON value (a top-level float shown with its `.0`). */
export function pyRepr(v: unknown, type?: string): string {
  const big = bigInt(v);
  if (big !== undefined) return String(big);
  const f = specialFloat(v);
  if (f !== undefined) return String(f).replace('Infinity', 'inf').replace('NaN', 'nan');
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf';
    return type === 'float' && Number.isInteger(v) ? `${v}.0` : String(v);
  }
  if (typeof v === 'string') return pyStr(v);
  if (Array.isArray(v)) return `[${v.map((x) => pyRepr(x)).join(', ')}]`;
  if (isRecord(v)) return `{${Object.entries(v).map(([k, x]) => `${pyStr(k)}: ${pyRepr(x)}`).join(', ')}}`;
  return String(v);
}

/** One line: `int 1`, `str 'a'`, `ERROR AnsibleUndefinedVariable: 'x' is undefined`. */
export function showOutcome(o: Outcome, plain: (v: unknown) => unknown = (v) => v): string {
  if (!o.ok) return `ERROR ${o.error}`;
  const shown = pyRepr(plain(o.value), o.type);
  return `${o.type} ${shown.length > 400 ? `${shown.slice(0, 400)}…` : shown}`;
}

/** Compact JSON of the vars (long ones cut). */
export function showVars(vars: Record<string, unknown>): string {
  const s = JSON.stringify(vars);
  return s.length > 300 ? `${s.slice(0, 300)}…` : s;
}

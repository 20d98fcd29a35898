/**
 * Liquid's forms that older kplay playbooks (written for kplay's Liquid engine) use and Jinja does
 * not have: the properties `size` (of a list, a string, or a mapping: its number of keys), `first`
 * and `last` (of a list), as Liquid reads them, and the operator `a contains b`. The evaluator
 * reads a property only where Jinja has no such attribute or key (see `EvalEnv.liquid`).
 */
import { pyLength } from './filters/def.js';
import { defined, isMap, isNumber, pyIn, Undef } from './values.js';
import { pyStr } from './pyrepr.js';

/** The names Liquid reads as properties of any value. */
const PROPERTIES: ReadonlySet<string> = new Set(['size', 'first', 'last']);

/**
 * Liquid's property `name` of `obj`, or `undefined` (JS) when Liquid has none either (a string's
 * `first`, a number's `size`). An empty list's `first`/`last` is an undefined value, as Liquid's nil.
 * The caller reads it only where Jinja has no value: a mapping's own `size` key is Jinja's value.
 */
export function liquidProperty(obj: unknown, name: string): unknown {
  if (!PROPERTIES.has(name)) return undefined;
  if (name === 'size') return Array.isArray(obj) || typeof obj === 'string' || isMap(obj) ? pyLength(obj) : undefined;
  if (!Array.isArray(obj)) return undefined;
  if (obj.length === 0) return new Undef(`the list is empty: it has no ${name} item`, name);
  return name === 'first' ? obj[0] : obj[obj.length - 1];
}

/**
 * Liquid's `a contains b`: a substring of a string (a number is looked for as its text), an item of
 * a list, a key of a mapping; false for anything else (`nil contains x`), as Liquid. Undefined
 * operands fail, as everywhere else.
 */
export function liquidContains(container: unknown, item: unknown): boolean {
  const c = defined(container);
  const x = defined(item);
  if (typeof c === 'string') return (typeof x === 'string' || isNumber(x)) && c.includes(pyStr(x));
  if (Array.isArray(c) || isMap(c)) return pyIn(x, c);
  return false;
}

/**
 * Lazy variables: a variable whose value holds a template (`url: "https://{{ cluster_name }}"`)
 * is rendered when it is read, with the same variables, like Ansible. Rendering happens at
 * most once per scope object; a variable that (indirectly) refers to itself is an error.
 */
import { InputError } from '../load/errors.js';
import { Templar, templar } from '../template/index.js';
import { posOf } from '../load/yaml.js';

/** The raw (merged, unrendered) variables behind a lazy scope, and the keys never rendered. */
const rawOf = new WeakMap<object, { raw: Record<string, unknown>; final: Set<string> }>();

function containsTemplate(v: unknown, depth = 0): boolean {
  if (typeof v === 'string') return Templar.isTemplated(v);
  if (depth > 32 || v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) return v.some((x) => containsTemplate(x, depth + 1));
  return Object.values(v as Record<string, unknown>).some((x) => containsTemplate(x, depth + 1));
}

/**
 * Build a scope object from merged raw variables: plain values are copied as own properties;
 * templated values become getters that render on first read.
 */
export function lazyScope(raw: Record<string, unknown>, final: Set<string> = new Set()): Record<string, unknown> {
  const scope: Record<string, unknown> = {};
  const resolving = new Set<string>();
  for (const [key, value] of Object.entries(raw)) {
    // Results (register, set_fact, loop items, magic vars) are data: never rendered again.
    if (final.has(key) || !containsTemplate(value)) {
      Object.defineProperty(scope, key, { value, enumerable: true, configurable: true, writable: true });
      continue;
    }
    Object.defineProperty(scope, key, {
      enumerable: true,
      configurable: true,
      get(): unknown {
        if (resolving.has(key)) {
          // ansible-core's message (its lazy variables recurse until Python's RecursionError)
          throw new InputError(`Recursive loop detected in template: variable '${key}' refers to itself (${[...resolving, key].join(' → ')})`, posOf(raw, key));
        }
        resolving.add(key);
        try {
          const rendered = templar.renderValueSync(value, scope, { where: posOf(raw, key), keepOmit: true });
          Object.defineProperty(scope, key, { value: rendered, enumerable: true, configurable: true, writable: true });
          return rendered;
        } finally {
          resolving.delete(key);
        }
      },
    });
  }
  rawOf.set(scope, { raw, final });
  return scope;
}

/** A new lazy scope with `extra` variables (data, never rendered) on top: loop items, results in conditions. */
export function extendScope(scope: Record<string, unknown>, extra: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!extra || Object.keys(extra).length === 0) return scope;
  const base = rawOf.get(scope) ?? { raw: scope, final: new Set<string>(Object.keys(scope)) };
  return lazyScope({ ...base.raw, ...extra }, new Set([...base.final, ...Object.keys(extra)]));
}

/** The raw (unrendered) value of variable `key` of a lazy scope when it is rendered when read (not data: facts, results, loop items); else undefined. */
export function rawTemplateOf(scope: Record<string, unknown>, key: string): unknown {
  const r = rawOf.get(scope);
  if (!r || r.final.has(key) || !Object.hasOwn(r.raw, key)) return undefined;
  const v = r.raw[key];
  return containsTemplate(v) ? v : undefined;
}

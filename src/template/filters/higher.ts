/**
 * Jinja2's filters that apply other filters or tests by name: `map` (`attribute=`/`default=` or a
 * filter name with its arguments), `select`/`reject` (a test name with its arguments, or
 * truthiness) and `selectattr`/`rejectattr`. They are made over the final filter and test tables,
 * so `map('regex_replace', …)` or `select('match', …)` find every plug-in.
 */
import type { FilterDef, Kwargs, PluginContext, TestDef } from '../plugins.js';
import { ExprError, Undef, UndefinedError, truthy } from '../values.js';
import { attrGetter } from './access.js';
import { items } from './def.js';

/** Finds a plug-in by name (short or fully qualified). */
export type Lookup<T> = (name: string) => T | undefined;

function callFilter(filters: Lookup<FilterDef>, name: unknown, item: unknown, args: unknown[], kwargs: Kwargs, ctx: PluginContext): unknown {
  const f = typeof name === 'string' ? filters(name) : undefined;
  if (!f) throw new ExprError(`No filter named '${String(name)}'.`);
  // as ansible-core: a filter that does not take undefined values passes the undefined item on (it fails when used)
  if (item instanceof Undef && !f.acceptsUndefined) return item;
  return f.fn(item, args, kwargs, ctx);
}

function callTest(tests: Lookup<TestDef>, name: unknown, item: unknown, args: unknown[], kwargs: Kwargs, ctx: PluginContext): boolean {
  const t = typeof name === 'string' ? tests(name) : undefined;
  if (!t) throw new ExprError(`No test named '${String(name)}'.`);
  if (item instanceof Undef && !t.acceptsUndefined) throw new UndefinedError(item.message);
  return t.fn(item, args, kwargs, ctx);
}

/** Python's `if value:` on the filter input (an empty or None input gives an empty result). */
function present(value: unknown): boolean {
  return truthy(value);
}

function selectOrReject(
  tests: Lookup<TestDef>,
  value: unknown,
  args: unknown[],
  kwargs: Kwargs,
  ctx: PluginContext,
  select: boolean,
  lookupAttr: boolean,
): unknown[] {
  if (!present(value)) return [];
  let off = 0;
  let trans = (x: unknown): unknown => x;
  if (lookupAttr) {
    if (args.length === 0) throw new ExprError('Missing parameter for attribute name');
    trans = attrGetter(args[0]);
    off = 1;
  }
  const name = args[off];
  const testArgs = args.slice(off + 1);
  const check =
    args.length > off
      ? (x: unknown): boolean => callTest(tests, name, x, testArgs, kwargs, ctx)
      : (x: unknown): boolean => truthy(x);
  return items(value).filter((item) => check(trans(item)) === select);
}

/** The higher-order filters over the given filter and test tables. */
export function higherOrderFilters(filters: Lookup<FilterDef>, tests: Lookup<TestDef>): Record<string, FilterDef> {
  return {
    map: {
      fn: (value, args, kwargs, ctx) => {
        if (!present(value)) return [];
        let func: (item: unknown) => unknown;
        if (args.length === 0 && Object.prototype.hasOwnProperty.call(kwargs, 'attribute')) {
          const rest = Object.keys(kwargs).filter((k) => k !== 'attribute' && k !== 'default');
          if (rest.length > 0) throw new ExprError(`Unexpected keyword argument '${rest[0]}'`);
          const dflt = Object.prototype.hasOwnProperty.call(kwargs, 'default') ? kwargs.default : null;
          func = attrGetter(kwargs.attribute, { default: dflt });
        } else {
          if (args.length === 0) throw new ExprError('map requires a filter argument');
          const [name, ...rest] = args;
          func = (item) => callFilter(filters, name, item, rest, kwargs, ctx);
        }
        return items(value).map(func);
      },
    },
    select: { fn: (value, args, kwargs, ctx) => selectOrReject(tests, value, args, kwargs, ctx, true, false) },
    reject: { fn: (value, args, kwargs, ctx) => selectOrReject(tests, value, args, kwargs, ctx, false, false) },
    selectattr: { fn: (value, args, kwargs, ctx) => selectOrReject(tests, value, args, kwargs, ctx, true, true) },
    rejectattr: { fn: (value, args, kwargs, ctx) => selectOrReject(tests, value, args, kwargs, ctx, false, true) },
  };
}

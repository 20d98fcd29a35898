/**
 * The items of a looped task or include: `loop:` (a list or a template giving one), or Ansible's
 * `with_<lookup>: terms`, which is `query('<lookup>', *terms)` (a string term is one term, as
 * ansible-core's listify_lookup_plugin_terms makes it; `with_items` flattens one level).
 */
import { templar, UndefinedInputError, type RenderOptions } from '../template/index.js';
import type { LoopControl } from '../playbook/types.js';
import { extendScope } from './lazyvars.js';

type Obj = Record<string, unknown>;

/** A node that may loop. */
export interface Loops {
  loop?: unknown;
  loopLookup?: string;
}

/** The rendered items (not checked to be a list: the caller says what it got instead). */
export async function loopItems(node: Loops, vars: Obj, where: RenderOptions): Promise<unknown> {
  const value = typeof node.loop === 'string' ? await templar.render(node.loop, vars, where) : await templar.renderValue(node.loop, vars, where);
  if (node.loopLookup === undefined) return value;
  const terms = Array.isArray(value) ? value : [value];
  return templar.render(`{{ query(${JSON.stringify(node.loopLookup)}, *__kplay_with_terms) }}`, extendScope(vars, { __kplay_with_terms: terms }), where);
}

/**
 * The variables of item `i` of `items`: the loop variable, `index_var`, `ansible_loop_var`
 * (`ansible_index_var`), and with `extended: true` Ansible's `ansible_loop`.
 */
export function loopVars(lc: LoopControl, items: readonly unknown[], i: number): Obj {
  const out: Obj = { [lc.loopVar]: items[i], ansible_loop_var: lc.loopVar };
  if (lc.indexVar) {
    out[lc.indexVar] = i;
    out.ansible_index_var = lc.indexVar;
  }
  if (lc.extended) {
    const n = items.length;
    out.ansible_loop = {
      ...(lc.noAllitems ? {} : { allitems: items }),
      index: i + 1,
      index0: i,
      revindex: n - i,
      revindex0: n - i - 1,
      first: i === 0,
      last: i === n - 1,
      length: n,
      ...(i > 0 ? { previtem: items[i - 1] } : {}),
      ...(i < n - 1 ? { nextitem: items[i + 1] } : {}),
    };
  }
  return out;
}

/** What {@link loopItemsOr} gives for an undefined loop whose task's `when` is false. */
export const UNDEFINED_LOOP_SKIPPED = Symbol('undefined loop, when false');

/**
 * The loop's items, as ansible-core's TaskExecutor gets them: a loop that reads an undefined
 * variable fails the task only when the task's `when` (evaluated without an item) holds or fails
 * itself; when it is false the task is skipped ({@link UNDEFINED_LOOP_SKIPPED}).
 */
export async function loopItemsOr(items: () => Promise<unknown>, whenHolds: () => Promise<boolean>): Promise<unknown> {
  try {
    return await items();
  } catch (e) {
    if (!(e instanceof UndefinedInputError) || (await whenHolds().catch(() => true))) throw e;
    return UNDEFINED_LOOP_SKIPPED;
  }
}

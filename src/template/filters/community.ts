/**
 * community.general's filters that Kubernetes playbooks use besides `json_query`: `counter`,
 * `dict_kv`, `dict`, `lists_mergeby`, `version_sort` (community.general 10, as installed with
 * the Ansible of test/bench/install.sh).
 */
import type { FilterDef } from '../plugins.js';
import { ExprError, isMap, pyEq, typeName } from '../values.js';
import { mergeHash } from './ansible-data.js';
import { opt, req } from './args.js';
import { dict, filter, items, repr, text, touch } from './def.js';
import { hashable, pySorted } from './jinja-lists.js';
import { compareLoose } from './pyversion.js';

/** A dict key from a hashable value (the value model's dicts have string keys). */
function key(v: unknown): string {
  return typeof v === 'string' ? v : text(v);
}

function counter(v: unknown): Record<string, unknown> {
  if (typeof v !== 'string' && !Array.isArray(v)) {
    throw new ExprError(`Argument for community.general.counter must be a sequence (string or list). ${repr(v)} is <class '${typeName(v)}'>`);
  }
  const out: [string, number][] = [];
  const seen: unknown[] = [];
  for (const x of items(v).map(touch)) {
    if (!hashable(x)) throw new ExprError(`community.general.counter needs a sequence with hashable elements (int, float or str) - unhashable type: '${typeName(x)}'`);
    const i = seen.findIndex((y) => pyEq(x, y));
    if (i >= 0) {
      const e = out[i];
      if (e) e[1]++;
    } else {
      seen.push(x);
      out.push([key(x), 1]);
    }
  }
  return dict(out);
}

function listsMergeby(terms: readonly unknown[], kwargs: Readonly<Record<string, unknown>>): unknown {
  const { recursive = false, list_merge: listMerge = 'replace', ...rest } = kwargs;
  if (Object.keys(rest).length > 0) throw new ExprError("'recursive' and 'list_merge' are the only valid keyword arguments.");
  if (terms.length < 2) throw new ExprError('At least one list and index are needed.');
  const lists: unknown[][] = [];
  for (const sub of terms.slice(0, -1)) {
    if (!Array.isArray(sub)) throw new ExprError(`All arguments before the argument index for community.general.lists_mergeby must be lists. ${repr(sub)} is <class '${typeName(sub)}'>`);
    if (sub.length > 0) {
      if (sub.every((x) => Array.isArray(x))) lists.push(...(sub as unknown[][]));
      else lists.push(sub);
    }
  }
  if (lists.length === 0) return [];
  if (lists.length === 1) return lists[0];
  const index = terms[terms.length - 1];
  if (typeof index !== 'string') throw new ExprError(`First argument after the lists for community.general.lists_mergeby must be string. ${repr(index)} is <class '${typeName(index)}'>`);
  const mergeBy = (x: unknown[], y: unknown[]): unknown[] => {
    const groups: { k: unknown; v: Record<string, unknown> }[] = [];
    for (const lst of [x, y]) {
      for (const elem of lst) {
        if (!isMap(elem)) throw new ExprError(`Elements of list arguments for lists_mergeby must be dictionaries. ${repr(elem)} is <class '${typeName(elem)}'>`);
        if (!Object.prototype.hasOwnProperty.call(elem, index)) continue;
        const k = elem[index];
        let g = groups.find((e) => pyEq(e.k, k));
        if (!g) {
          g = { k, v: {} };
          groups.push(g);
        }
        g.v = { ...g.v, ...mergeHash(g.v, elem, Boolean(recursive), text(listMerge)) };
      }
    }
    return pySorted(groups.map((g) => g.v), (v) => v[index]);
  };
  let result = lists[lists.length - 1] ?? [];
  for (let i = lists.length - 2; i >= 0; i--) result = mergeBy(lists[i] ?? [], result);
  return result;
}

/** The community.general filters, by short name (also registered as `community.general.X`). */
export const COMMUNITY_FILTERS: Readonly<Record<string, FilterDef>> = {
  counter: filter({ fn: 'counter', params: [] }, (v) => counter(v)),
  dict_kv: filter({ fn: 'dict_kv', params: [req('key')] }, (v, a) => {
    const k = a.get('key');
    if (!hashable(k)) throw new ExprError(`unhashable type: '${typeName(k)}'`);
    return dict([[key(k), v]]);
  }),
  dict: filter({ fn: 'dict_filter', params: [] }, (v) =>
    dict(
      items(v).map((p, i) => {
        const pair = Array.isArray(p) ? p : typeof p === 'string' ? [...p] : null;
        if (!pair) throw new ExprError(`cannot convert dictionary update sequence element #${i} to a sequence`);
        if (pair.length !== 2) throw new ExprError(`dictionary update sequence element #${i} has length ${pair.length}; 2 is required`);
        return [key(pair[0]), pair[1]] as const;
      }),
    ),
  ),
  lists_mergeby: { fn: (v, args, kwargs) => listsMergeby([v, ...args], kwargs) },
  version_sort: filter({ fn: 'version_sort', params: [opt('reverse', false)] }, (v, a) => {
    const xs = items(v).map((x) => text(touch(x)));
    const sorted = [...items(v)].map((x, i) => ({ x, s: xs[i] ?? '' }));
    sorted.sort((p, q) => (a.get('reverse') ? -compareLoose(p.s, q.s) : compareLoose(p.s, q.s)));
    return sorted.map((p) => p.x);
  }),
};

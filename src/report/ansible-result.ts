/**
 * A task result as ansible-core's default callback shows it: the result dict it would hold
 * (built from kplay's registered value), cleaned as `_clean_results` cleans `debug`'s, and dumped
 * as `_dump_results` dumps it (internal keys stripped, `json.dumps` with sorted keys).
 */
import type { RunEvent } from './events.js';
import { pyJson, pyStr } from './python-text.js';

type Obj = Record<string, unknown>;
type TaskResult = Extract<RunEvent, { type: 'task_result' }>;

/** What ansible-core's `debug` keeps when it has `msg` (`_DEBUG_ALLOWED_KEYS`). */
const DEBUG_ALLOWED = new Set(['msg', 'exception', 'warnings', 'deprecations']);
/** What `_clean_results` removes from a `debug: var=` result (`_hide_in_debug`). */
const HIDE_IN_DEBUG = ['changed', 'failed', 'skipped', 'invocation', 'skip_reason', 'ansible_loop_var', 'ansible_index_var', 'ansible_loop'];
/** Keys kplay registers that ansible-core's callback does not show. */
const KPLAY_ONLY = ['item_label', 'loop_index'];

/** `debug` under any of its names. */
export function isDebug(module: string | undefined): boolean {
  return module === 'debug' || module === 'ansible.builtin.debug' || module === 'ansible.legacy.debug';
}

/** The result dict ansible-core's callback would be given for this event. */
export function callbackResult(e: TaskResult): Obj {
  const base: Obj = { ...(e.result ?? e.data ?? {}) };
  if (!e.result) {
    if (e.status === 'skipped') Object.assign(base, { changed: false, skip_reason: e.msg ?? 'Conditional result was False' });
    else if (e.msg !== undefined && e.included === undefined) base.msg = e.msg;
    if (base.changed === undefined) base.changed = e.status === 'changed' || e.changed === true;
  }
  // `debug: var=` shows the variable, not kplay's registered `msg` rendering of it
  if (isDebug(e.module) && e.data && !('msg' in e.data)) delete base.msg;
  // 2.19's callback view of a result has no `failed`/`skipped` flags (the status says it)
  delete base.failed;
  delete base.skipped;
  for (const k of KPLAY_ONLY) delete base[k];
  if (e.status === 'skipped' && e.false_condition !== undefined && base.skip_reason === 'Conditional result was False') base.false_condition = e.false_condition;
  if (e.status === 'skipped' && e.item !== undefined && base.msg === 'Conditional result was False') {
    // an item skipped by `when`: the reason is `skip_reason`, there is no `msg`
    delete base.msg;
    base.skip_reason = 'Conditional result was False';
    if (e.false_condition !== undefined) base.false_condition = e.false_condition;
  }
  return base;
}

/** `_clean_results` for `debug`: `msg` alone, or without the flags when it shows a variable. */
export function cleanResult(r: Obj, module: string | undefined): Obj {
  if (!isDebug(module)) return r;
  if ('msg' in r) return Object.fromEntries(Object.entries(r).filter(([k]) => DEBUG_ALLOWED.has(k) || k.startsWith('_')));
  const out = { ...r };
  for (const k of HIDE_IN_DEBUG) delete out[k];
  return out;
}

/** ansible-core's `_ansible_verbose_always`: `debug` results are shown without -v. */
export function verboseAlways(e: TaskResult): boolean {
  return isDebug(e.module) && e.status !== 'skipped' && e.status !== 'failed';
}

/**
 * `_dump_results`: indent 4 for verbose-always results and at -vvv, `diff` and `invocation` left
 * out below -vvv, `exception`/`warnings`/`deprecations` always (they were shown already).
 */
export function dumpResult(r: Obj, opts: { verbosity: number; always: boolean }): string {
  const out: Obj = {};
  for (const [k, v] of Object.entries(r)) {
    if (k.startsWith('_ansible_')) continue;
    if ((k === 'diff' || k === 'invocation') && opts.verbosity < 3) continue;
    if (k === 'exception' || k === 'warnings' || k === 'deprecations') continue;
    out[k] = v;
  }
  return pyJson(out, opts.always || opts.verbosity > 2 ? 4 : undefined);
}

/** The default label kplay gives an item (task.ts `labelOf`), to tell it from a `loop_control.label`. */
function kplayLabel(item: unknown): string {
  const s = typeof item === 'string' ? item : JSON.stringify(item);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** A loop item's label as ansible-core prints it: `str()` of the item (or of `loop_control.label`). */
export function itemLabel(e: TaskResult): string {
  const r = e.result;
  if (r && 'censored' in r) return '(censored due to no_log)';
  const loopVar = r && typeof r.ansible_loop_var === 'string' ? r.ansible_loop_var : undefined;
  if (!r || loopVar === undefined || !(loopVar in r)) return e.item ?? '';
  const item = r[loopVar];
  if (e.item === undefined || e.item === 'None') return e.item ?? pyStr(item);
  return e.item === kplayLabel(item) ? pyStr(item) : e.item;
}

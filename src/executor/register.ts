/**
 * What a module returned, as the playbook sees it: the value `register` stores, and the check of
 * returned data against the module's declared `result` schema (`KPLAY_CHECK_RESULTS=1`).
 */
import type { AnyModule, ModuleResult, ResultData } from '../core/module.js';
import { compileSchema, describeAjvError } from '../load/schema.js';

type Obj = Record<string, unknown>;

/** Why `data` does not match the module's declared result schema, or undefined when it does. */
export function resultMismatch(mod: AnyModule, data: ResultData): string | undefined {
  const validate = compileSchema(mod.result);
  if (validate(data)) return undefined;
  const e = validate.errors?.[0];
  return e ? describeAjvError(e, 'result') : 'invalid';
}

/** The value `register` stores: module data plus changed/failed/msg flags. */
export function registeredValue(r: ModuleResult | { status: 'unreachable'; msg: string }): Obj {
  const data: ResultData = 'data' in r && r.data ? r.data : {};
  const out: Obj = { ...data, changed: r.status === 'changed' || (r.status === 'failed' && r.changed === true), failed: r.status === 'failed' || r.status === 'unreachable' };
  if (r.status === 'skipped') out.skipped = true;
  if (r.msg !== undefined && !('registerMsg' in r && r.registerMsg === false)) out.msg = r.msg;
  if ('diff' in r && r.diff && !('registerDiff' in r && r.registerDiff === false)) out.diff = r.diff;
  return out;
}

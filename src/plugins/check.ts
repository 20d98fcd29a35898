/**
 * Validating a module's arguments the way the engine does, for module authors' own tests.
 */
import { describeAjvError, validateArgs } from '../load/schema.js';
import type { Args, TObject, TSchema } from '../core/args.js';
import type { ModuleDefinition } from '../core/module.js';

/** The outcome of {@link checkArgs}. */
export type CheckedArgs<S extends TSchema> = { ok: true; args: Args<S> } | { ok: false; errors: string[] };

/**
 * Validate arguments (as they would be after templating) against a module's schema exactly as
 * the engine does before `run`: scalars are coerced ("3" → 3) and the declared defaults are filled
 * in. Errors are the messages `kplay run` would print.
 * @example
 * const r = checkArgs(myModule, { name: 'web' });
 * if (r.ok) await myModule.run(r.args, ctx);
 */
export function checkArgs<S extends TSchema, R extends TObject>(mod: ModuleDefinition<S, R>, args: unknown): CheckedArgs<S> {
  const checked = validateArgs(mod.schema, args, { defaults: true });
  if (checked.ok) return { ok: true, args: checked.value as Args<S> };
  return { ok: false, errors: checked.errors.map((e) => describeAjvError(e, mod.name)) };
}

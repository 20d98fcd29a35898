/**
 * Load-balancer providers of the `lb_switch` module. A provider is one file in `src/lb/` that
 * exports an {@link LbProvider}; listing it in `PROVIDERS` (src/lb/index.ts) adds it to the
 * module, its `provider:` enum and its generated docs.
 */
import type { Args, TObject } from '../core/args.js';
import type { JsonSchema, ModuleContext, ModuleResult } from '../core/module.js';

/** One load-balancer backend kind (`provider:` value of `lb_switch`). */
export interface LbProvider<S extends TObject = TObject> {
  /** The `provider:` value, e.g. `haproxy`. */
  name: string;
  /** One line for the docs: what this provider switches and how. */
  summary: string;
  /**
   * The provider's arguments, declared once (`Type.Object`, with `provider: Type.Literal(name)`):
   * its required keys are required when this provider is selected, its `Default(...)`s are filled
   * in only for this provider, and every other property (each with a `description`) is merged
   * into `lb_switch`'s flat schema. A property shared by several providers must be declared
   * identically by each (see `shared.ts`).
   */
  schema: S;
  /**
   * Extra constraints on shared properties (see `shared.ts`) when this provider is selected,
   * e.g. `{ weight: { type: 'integer' } }`. Checked together with the shared declaration.
   */
  narrow?: Record<string, JsonSchema>;
  /** Switch (or, in check mode, report what would switch). Never throws for expected failures. */
  run(args: Args<S>, ctx: ModuleContext): Promise<ModuleResult>;
}

/** A provider with its argument type erased, as `PROVIDERS` lists them (`lb_switch` validates per provider). */
export interface AnyLbProvider extends Omit<LbProvider, 'run'> {
  run(args: never, ctx: ModuleContext): Promise<ModuleResult>;
}

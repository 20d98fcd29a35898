/**
 * Load-balancer providers of the `lb_switch` module. A provider is one file in `src/lb/` that
 * exports an {@link LbProvider}; listing it in `PROVIDERS` (src/lb/index.ts) adds it to the
 * module, its `provider:` enum and its generated docs.
 */
import type { JsonSchema, ModuleContext, ModuleResult } from '../sdk/module.js';

/** One load-balancer backend kind (`provider:` value of `lb_switch`). */
export interface LbProvider<A> {
  /** The `provider:` value, e.g. `haproxy`. */
  name: string;
  /** One line for the docs: what this provider switches and how. */
  summary: string;
  /**
   * JSON Schema of the arguments this provider accepts besides `provider` (each with a
   * `description`). Merged into `lb_switch`'s flat schema; a property shared by several
   * providers must be declared identically by each.
   */
  properties: Record<string, JsonSchema>;
  /** Properties required when this provider is selected. */
  required: string[];
  /**
   * Extra constraints on shared properties (see `shared.ts`) when this provider is selected,
   * e.g. `{ weight: { type: 'integer' } }`. Checked together with the shared declaration.
   */
  narrow?: Record<string, JsonSchema>;
  /** Switch (or, in check mode, report what would switch). Never throws for expected failures. */
  run(args: A, ctx: ModuleContext): Promise<ModuleResult>;
}

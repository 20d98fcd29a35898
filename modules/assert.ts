/** `assert`: check that conditions hold; fail with a message when one does not. */
import { defineModule } from 'kplay/sdk';

/** Arguments of `assert`. */
export interface AssertArgs {
  /**
   * Liquid conditions without braces; all must hold.
   * @example ["replicas >= 2", "region contains 'eu'"]
   */
  that: string | boolean | (string | boolean)[];
  /** Message when a condition fails. @default "Assertion failed" */
  fail_msg?: string;
  /** Message when all hold. @default "All assertions passed" */
  success_msg?: string;
  /** Do not show the success message. @default false */
  quiet?: boolean;
}

export default defineModule<AssertArgs>({
  name: 'assert',
  summary: 'Assert that conditions hold',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['that'],
    properties: {
      that: {
        description: 'Liquid condition(s) without braces; all must hold.',
        anyOf: [{ type: 'string' }, { type: 'boolean' }, { type: 'array', minItems: 1, items: { anyOf: [{ type: 'string' }, { type: 'boolean' }] } }],
      },
      fail_msg: { type: 'string', description: 'Message when a condition does not hold.', default: 'Assertion failed' },
      success_msg: { type: 'string', description: 'Message when all conditions hold.', default: 'All assertions passed' },
      quiet: { type: 'boolean', default: false, description: 'Do not show the success message.' },
    },
  },
  checkMode: 'supported',
  examples: [
    {
      title: 'Check group vars before an upgrade',
      yaml: '- assert:\n    that:\n      - replicas >= 2\n      - chart_version != ""\n    fail_msg: "{{ cluster_name }} needs at least 2 replicas"',
    },
  ],
  async run(args, ctx) {
    const conds = Array.isArray(args.that) ? args.that : [args.that];
    for (const c of conds) {
      const ok = typeof c === 'boolean' ? c : await ctx.evalCondition(c);
      if (!ok) {
        return { status: 'failed', msg: args.fail_msg ?? 'Assertion failed', data: { assertion: c, evaluated_to: false } };
      }
    }
    return { status: 'ok', msg: args.quiet ? undefined : (args.success_msg ?? 'All assertions passed'), data: {} };
  },
});

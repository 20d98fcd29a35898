/** `assert`: check that conditions hold; fail with a message when one does not. */
import { defineModule, Default, Type } from 'kplay/sdk';

export default defineModule({
  name: 'assert',
  summary: 'Assert that conditions hold',
  aliases: { msg: 'fail_msg' },
  schema: Type.Object(
    {
      that: Type.Union([Type.String(), Type.Boolean(), Type.Array(Type.Union([Type.String(), Type.Boolean()]), { minItems: 1 })], {
        description: 'Condition(s) (Ansible expressions, without braces); all must hold.',
        examples: [['replicas >= 2', "region contains 'eu'"]],
      }),
      fail_msg: Default(Type.String({ description: 'Message when a condition does not hold.' }), 'Assertion failed'),
      success_msg: Default(Type.String({ description: 'Message when all conditions hold.' }), 'All assertions passed'),
      quiet: Default(Type.Boolean({ description: 'Do not show the success message.' }), false),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({}),
  diffMode: 'unsupported',
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
        return { status: 'failed', msg: args.fail_msg, data: { assertion: c, evaluated_to: false } };
      }
    }
    return { status: 'ok', msg: args.quiet ? undefined : args.success_msg, data: {} };
  },
});

/**
 * `validate_argument_spec`: check variables against an Ansible-style argument spec. Roles with
 * `meta/argument_specs.yml` get this task first, as in Ansible ("Validating arguments against arg
 * spec 'main'"); it can also be used directly.
 */
import { checkArgumentSpec, defineModule, Default, Type } from 'kplay/sdk';

export default defineModule({
  name: 'validate_argument_spec',
  summary: 'Validate variables against an argument spec (as a role with meta/argument_specs.yml does first)',
  description:
    "Takes the variables named in `argument_spec` from the task's variables, adds `provided_arguments` over them, and checks them as Ansible does: `type` (`str`, `int`, `float`, `bool`, `list`, `dict`, `path`, `raw`; with Ansible's conversions: `\"3\"` is an int, `yes` a bool, `a,b` a list), `required`, `choices`, `elements` and nested `options`. Never changes anything. A spec's `default` is documentation (role defaults come from `defaults/main.yml`), as in Ansible.",
  schema: Type.Object(
    {
      argument_spec: Type.Record(Type.String(), Type.Unknown(), {
        description: 'The `options` of an argument spec: option name → `{type, required, choices, elements, options, description, default}`.',
        examples: [{ replicas: { type: 'int', required: true }, mode: { type: 'str', choices: ['blue', 'green'] } }],
      }),
      provided_arguments: Default(Type.Record(Type.String(), Type.Unknown(), { description: 'Values checked in place of (over) the variables of the same name.' }), {}),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    argument_errors: Type.Optional(Type.Array(Type.String(), { description: 'The problems found (on failure).' })),
  }),
  checkMode: 'supported',
  diffMode: 'unsupported',
  examples: [
    {
      title: 'Check the inputs of a task file before using them',
      yaml: '- validate_argument_spec:\n    argument_spec:\n      release: { type: str, required: true }\n      replicas: { type: int, required: true }\n      color: { type: str, choices: [blue, green] }',
    },
  ],
  async run(args, ctx) {
    const values: Record<string, unknown> = {};
    for (const name of Object.keys(args.argument_spec)) if (ctx.vars[name] !== undefined) values[name] = ctx.vars[name];
    Object.assign(values, args.provided_arguments);
    const errors: string[] = [];
    checkArgumentSpec(args.argument_spec, values, errors);
    if (errors.length) return { status: 'failed', msg: `Validation of arguments failed:\n${errors.join('\n')}`, data: { argument_errors: errors } };
    return { status: 'ok', msg: 'The arg spec validation passed', data: {} };
  },
});

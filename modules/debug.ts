/**
 * `debug`: print a message or a variable. Never changes anything.
 */
import { defineModule, Default, Type, UndefinedInputError, type Args } from 'kplay/sdk';

const schema = Type.Object(
  {
    msg: Type.Optional(
      Type.Unknown({
        description: 'Message to print (any value; templated). Without `msg` and `var`: `Hello world!`.',
        examples: ['replicas on {{ cluster_name }}: {{ replicas }}'],
      }),
    ),
    var: Type.Optional(Type.String({ description: 'Variable name or expression to print instead of `msg`. An undefined one prints `<< error 1 - \'x\' is undefined >>` with a warning and the task is ok, as in ansible-core 2.19.', examples: ['result.stdout_lines'] })),
    verbosity: Default(Type.Integer({ minimum: 0, description: 'Only print at this verbosity or above (-v = 1).' }), 0),
  },
  { additionalProperties: false },
);

/** Arguments of `debug` (after defaults). */
export type DebugArgs = Args<typeof schema>;

export default defineModule({
  name: 'debug',
  summary: 'Print a message or a variable',
  schema,
  result: Type.Object(
    { msg: Type.Optional(Type.Unknown({ description: 'The message printed (with `msg`).' })) },
    { additionalProperties: Type.Unknown({ description: 'With `var: NAME`, the value under the key NAME.' }) },
  ),
  diffMode: 'unsupported',
  checkMode: 'supported',
  examples: [
    { title: 'Print a templated message', yaml: '- debug:\n    msg: "deploying {{ version }} to {{ cluster_name }}"' },
    { title: 'Print a registered result', yaml: '- debug:\n    var: rollout.resources' },
  ],
  async run(args, ctx) {
    if (args.var !== undefined && args.msg !== undefined) return { status: 'failed', msg: "debug: give either 'msg' or 'var', not both" };
    if (args.var !== undefined) {
      let value: unknown;
      try {
        value = await ctx.evaluate(args.var);
      } catch (e) {
        // as ansible-core 2.19: an undefined value is shown as its error, with a warning; the task is ok
        if (!(e instanceof UndefinedInputError)) throw e;
        const why = /^\w+ error in "(?:[^"\\]|\\.)*"(?:\.\.\.)?: (.*)$/m.exec(e.message)?.[1] ?? e.message.split('\n')[0] ?? '';
        ctx.log.warn(`Encountered 1 template error.\nerror 1 - ${why}`);
        value = `<< error 1 - ${why} >>`;
      }
      const shown = typeof value === 'string' ? value : JSON.stringify(value);
      return { status: 'ok', msg: `${args.var}: ${shown}`, data: { [args.var]: value } };
    }
    const msg = args.msg === undefined ? 'Hello world!' : args.msg;
    const text = typeof msg === 'string' ? msg : JSON.stringify(msg);
    return { status: 'ok', msg: text, data: { msg } };
  },
});

/**
 * `debug`: print a message or a variable. Never changes anything.
 */
import { defineModule } from 'kplay/sdk';

/** Arguments of `debug`. */
export interface DebugArgs {
  /**
   * Message to print (templated like every argument).
   * @default "Hello world!"
   * @example "replicas on {{ cluster_name }}: {{ replicas }}"
   */
  msg?: unknown;
  /**
   * Name of a variable (or expression) to print instead of `msg`.
   * @example result.stdout_lines
   */
  var?: string;
  /** Only print at this verbosity (`-v` = 1). @default 0 */
  verbosity?: number;
}

export default defineModule<DebugArgs>({
  name: 'debug',
  summary: 'Print a message or a variable',
  freeForm: 'msg',
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      msg: { description: 'Message to print (any value; templated).', default: 'Hello world!' },
      var: { type: 'string', description: 'Variable name or Liquid expression to print instead of `msg`.' },
      verbosity: { type: 'integer', minimum: 0, default: 0, description: 'Only print at this verbosity or above (-v = 1).' },
    },
  },
  checkMode: 'supported',
  examples: [
    { title: 'Print a templated message', yaml: '- debug:\n    msg: "deploying {{ version }} to {{ cluster_name }}"' },
    { title: 'Print a registered result', yaml: '- debug:\n    var: rollout.resources' },
  ],
  async run(args, ctx) {
    if (args.var !== undefined && args.msg !== undefined) return { status: 'failed', msg: "debug: give either 'msg' or 'var', not both" };
    if (args.var !== undefined) {
      const value = await ctx.evaluate(args.var);
      const shown = typeof value === 'string' ? value : JSON.stringify(value);
      return { status: 'ok', msg: `${args.var}: ${shown}`, data: { [args.var]: value } };
    }
    const msg = args.msg ?? 'Hello world!';
    const text = typeof msg === 'string' ? msg : JSON.stringify(msg);
    return { status: 'ok', msg: text, data: { msg } };
  },
});

/** `fail`: fail the task with a message (usually with `when`). */
import { defineModule, Default, Type } from 'kplay/sdk';

export default defineModule({
  name: 'fail',
  summary: 'Fail with a custom message',
  schema: Type.Object({ msg: Default(Type.String({ description: 'Failure message.' }), 'Failed as requested from task') }, { additionalProperties: false }),
  result: Type.Object({}),
  diffMode: 'unsupported',
  checkMode: 'supported',
  examples: [{ title: 'Refuse to run on production without a ticket', yaml: '- fail:\n    msg: "set -e ticket=CHG-123 for production"\n  when: env == "prod" and ticket is not defined' }],
  async run(args) {
    return { status: 'failed', msg: args.msg };
  },
});

/** `fail`: fail the task with a message (usually with `when`). */
import { defineModule } from 'kplay/sdk';

/** Arguments of `fail`. */
export interface FailArgs {
  /** Why the task fails. @default "Failed as requested from task" */
  msg?: string;
}

export default defineModule<FailArgs>({
  name: 'fail',
  summary: 'Fail with a custom message',
  freeForm: 'msg',
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: { msg: { type: 'string', description: 'Failure message.', default: 'Failed as requested from task' } },
  },
  checkMode: 'supported',
  examples: [{ title: 'Refuse to run on production without a ticket', yaml: '- fail:\n    msg: "set -e ticket=CHG-123 for production"\n  when: env == "prod" and ticket is not defined' }],
  async run(args) {
    return { status: 'failed', msg: args.msg ?? 'Failed as requested from task' };
  },
});

/** `pause`: wait for a time, or for the operator to press Enter (on a TTY). */
import { setTimeout as sleep } from 'node:timers/promises';
import { createInterface } from 'node:readline/promises';
import { defineModule, Default, Type } from 'kplay/sdk';

export default defineModule({
  name: 'pause',
  summary: 'Wait for some time or for the operator to confirm',
  schema: Type.Object(
    {
      seconds: Default(Type.Number({ minimum: 0, description: 'Seconds to wait (added to `minutes`).' }), 0),
      minutes: Default(Type.Number({ minimum: 0, description: 'Minutes to wait (added to `seconds`).' }), 0),
      prompt: Type.Optional(Type.String({ description: 'Ask the operator and wait for Enter (needs a TTY; input is recorded as `user_input`). Ignored when a time is given.' })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    elapsed_ms: Type.Integer({ description: 'How long the task waited, in milliseconds.' }),
    user_input: Type.Optional(Type.String({ description: 'What the operator typed before Enter (with `prompt`).' })),
  }),
  diffMode: 'unsupported',
  checkMode: 'supported',
  examples: [
    { title: 'Let caches warm up', yaml: '- pause:\n    seconds: 30' },
    { title: 'Ask before touching production', yaml: '- pause:\n    prompt: "Upgrade {{ cluster_name }} now? Press Enter"\n  run_once: true' },
  ],
  async run(args, ctx) {
    const ms = (args.seconds + args.minutes * 60) * 1000;
    const started = Date.now();
    if (args.prompt !== undefined && ms === 0) {
      if (!process.stdin.isTTY) return { status: 'failed', msg: 'pause: a prompt needs an interactive terminal (stdin is not a TTY); use seconds/minutes in automation' };
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        const answer = await rl.question(`${args.prompt}: `, { signal: ctx.signal });
        return { status: 'ok', data: { user_input: answer, elapsed_ms: Date.now() - started } };
      } catch {
        return { status: 'failed', msg: 'pause interrupted' };
      } finally {
        rl.close();
      }
    }
    if (ms > 0) {
      try {
        await sleep(ms, undefined, { signal: ctx.signal });
      } catch {
        return { status: 'failed', msg: `pause interrupted after ${((Date.now() - started) / 1000).toFixed(1)}s` };
      }
    }
    return { status: 'ok', data: { elapsed_ms: Date.now() - started } };
  },
});

/** `pause`: wait for a time, or for the operator to press Enter (on a TTY). */
import { setTimeout as sleep } from 'node:timers/promises';
import { createInterface } from 'node:readline/promises';
import { defineModule } from 'kplay/sdk';

/** Arguments of `pause`. */
export interface PauseArgs {
  /** Seconds to wait. */
  seconds?: number;
  /** Minutes to wait. */
  minutes?: number;
  /** Question shown to the operator; waits for Enter (only on a TTY, otherwise fails). */
  prompt?: string;
}

export default defineModule<PauseArgs>({
  name: 'pause',
  summary: 'Wait for some time or for the operator to confirm',
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      seconds: { type: 'number', minimum: 0, description: 'Seconds to wait.' },
      minutes: { type: 'number', minimum: 0, description: 'Minutes to wait.' },
      prompt: { type: 'string', description: 'Ask the operator and wait for Enter (needs a TTY; input is recorded as `user_input`).' },
    },
  },
  checkMode: 'supported',
  examples: [
    { title: 'Let caches warm up', yaml: '- pause:\n    seconds: 30' },
    { title: 'Ask before touching production', yaml: '- pause:\n    prompt: "Upgrade {{ cluster_name }} now? Press Enter"\n  run_once: true' },
  ],
  async run(args, ctx) {
    const ms = ((args.seconds ?? 0) + (args.minutes ?? 0) * 60) * 1000;
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

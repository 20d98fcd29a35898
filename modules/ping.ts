/**
 * `ping` (ansible.builtin.ping): prove a task runs; `data: crash` fails on purpose, as Ansible's.
 * kplay's tasks run on the controller, so this checks kplay itself, not a cluster (use
 * `k8s_cluster_info` or `k8s_info` for that).
 */
import { defineModule, Default, Type } from 'kplay/sdk';

export default defineModule({
  name: 'ping',
  summary: 'Answer pong (ansible.builtin.ping)',
  schema: Type.Object(
    { data: Default(Type.String({ description: 'What to answer; `crash` makes the task fail.' }), 'pong') },
    { additionalProperties: false },
  ),
  result: Type.Object({ ping: Type.String({ description: 'The `data` given (`pong`).' }) }),
  diffMode: 'unsupported',
  checkMode: 'supported',
  examples: [{ title: 'A task that does nothing but answer', yaml: '- ping:' }],
  async run(args) {
    if (args.data === 'crash') return { status: 'failed', msg: 'Task failed: Module failed: boom' };
    return { status: 'ok', data: { ping: args.data } };
  },
});

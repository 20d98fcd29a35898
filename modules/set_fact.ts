/** `set_fact`: set variables for this cluster for the rest of the run. */
import { defineModule, Type } from 'kplay/sdk';

export default defineModule({
  name: 'set_fact',
  summary: 'Set variables (facts) for the rest of the run on this cluster',
  description: 'Every key becomes a variable at `set_fact` precedence (above task vars, below `-e`). Values are templated once, when the task runs.',
  schema: Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), Type.Unknown({ description: 'A variable to set.' }), { additionalProperties: false }),
  result: Type.Object({ facts: Type.Record(Type.String(), Type.Unknown(), { description: 'The variables set.' }) }),
  diffMode: 'unsupported',
  checkMode: 'supported',
  examples: [{ title: 'Compute a value once, use it later', yaml: '- set_fact:\n    release_name: "podinfo-{{ cluster_name }}"\n    old_version: "{{ current.data.version }}"' }],
  async run(args) {
    if (Object.keys(args).length === 0) return { status: 'failed', msg: 'set_fact: give at least one variable' };
    return { status: 'ok', facts: { ...args }, data: { facts: args } };
  },
});

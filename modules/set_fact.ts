/** `set_fact`: set variables for this cluster for the rest of the run. */
import { defineModule, Type } from 'kplay/sdk';

export default defineModule({
  name: 'set_fact',
  summary: 'Set variables (facts) for the rest of the run on this cluster',
  description:
    'Every key becomes a variable at `set_fact` precedence (above task vars, below `-e`). Values are templated once, when the task runs; so are keys (`"{{ name }}": value`), as ansible-core does, and a key that is not a valid variable name fails the task then (`Invalid variable name \'1\' of type \'int\'.`). The free form `set_fact: a=b c="{{ x }}"` is the same as the map. `cacheable` is accepted and sets no variable (kplay has no fact cache: the facts last for the run).',
  variableKeys: true,
  schema: Type.Record(Type.String(), Type.Unknown({ description: 'A variable to set.' }), { additionalProperties: false }),
  result: Type.Object({ ansible_facts: Type.Record(Type.String(), Type.Unknown(), { description: 'The variables set (as ansible-core registers them).' }) }),
  diffMode: 'unsupported',
  checkMode: 'supported',
  examples: [
    { title: 'Compute a value once, use it later', yaml: '- set_fact:\n    release_name: "podinfo-{{ cluster_name }}"\n    old_version: "{{ current.data.version }}"' },
    { title: 'The free form', yaml: '- set_fact: release_name=podinfo-{{ cluster_name }} replicas=3' },
  ],
  async run(args) {
    const { cacheable: _cacheable, ...facts } = args;
    if (Object.keys(facts).length === 0) return { status: 'failed', msg: 'No key/value pairs provided, at least one is required for this action to succeed' };
    return { status: 'ok', facts, data: { ansible_facts: facts } };
  },
});

/**
 * `setup` (ansible.builtin.setup): gather the controller's facts, as `gather_facts: true` does,
 * on demand and optionally filtered. kplay runs every task on the controller, so the facts are
 * the controller's (see the README for the list).
 */
import { defineModule, fnmatchRegex, gatherFacts, Default, Type } from 'kplay/sdk';

export default defineModule({
  name: 'setup',
  summary: 'Gather facts about the machine running kplay (ansible.builtin.setup)',
  description:
    'Sets the facts `gather_facts: true` sets — `ansible_date_time`, `ansible_env`, `ansible_hostname`, … each also under `ansible_facts` — and registers them under `ansible_facts` with their `ansible_` names, as ansible.builtin.setup. `filter` keeps the facts whose `ansible_` name matches one of its shell-style patterns. `gather_subset`, `gather_timeout` and `fact_path` are accepted: kplay gathers one small set of facts from the controller.',
  schema: Type.Object(
    {
      filter: Default(Type.Union([Type.Array(Type.String()), Type.String()], { description: 'Only the facts whose `ansible_` name matches one of these shell-style patterns (`ansible_date_time`, `ansible_*_mb`); empty: all.' }), []),
      gather_subset: Type.Optional(Type.Union([Type.Array(Type.String()), Type.String()], { description: 'Accepted: kplay gathers one small set of facts.' })),
      gather_timeout: Type.Optional(Type.Integer({ description: 'Accepted: gathering reads local values only.' })),
      fact_path: Type.Optional(Type.String({ description: 'Accepted: kplay reads no local fact files.' })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({ ansible_facts: Type.Record(Type.String(), Type.Unknown(), { description: 'The facts gathered, by their `ansible_` names.' }) }),
  diffMode: 'unsupported',
  checkMode: 'supported',
  examples: [{ title: 'Today\'s date for a change ticket', yaml: '- setup: { filter: [ansible_date_time] }\n- debug: { msg: "window of {{ ansible_date_time.date }}" }' }],
  async run(args, ctx) {
    const { facts } = gatherFacts();
    const patterns = (Array.isArray(args.filter) ? args.filter : args.filter.split(',')).map((p) => p.trim()).filter((p) => p !== '').map(fnmatchRegex);
    const kept = Object.entries(facts).filter(([k]) => patterns.length === 0 || patterns.some((re) => re.test(`ansible_${k}`)));
    // facts gathered before stay (as Ansible merges `ansible_facts`)
    const before = ctx.vars.ansible_facts;
    const vars: Record<string, unknown> = { ansible_facts: { ...(before !== null && typeof before === 'object' && !Array.isArray(before) ? before : {}), ...Object.fromEntries(kept) } };
    for (const [k, v] of kept) vars[`ansible_${k}`] = v;
    return { status: 'ok', facts: vars, data: { ansible_facts: Object.fromEntries(kept.map(([k, v]) => [`ansible_${k}`, v])) } };
  },
});

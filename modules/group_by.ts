/** `group_by`: put the task's cluster into a group made from a key, as ansible-core's action. */
import { defineModule, Type } from 'kplay/sdk';

const schema = Type.Object(
  {
    key: Type.String({ description: 'The group to put the cluster in (made when missing; spaces become `-`).', examples: ['env_{{ env }}'] }),
    parents: Type.Optional(Type.Unknown({ description: 'The parent group(s) of the group (a name or a list; made when missing). @default ["all"]' })),
  },
  { additionalProperties: false },
);

export default defineModule({
  name: 'group_by',
  summary: 'Group clusters by a key for the following plays',
  description:
    "As ansible-core's: on each cluster, the group `key` (spaces become `-`) is made when missing, under each of `parents` (default `all`), and the cluster joins it; the task is changed when the inventory changed. Host patterns of the plays that follow (and `groups`, `group_names`) see it.",
  schema,
  result: Type.Object({ add_group: Type.String({ description: 'The group.' }), parent_groups: Type.Array(Type.String(), { description: 'Its parents.' }) }),
  diffMode: 'unsupported',
  checkMode: 'supported',
  examples: [{ title: 'Group clusters by their environment', yaml: '- group_by:\n    key: env_{{ env }}\n    parents: [by_env]' }],
  async run(args, ctx) {
    const p = args.parents ?? ['all'];
    const parents = (Array.isArray(p) ? p : [p]).map((x) => String(x).replace(/ /g, '-'));
    const key = String(args.key).replace(/ /g, '-');
    if (!ctx.inventory) return { status: 'failed', msg: 'group_by runs only in a play (it changes the run\'s inventory)' };
    const changed = await ctx.inventory.addGroup(key, parents);
    return { status: changed ? 'changed' : 'ok', data: { add_group: key, parent_groups: parents } };
  },
});

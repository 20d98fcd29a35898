/**
 * `meta: <action>` (flush_handlers, end_play, end_batch, end_cluster — Ansible's end_host —, noop,
 * clear_facts, clear_host_errors).
 */
import { InputError } from '../../load/errors.js';
import { posOf } from '../../load/yaml.js';
import { META_ACTIONS, META_KEYS } from '../syntax.js';
import type { MetaNode } from '../types.js';
import { common, unknownKeyError } from './common.js';
import type { NodeInput, Obj } from './context.js';

/** Read a `meta` task. */
export function parseMeta(raw: Obj, at: NodeInput): Promise<MetaNode> {
  const { pos, scope, ctx } = at;
  for (const k of Object.keys(raw)) if (!META_KEYS.has(k)) throw unknownKeyError(raw, k, META_KEYS, 'meta');
  const action = String(raw.meta);
  if (!META_ACTIONS.has(action)) throw new InputError(`unknown meta action '${action}'`, posOf(raw, 'meta'), `use one of: ${[...META_ACTIONS].join(', ')}`);
  // `end_host` is Ansible's name for kplay's `end_cluster`.
  const node: MetaNode = { ...common(raw, pos, scope, ctx.opts), kind: 'meta', action: (action === 'end_host' ? 'end_cluster' : action) as MetaNode['action'] };
  return Promise.resolve(node);
}

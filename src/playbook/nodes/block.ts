/**
 * `block:` with `rescue:` and `always:`: the keywords of a block (declared in `syntax.ts`) and its
 * three task lists, read in a scope that carries the block's tags, vars and inherited keywords.
 */
import { InputError } from '../../load/errors.js';
import { posOf } from '../../load/yaml.js';
import { BLOCK_KEYS } from '../syntax.js';
import type { BlockNode, TaskNode } from '../types.js';
import { common, inheritOf, unknownKeyError, validateKeywords } from './common.js';
import type { NodeInput, Obj, Scope } from './context.js';

/** Read a block. */
export async function parseBlock(raw: Obj, at: NodeInput): Promise<BlockNode> {
  const { pos, scope, ctx } = at;
  for (const k of Object.keys(raw)) if (!BLOCK_KEYS.has(k)) throw unknownKeyError(raw, k, BLOCK_KEYS, 'block');
  validateKeywords(raw, pos);
  const c = common(raw, pos, scope, ctx.opts);
  const inner: Scope = { ...scope, tags: c.tags, blockVars: c.vars ? [...scope.blockVars, c.vars] : scope.blockVars, inherit: inheritOf(c) };
  const list = (k: string): Promise<TaskNode[]> => {
    const v = raw[k];
    if (v === undefined || v === null) return Promise.resolve([]);
    if (!Array.isArray(v)) throw new InputError(`\`${k}\` must be a list of tasks`, posOf(raw, k));
    // a failure in `block:` is handled when there is a rescue (a task's argument error included)
    const rescued = k === 'block' && Array.isArray(raw.rescue) && raw.rescue.length > 0;
    return ctx.list(v, rescued ? { ...inner, rescued: true } : inner);
  };
  // The children see the block's vars through `blockVars`; the block keeps them for its own `when`.
  const node: BlockNode = { ...c, kind: 'block', block: await list('block'), rescue: await list('rescue'), always: await list('always') };
  return node;
}

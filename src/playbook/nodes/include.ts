/**
 * `include_tasks:` (read per cluster at run time; checked now when the file name is not templated)
 * and `import_tasks:` (read now, as a block), with Ansible's `{file: …}` and `args: {file: …}` forms.
 */
import { isRecord } from '../../core/shape.js';
import { includeFile, type IncludeSite } from '../../core/dwim.js';
import { InputError } from '../../load/errors.js';
import { posOf } from '../../load/yaml.js';
import { templar, Templar } from '../../template/index.js';
import { parseKv } from '../keywords.js';
import { INCLUDE_KEYS } from '../syntax.js';
import type { BlockNode, IncludeNode, TaskNode } from '../types.js';
import { common, inheritOf, loopControlOf, unknownKeyError, validateKeywords } from './common.js';
import { allowedWith, loopOf, type NodeInput, type Obj, type Scope } from './context.js';

/** Where an include in `scope` is, for {@link includeFile}. */
export function site(target: string, scope: Pick<Scope, 'role' | 'handler' | 'includes' | 'roles'>, dynamic: boolean): IncludeSite {
  return { target, ...(scope.role ? { roleDir: scope.role.dir } : {}), handler: scope.handler, parents: scope.includes ?? [], playbookDir: scope.roles.playbookDir, dynamic };
}

/** Read an `include_tasks` / `import_tasks` task. */
export async function parseInclude(raw: Obj, at: NodeInput): Promise<TaskNode> {
  const { pos, scope, ctx, withLoop } = at;
  const allowed = allowedWith(INCLUDE_KEYS, withLoop);
  for (const k of Object.keys(raw)) if (!allowed.has(k)) throw unknownKeyError(raw, k, INCLUDE_KEYS, 'include');
  validateKeywords(raw, pos);
  const c = common(raw, pos, scope, ctx.opts);
  const dynamic = 'include_tasks' in raw;
  // ansible-core takes `notify` on import_tasks (its tasks inherit it), not on include_tasks
  if (dynamic && 'notify' in raw) throw new InputError("'notify' is not a valid attribute for a TaskInclude", posOf(raw, 'notify'), 'give `notify` to the included tasks, or use import_tasks');
  const key = dynamic ? 'include_tasks' : 'import_tasks';
  let fileRaw = raw[key];
  // `include_tasks: file=x.yml` (Ansible's free form: `key=value` pairs, the rest is the file)
  if (typeof fileRaw === 'string') {
    const { kv, rest } = parseKv(fileRaw);
    if (Object.keys(kv).length > 0) {
      const opts: Obj = rest ? { ...kv, _raw_params: rest } : kv;
      const bad = Object.keys(opts).filter((k) => k !== 'file' && k !== '_raw_params');
      if (bad.length) throw new InputError(`Invalid options for ${key}: ${bad.join(',')}`, posOf(raw, key) ?? pos, 'the options are `file` (or the file name alone); give variables with `vars:`');
      fileRaw = typeof opts._raw_params === 'string' ? opts._raw_params : opts.file;
    }
  }
  // `include_tasks: {file: x.yml}` (Ansible's long form) and `args: {file: …}`
  if (isRecord(fileRaw) && typeof fileRaw.file === 'string') fileRaw = fileRaw.file;
  if ((fileRaw === null || fileRaw === undefined) && isRecord(raw.args) && typeof raw.args.file === 'string') fileRaw = raw.args.file;
  if (typeof fileRaw !== 'string' || !fileRaw) throw new InputError(`\`${key}\` needs a file name`, pos);
  const loopControl = loopControlOf(raw);
  const { loop, loopLookup } = loopOf(raw, withLoop);
  if (dynamic) {
    templar.check(fileRaw, { where: posOf(raw, 'include_tasks') });
    if (loop !== undefined) templar.check(loop, { where: posOf(raw, 'loop') });
    const parents = scope.includes ?? [];
    const node: IncludeNode = { ...c, kind: 'include', file: fileRaw, register: typeof raw.register === 'string' ? raw.register : undefined, parents, handler: scope.handler, loop, loopLookup, loopControl, parentInherit: scope.inherit };
    if (!Templar.isTemplated(fileRaw) && !parents.some((p) => Templar.isTemplated(p))) {
      // Check the file statically now (it is loaded again, per cluster, at run time).
      const file = includeFile(site(fileRaw, scope, true));
      await ctx.file(file, { ...scope, tags: c.tags, includes: [fileRaw, ...parents] }, posOf(raw, 'include_tasks') ?? pos);
    }
    return node;
  }
  if (Templar.isTemplated(fileRaw)) throw new InputError('import_tasks is static and cannot be templated; use include_tasks', posOf(raw, 'import_tasks'));
  if (loop !== undefined) throw new InputError('import_tasks cannot loop; use include_tasks', posOf(raw, withLoop?.key ?? 'loop'));
  const target = includeFile(site(fileRaw, scope, false));
  const inner: Scope = { ...scope, includes: [fileRaw, ...(scope.includes ?? [])], tags: c.tags, blockVars: c.vars ? [...scope.blockVars, c.vars] : scope.blockVars, inherit: inheritOf(c) };
  const tasks = await ctx.file(target, inner, posOf(raw, 'import_tasks') ?? pos);
  const node: BlockNode = { ...c, name: c.name ?? `import_tasks: ${fileRaw}`, kind: 'block', block: tasks, rescue: [], always: [] };
  return node;
}

/**
 * `import_role:` (expanded now, as a block) and `include_role:` (expanded per cluster at run time;
 * checked now when the name is not templated), with their options (declared in `syntax.ts`).
 */
import { isRecord } from '../../core/shape.js';
import { InputError } from '../../load/errors.js';
import { copyPosRenamed, posOf } from '../../load/yaml.js';
import { templar, Templar } from '../../template/index.js';
import { ansibleBool } from '../booleans.js';
import { parseKv } from '../keywords.js';
import { expandRole } from '../role-expand.js';
import { ROLE_OPTIONS, ROLE_TASK_KEYS } from '../syntax.js';
import type { IncludeRoleNode, TaskCommon, TaskNode } from '../types.js';
import { common, loopControlOf, unknownKeyError, validateKeywords } from './common.js';
import { allowedWith, loopOf, type NodeInput, type Obj, type Scope } from './context.js';

/**
 * The options of a role task as written: a map, or Ansible's free form `name=web tasks_from=x.yml`
 * (read as ansible-core's parse_kv; a word that is no `key=value` pair is kept as `_raw_params`, an
 * unknown option). `role` is ansible-core's other name of `name`.
 */
function roleOptions(v: unknown): unknown {
  let o = v;
  if (typeof v === 'string') {
    const { kv, rest } = parseKv(v);
    // the boolean options as ansible-core converts them (`public=yes`)
    for (const k of ['public', 'allow_duplicates', 'rolespec_validate']) if (typeof kv[k] === 'string') kv[k] = ansibleBool(kv[k] as string) ?? kv[k];
    o = rest ? { ...kv, _raw_params: rest } : kv;
  }
  if (!isRecord(o) || !('role' in o)) return o;
  const { role, ...others } = o;
  const named: Obj = { name: role, ...others };
  copyPosRenamed(o, named, new Map([['role', 'name']]));
  return named;
}

/** Read an `import_role` / `include_role` task. */
export async function parseRoleTask(raw: Obj, at: NodeInput): Promise<TaskNode> {
  const { pos, scope, ctx, withLoop } = at;
  const allowed = allowedWith(ROLE_TASK_KEYS, withLoop);
  for (const k of Object.keys(raw)) if (!allowed.has(k)) throw unknownKeyError(raw, k, ROLE_TASK_KEYS, 'role task');
  validateKeywords(raw, pos);
  const dynamic = 'include_role' in raw;
  const key = dynamic ? 'include_role' : 'import_role';
  const o = roleOptions(raw[key]);
  if (!isRecord(o)) throw new InputError(`\`${key}\` needs a map with \`name: <role>\``, posOf(raw, key) ?? pos);
  for (const k of Object.keys(o)) if (!ROLE_OPTIONS.has(k)) throw new InputError(`${key}: unknown option '${k}'`, posOf(o, k), `allowed: ${[...ROLE_OPTIONS].join(', ')}`);
  if (typeof o.name !== 'string' || !o.name) throw new InputError(`\`${key}\` needs \`name: <role>\``, posOf(raw, key) ?? pos);
  if (o.apply !== undefined) throw new InputError(`${key}: \`apply\` is not supported`, posOf(o, 'apply'), 'put the keywords on a block around the role task instead (when, tags, vars are inherited)');
  const validate = o.rolespec_validate !== false;
  const str = (k: string): string | undefined => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
  const from = { tasks: str('tasks_from'), vars: str('vars_from'), defaults: str('defaults_from'), handlers: str('handlers_from') };
  const c = common(raw, pos, scope, ctx.opts);
  // `vars:` of import_role/include_role are include params (above facts), not block vars.
  const cc: TaskCommon = { ...c, vars: undefined };
  const params = c.vars ?? {};
  const { loop, loopLookup } = loopOf(raw, withLoop);
  if (!dynamic) {
    if (Templar.isTemplated(o.name)) throw new InputError('import_role is static and its name cannot be templated; use include_role', posOf(o, 'name'));
    if (loop !== undefined) throw new InputError('import_role cannot loop; use include_role', posOf(raw, withLoop?.key ?? 'loop'));
    const node = await expandRole({ name: o.name, from, useVars: {}, params, public: o.public !== false, allowDuplicates: o.allow_duplicates !== false, validate }, cc, scope, ctx, posOf(raw, key) ?? pos, isRecord(raw.vars) ? raw.vars : raw);
    return node ?? { ...cc, kind: 'block', block: [], rescue: [], always: [] };
  }
  if (loop !== undefined) templar.check(loop, { where: posOf(raw, withLoop?.key ?? 'loop') });
  const node: IncludeRoleNode = {
    ...c,
    kind: 'include_role',
    roleName: o.name,
    register: typeof raw.register === 'string' ? raw.register : undefined,
    includeArgs: typeof raw[key] === 'string' ? parseKv(raw[key]).kv : { ...o },
    from,
    public: o.public === true,
    allowDuplicates: o.allow_duplicates !== false,
    validate,
    loop,
    loopLookup,
    loopControl: loopControlOf(raw),
    parentInherit: scope.inherit,
  };
  if (!Templar.isTemplated(o.name)) {
    // Check the role statically now (it is loaded again, per cluster, at run time); its handlers
    // join the play's. A check is not a use: its dependencies do not count as already run.
    const check: Scope = { ...scope, roles: { ...scope.roles, seen: new Set(scope.roles.seen) } };
    await expandRole({ name: o.name, from, useVars: {}, params, public: false, allowDuplicates: true }, cc, check, ctx, posOf(raw, key) ?? pos, isRecord(raw.vars) ? raw.vars : raw, true);
  }
  return node;
}

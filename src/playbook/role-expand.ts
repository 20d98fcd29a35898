/**
 * One use of a role expanded into a block: its dependencies (each once per play), the argument-spec
 * validation task, its tasks; its handlers join the play's. Used by a play's `roles:`,
 * `import_role`, and `include_role` (checked when the playbook loads, expanded again at run time).
 */
import { isRecord } from '../core/shape.js';
import path from 'node:path';
import { InputError, type SourcePos } from '../load/errors.js';
import { loadYamlDoc, posOf } from '../load/yaml.js';
import { templar, Templar } from '../template/index.js';
import { checkOptions, specProblems } from './argspec.js';
import { findRole, parseRoleEntry, roleArgumentSpecs, roleDisplayName, roleFile, roleMap } from './roles.js';
import type { BlockNode, IncludeRoleNode, ModuleTask, RoleUse, TaskCommon, TaskNode } from './types.js';
import { checkedHandlers, common, d0, inheritOf, roleEntryKeywords } from './nodes/common.js';
import { type Obj, type ParseContext, type Scope } from './nodes/context.js';

/** One use of a role, as the loader sees it. */
export interface RoleSpec {
  name: string;
  from: IncludeRoleNode['from'];
  useVars: Obj;
  params: Obj;
  public: boolean;
  allowDuplicates: boolean;
  /** Validate the role's argument spec first. @default true */
  validate?: boolean;
}

/**
 * Expand one use of a role into a block: its dependencies' blocks, the argument-spec validation
 * task (when the role declares a spec for the entry point), then its tasks. Its handlers join the
 * play's. Returns undefined for a static role already used with the same parameters (it runs once
 * per play, as in Ansible, unless `allow_duplicates`).
 */
export async function expandRole(spec: RoleSpec, c: TaskCommon, scope: Scope, ctx: ParseContext, pos: SourcePos, raw: Obj | undefined, dynamic = false): Promise<BlockNode | undefined> {
  const dir = findRole(spec.name, { playbookDir: scope.roles.playbookDir, parentRoleDir: scope.role?.dir }, pos);
  const secrets = scope.roles.addSecrets;
  const meta = await roleMap(dir, 'meta', undefined, pos, secrets);
  const key = JSON.stringify([dir, spec.from, spec.params, spec.useVars]);
  const allowDuplicates = spec.allowDuplicates || meta.allow_duplicates === true;
  if (!dynamic && !allowDuplicates) {
    if (scope.roles.seen.has(key)) return undefined;
    scope.roles.seen.add(key);
  }
  if (scope.stack.includes(dir)) throw new InputError(`role dependency cycle: ${[...scope.stack.filter((s) => !s.endsWith('.yml') && !s.endsWith('.yaml')), dir].map((d) => path.basename(d)).join(' → ')}`, pos);
  const role: RoleUse = {
    name: roleDisplayName(spec.name, dir),
    dir,
    defaults: await roleMap(dir, 'defaults', spec.from.defaults, pos, secrets),
    vars: await roleMap(dir, 'vars', spec.from.vars, pos, secrets),
    useVars: spec.useVars,
    params: spec.params,
    deps: [],
    parent: scope.role,
    public: spec.public,
  };
  templar.check(spec.params, { where: pos });
  templar.check(spec.useVars, { where: pos });
  const inner: Scope = { ...scope, role, includes: [], tags: c.tags, stack: [...scope.stack, dir], handler: false, inherit: inheritOf(c) };
  // dependencies (meta/main.yml) run first, each once per play
  const depBlocks: TaskNode[] = [];
  const deps = meta.dependencies;
  if (deps !== undefined && deps !== null) {
    if (!Array.isArray(deps)) throw new InputError(`role ${role.name}: meta dependencies must be a list`, posOf(meta, 'dependencies') ?? pos);
    for (const [i, d] of deps.entries()) {
      const where = posOf(deps, i) ?? pos;
      const dep = parseRoleEntry(d, where);
      const dc: TaskCommon = { ...common(roleEntryKeywords(dep, d0(d)), where, inner, ctx.opts), name: undefined };
      const node = await expandRole({ name: dep.name, from: {}, useVars: dep.useVars, params: dep.params, public: false, allowDuplicates: isRecord(d) && d.allow_duplicates === true }, dc, inner, ctx, where, isRecord(d) ? d : undefined);
      if (node?.role) role.deps.push(node.role);
      if (node) depBlocks.push(node);
    }
  }
  // argument specs: validated first (a task, as in Ansible), literal params checked now
  const entry = spec.from.tasks ?? 'main';
  const specs = await roleArgumentSpecs(dir, meta, secrets);
  const argSpec = isRecord(specs[entry]) ? specs[entry] : undefined;
  const validation: TaskNode[] = [];
  if (argSpec && spec.validate !== false) {
    const options = isRecord(argSpec.options) ? argSpec.options : {};
    const problems = specProblems(options);
    const specFile = roleFile(dir, 'meta', 'argument_specs') ?? roleFile(dir, 'meta') ?? dir;
    if (problems.length) throw new InputError(`role ${role.name}: invalid argument spec '${entry}': ${problems.join('; ')}`, posOf(argSpec) ?? { file: specFile, line: 1, col: 1 });
    staticRoleArgs(role.name, options, spec.params, raw, pos);
    const name = `Validating arguments against arg spec '${entry}'${typeof argSpec.short_description === 'string' ? ` - ${argSpec.short_description}` : ''}`;
    const task: ModuleTask = {
      ...common({ name }, pos, inner, ctx.opts),
      name,
      tags: [...new Set([...inner.tags, 'always'])],
      kind: 'task',
      module: 'validate_argument_spec',
      args: { argument_spec: options, provided_arguments: spec.params },
      loopControl: { loopVar: 'item' },
      notify: [],
      listen: [],
    };
    await ctx.opts.registry.load(task.module); // a task made here, not by the parser: its module is loaded as the parser's are
    validation.push(task);
  }
  // tasks and handlers
  const tasksFile = roleFile(dir, 'tasks', spec.from.tasks);
  if (!tasksFile && spec.from.tasks) throw new InputError(`role ${role.name}: tasks/${spec.from.tasks} not found`, pos);
  const tasks = tasksFile ? await ctx.file(tasksFile, inner, pos) : [];
  const handlersFile = roleFile(dir, 'handlers', spec.from.handlers);
  const handlerKey = `${dir}\u0000${spec.from.handlers ?? 'main'}`;
  if (handlersFile && !scope.roles.handlerDirs.has(handlerKey)) {
    scope.roles.handlerDirs.add(handlerKey);
    const { value, secrets: handlerSecrets } = await loadYamlDoc(handlersFile, pos);
    secrets(handlerSecrets);
    if (value !== null && value !== undefined) {
      if (!Array.isArray(value)) throw new InputError('a handlers file must be a list of handlers', posOf(value) ?? { file: handlersFile, line: 1, col: 1 });
      const hs = checkedHandlers(await ctx.list(value, { ...inner, baseDir: path.dirname(handlersFile), handler: true, stack: [...inner.stack, handlersFile] }));
      // a role's handler also answers to `<role> : <name>`, as in Ansible
      for (const h of hs) if (h.name) h.listen = [...h.listen, `${role.name} : ${h.name}`];
      scope.roles.handlers.push(...hs);
    }
  }
  if (spec.public && !dynamic) scope.roles.publicRoles.push(role);
  return { ...c, name: c.name ?? `role: ${role.name}`, kind: 'block', role, block: [...depBlocks, ...validation, ...tasks], rescue: [], always: [] };
}

/** Literal (untemplated) role parameters checked against the argument spec when the playbook loads. */
function staticRoleArgs(role: string, options: Obj, params: Obj, raw: Obj | undefined, pos: SourcePos): void {
  for (const [k, v] of Object.entries(params)) {
    const spec = options[k];
    if (Templar.isTemplated(v) || !isRecord(spec)) continue;
    // `required` is checked at run time: a required option may come from any variable scope.
    const errors: string[] = [];
    checkOptions({ [k]: { ...spec, required: false } }, { [k]: v }, errors);
    if (errors.length) throw new InputError(`role ${role}: invalid arguments: ${errors.join('; ')}`, (raw ? posOf(raw, k) : undefined) ?? pos, "see the role's meta/argument_specs.yml");
  }
}

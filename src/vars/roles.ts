/**
 * The variables roles bring, computed as ansible-core does (lib/ansible/playbook/role/__init__.py
 * and vars/manager.py): the layers of src/vars/precedence.ts that come from roles.
 */
type Obj = Record<string, unknown>;

/**
 * The variable-bearing part of a role's use (src/playbook/types.ts `RoleVarsSource` has this shape):
 * declared here so variable precedence does not depend on the playbook reader above it.
 */
export interface RoleVarsSource {
  /** `defaults/<defaults_from|main>.yml`. */
  defaults: Obj;
  /** `vars/<vars_from|main>.yml`. */
  vars: Obj;
  /** `vars:` of the role entry / `import_role` / `include_role` task. */
  useVars: Obj;
  /** Inline parameters of a `roles:` entry. */
  params: Obj;
  /** Roles run before this one (`meta` `dependencies`). */
  deps: readonly RoleVarsSource[];
  /** The role whose tasks, or whose dependency list, used this one. */
  parent?: RoleVarsSource;
  /** Exported to the whole play. */
  public: boolean;
}

/** Every dependency of `role`, depth first, dependencies before the roles that need them. */
function allDeps(role: RoleVarsSource): RoleVarsSource[] {
  const out: RoleVarsSource[] = [];
  for (const d of role.deps) out.push(...allDeps(d), d);
  return out;
}

/** Outer → inner chain of roles that used `role` (not including it). */
function parents(role: RoleVarsSource): RoleVarsSource[] {
  const out: RoleVarsSource[] = [];
  for (let p = role.parent; p; p = p.parent) out.unshift(p);
  return out;
}

/** Defaults of a role as its own tasks see them: its dependencies', its parents', its own. */
export function roleDefaults(role: RoleVarsSource): Obj[] {
  return [...allDeps(role).map((d) => d.defaults), ...parents(role).map((p) => p.defaults), role.defaults];
}

/** What a public role exports to the play: its dependencies' `vars/main.yml`, then its own. */
function exportedVars(role: RoleVarsSource): Obj[] {
  return [...role.deps.flatMap(exportedVars), role.vars];
}

/** The vars of a role as its own tasks see them (without params). */
export function ownRoleVars(role: RoleVarsSource): Obj[] {
  const inherited = parents(role).flatMap((p) => [p.useVars, p.vars]);
  return [...inherited, ...role.deps.flatMap(exportedVars), role.vars, role.useVars];
}

/** Role params of `role` and its parents, outer first. */
export function roleParams(role: RoleVarsSource): Obj[] {
  return [...parents(role).map((p) => p.params), role.params];
}

/** The role layers of a task's variables: defaults (layer 0), vars (4a), params (7a). */
export function roleLayers(publicRoles: readonly RoleVarsSource[], own: RoleVarsSource | undefined): { defaults: Obj[]; vars: Obj[]; params: Obj[] } {
  const pub = publicRoles.filter((r) => r.public);
  return {
    defaults: [...pub.flatMap((r) => roleDefaults(r)), ...(own ? roleDefaults(own) : [])],
    vars: [...pub.flatMap((r) => exportedVars(r)), ...(own ? ownRoleVars(own) : [])],
    params: own ? roleParams(own) : [],
  };
}

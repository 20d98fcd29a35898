/**
 * The filter table of the expression language: Jinja2's builtins, ansible.builtin's, the
 * kubernetes.core and community.general filters playbooks use, and Liquid's (for templates written
 * with Liquid's syntax). Short names and fully qualified ones (`ansible.builtin.to_json`,
 * `community.general.json_query`, `kubernetes.core.k8s_config_resource_name`).
 */
import type { FilterDef } from '../plugins.js';
import { Undef, UndefinedError, isMap } from '../values.js';
import { TESTS, linkFilterNames } from '../tests.js';
import { ANSIBLE_DATA_FILTERS } from './ansible-data.js';
import { ANSIBLE_MISC_FILTERS } from './ansible-misc.js';
import { ANSIBLE_TEXT_FILTERS } from './ansible-text.js';
import { COMMUNITY_FILTERS } from './community.js';
import { higherOrderFilters } from './higher.js';
import { JINJA_LIST_FILTERS } from './jinja-lists.js';
import { JINJA_STRING_FILTERS } from './jinja-strings.js';
import { KUBERNETES_FILTERS } from './kubernetes.js';
import { LIQUID_FILTERS as LIQUID, LIQUID_ONLY_FILTERS } from './liquid.js';
import { UNDECRYPTABLE, VAULT_FILTERS } from './vault.js';

const table = new Map<string, FilterDef>();

/** The undefined value an UndefinedError came from, found in the filter's input or arguments (its name kept). */
function findUndef(message: string, values: readonly unknown[], depth = 0): Undef | undefined {
  if (depth > 20) return undefined;
  for (const v of values) {
    if (v instanceof Undef && v.message === message) return v;
    if (Array.isArray(v)) {
      const u = findUndef(message, v, depth + 1);
      if (u) return u;
    } else if (isMap(v)) {
      const u = findUndef(message, Object.values(v), depth + 1);
      if (u) return u;
    }
  }
  return undefined;
}

/**
 * As ansible-core 2.19 runs a filter: using an undefined value inside it (an item, an attribute)
 * does not fail the filter; the filter returns that undefined value, which fails where it is used
 * later, or which `default()` replaces (`[{'a': 1}, {}] | sort(attribute='a') | default('x')` is 'x').
 */
function passUndefined(def: FilterDef): FilterDef {
  return {
    ...def,
    fn: (value, args, kwargs, ctx) => {
      try {
        return def.fn(value, args, kwargs, ctx);
      } catch (e) {
        if (!(e instanceof UndefinedError)) throw e;
        return findUndef(e.message, [value, ...args, ...Object.values(kwargs)]) ?? new Undef(e.message, '');
      }
    },
  };
}

function add(names: readonly string[], defIn: FilterDef): void {
  const def = passUndefined(defIn);
  for (const n of names) table.set(n, def);
}

// Jinja2's builtins and ansible.builtin's filters are all `ansible.builtin.X` in ansible-core 2.19.
for (const group of [JINJA_STRING_FILTERS, JINJA_LIST_FILTERS, ANSIBLE_TEXT_FILTERS, ANSIBLE_DATA_FILTERS, ANSIBLE_MISC_FILTERS, VAULT_FILTERS]) {
  for (const [name, def] of Object.entries(group)) add([name, `ansible.builtin.${name}`], def);
}
// kplay's own, not a plug-in (an inline vault value that could not be decrypted)
for (const [name, def] of Object.entries(UNDECRYPTABLE)) add([name], def);
const dflt = JINJA_LIST_FILTERS.default;
if (dflt) add(['d', 'ansible.builtin.d'], dflt);
const count = JINJA_LIST_FILTERS.count;
if (count) add(['count', 'ansible.builtin.count'], count);

const higher = higherOrderFilters(
  (name) => table.get(name),
  (name) => TESTS.get(name),
);
for (const [name, def] of Object.entries(higher)) add([name, `ansible.builtin.${name}`], def);

const k8sName = KUBERNETES_FILTERS.k8s_config_resource_name;
if (k8sName) add(['k8s_config_resource_name', 'kubernetes.core.k8s_config_resource_name'], k8sName);
const jsonQuery = KUBERNETES_FILTERS.json_query;
if (jsonQuery) add(['json_query', 'community.general.json_query'], jsonQuery);
for (const [name, def] of Object.entries(COMMUNITY_FILTERS)) add([`community.general.${name}`], def);

// Liquid-only names (no Jinja2/Ansible filter has them): usable with either syntax.
for (const [name, def] of Object.entries(LIQUID_ONLY_FILTERS)) if (!table.has(name)) table.set(name, def);

linkFilterNames((name) => table.has(name));

/** Every filter by name (Jinja2/Ansible semantics; Liquid-only names included). */
export const FILTERS: ReadonlyMap<string, FilterDef> = table;

/**
 * Liquid's versions, for a filter written with Liquid's argument syntax (`x | default: 3`): look
 * the name up here first, then in {@link FILTERS}.
 */
export const LIQUID_FILTERS: ReadonlyMap<string, FilterDef> = new Map(Object.entries(LIQUID));

export { TESTS } from '../tests.js';

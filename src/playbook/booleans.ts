/**
 * Module arguments declared boolean take Ansible's spellings (`check_type_bool`): `yes`/`no`,
 * `on`/`off`, `y`/`n`, `t`/`f`, `1`/`0`, `true`/`false` in any case — `wait: yes` as an Ansible
 * playbook writes it (kplay's YAML reader keeps `yes` a string, as YAML 1.2 does).
 */
import type { JsonSchema } from '../core/module.js';
import { isRecord } from '../core/shape.js';

type Obj = Record<string, unknown>;

const TRUE = new Set(['y', 'yes', 'on', '1', 'true', 't']);
const FALSE = new Set(['n', 'no', 'off', '0', 'false', 'f']);

/** Whether a property schema accepts a boolean and no string (so a string there can only mean a boolean). */
function booleanOnly(s: JsonSchema): boolean {
  if (s.type === 'boolean') return true;
  const branches = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (!Array.isArray(branches)) return false;
  return branches.some((b) => b.type === 'boolean') && !branches.some((b) => b.type === 'string' || b.type === undefined);
}

/** Ansible's boolean of a string, or undefined when it is not one. */
export function ansibleBool(v: string): boolean | undefined {
  const l = v.trim().toLowerCase();
  return TRUE.has(l) ? true : FALSE.has(l) ? false : undefined;
}

/**
 * `args` with Ansible's boolean spellings turned into booleans where the schema declares a
 * boolean (nested objects and lists of objects too). Returns `args` itself when nothing changes.
 */
export function ansibleBooleans(schema: JsonSchema, args: unknown): unknown {
  if (!isRecord(args) || !isRecord(schema.properties)) return args;
  const props = schema.properties as Record<string, JsonSchema>;
  let out: Obj | undefined;
  for (const [k, v] of Object.entries(args)) {
    const p = props[k];
    if (!p) continue;
    let nv: unknown = v;
    if (typeof v === 'string' && booleanOnly(p)) nv = ansibleBool(v) ?? v;
    else if (isRecord(v) && isRecord(p.properties)) nv = ansibleBooleans(p, v);
    else if (Array.isArray(v) && isRecord(p.items)) {
      const mapped = v.map((x) => ansibleBooleans(p.items as JsonSchema, x));
      if (mapped.some((x, i) => x !== v[i])) nv = mapped;
    }
    if (nv !== v) {
      out ??= { ...args };
      out[k] = nv;
    }
  }
  return out ?? args;
}

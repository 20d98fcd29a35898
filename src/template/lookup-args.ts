/** Argument handling shared by the lookups (`lookups.ts`): Ansible's loose booleans, flattened terms. (Options a lookup does not declare are ignored, as ansible-core's `set_options` reads only declared ones.) */

/** ansible's `boolean(value, strict=False)`. */
export function convertBoolLoose(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  const s = typeof v === 'string' ? v.toLowerCase().trim() : v;
  return s === 'y' || s === 'yes' || s === 'on' || s === '1' || s === 'true' || s === 't' || s === 1 || s === 1.0;
}

/** LookupBase._flatten: one level of lists. */
export function flat1(terms: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const t of terms) {
    if (Array.isArray(t)) out.push(...t);
    else out.push(t);
  }
  return out;
}

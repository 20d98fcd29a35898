/**
 * Shape checks for JSON-like values read from YAML, JSON and the Kubernetes API — one `isRecord`
 * for every layer (a value a template builds may be a class instance: see template/values.ts's
 * `isMap` for the plain-object check of the expression language).
 */

/** A map (a JSON object): not null, not a list. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

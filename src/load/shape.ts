/** Shape checks for JSON-like values read from YAML, JSON and the Kubernetes API. */

/** A map (a JSON object): not null, not a list. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

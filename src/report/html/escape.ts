/** Escaping for the HTML reports: every text that reaches a page goes through one of these. */

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text or attribute value, escaped for HTML. */
export function esc(s: string | number | boolean | undefined | null): string {
  return s === undefined || s === null ? '' : String(s).replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

/**
 * A value as JSON for a `<script type="application/json">` block: `<` (and the line separators
 * JavaScript once treated as newlines) escaped, so no text of the data can end the block.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** `1.2 s`, `3 min 4 s`, `250 ms`. */
export function duration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${Math.round(s % 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

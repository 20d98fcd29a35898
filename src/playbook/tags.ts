/**
 * `--tags` / `--skip-tags` selection as ansible-core's `Taggable.evaluate_tags` decides it, with the
 * special tags `always`, `never`, `tagged`, `untagged` and `all`. One rule for the executor
 * (src/executor/play.ts) and the listings (`--list-tasks`, `--list-tags`: src/playbook/listing.ts).
 */

/** Whether a task (or include) whose effective tags are `tags` runs under `--tags only --skip-tags skip`. */
export function tagsSelected(tags: readonly string[], only: readonly string[], skip: readonly string[]): boolean {
  const t = new Set(tags);
  if (skip.some((s) => t.has(s) || (s === 'tagged' && t.size > 0) || (s === 'untagged' && t.size === 0) || s === 'all')) return false;
  if (t.has('never') && !only.some((o) => t.has(o) && o !== 'all')) return false;
  if (only.length === 0 || only.includes('all')) return true;
  if (t.has('always')) return true;
  if (only.includes('tagged') && t.size > 0) return true;
  if (only.includes('untagged') && t.size === 0) return true;
  return only.some((o) => t.has(o));
}

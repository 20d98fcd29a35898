/**
 * Diffs of the local modules in kplay's shape ({@link DiffEntry}: a label and before/after text),
 * from what Ansible puts in `diff`: a map of attributes (`file`) or file contents (`copy`).
 */
import type { DiffEntry } from '../core/module.js';

/** One `key: value` line per attribute, sorted (as Ansible's YAML diff callback prints them). */
function lines(attrs: Record<string, unknown>): string {
  return Object.keys(attrs)
    .sort()
    .map((k) => `${k}: ${typeof attrs[k] === 'string' ? String(attrs[k]) : JSON.stringify(attrs[k])}\n`)
    .join('');
}

/** The diff of a path's attributes (`state`, `mode`, `owner`…), labelled with the path. */
export function attrDiff(path: string, before: Record<string, unknown>, after: Record<string, unknown>): DiffEntry {
  return { label: path, before: lines({ path, ...before }), after: lines({ path, ...after }), ansible: { before: { path, ...before }, after: { path, ...after } } };
}

/** The diff of a file's content (`before` empty when it did not exist), labelled with the destination (ansible's `before_header` only when it `existed`). */
export function contentDiff(dest: string, before: string, after: string, existed = before !== ''): DiffEntry {
  return { label: dest, before, after, ansible: { before, after, ...(existed ? { before_header: dest } : {}), after_header: dest } };
}

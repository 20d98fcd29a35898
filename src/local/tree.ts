/**
 * Recursive operations on local directories for `file` (`recurse: true`, `state: absent`).
 */
import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { applyAttrs, type WantedAttrs } from './files.js';

/** Apply owner/group/mode to everything under `dir` (not following links, whose own owner is set). Returns whether anything changed. */
export function applyAttrsRecursive(dir: string, want: WantedAttrs, check: boolean): boolean {
  let changed = false;
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    const st = lstatSync(p);
    if (st.isSymbolicLink()) {
      changed = applyAttrs(p, { owner: want.owner, group: want.group }, check, false).changed || changed;
      continue;
    }
    changed = applyAttrs(p, want, check).changed || changed;
    if (st.isDirectory()) changed = applyAttrsRecursive(p, want, check) || changed;
  }
  return changed;
}

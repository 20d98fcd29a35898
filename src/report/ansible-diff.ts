/**
 * `--diff` text as ansible-core's callback writes it (`CallbackBase._get_diff`): Python difflib's
 * unified diff of before and after, headed `--- before: LABEL` / `+++ after: LABEL`, three lines of
 * context, `\ No newline at end of file` after a last line without one, a blank line after.
 */
import { structuredPatch } from 'diff';
import type { DiffEntry } from '../core/module.js';
import { pyJson } from './python-text.js';

/** difflib's `_format_range_unified`: `start` alone for one line, `start,length` otherwise (`start-1,0` when empty). */
function range(start: number, length: number): string {
  if (length === 1) return String(start);
  return `${length === 0 ? start - (start > 0 ? 1 : 0) : start},${length}`;
}

/** Split as Python's `splitlines(True)`, the last line given its newline and the marker when it had none. */
function lines(text: string): string {
  if (text === '' || text.endsWith('\n')) return text;
  return `${text}\n`;
}

/**
 * One diff entry as ansible-core prints it; `color` wraps `+`, `-` and `@@` lines. '' when before
 * and after are the same.
 */
export function ansibleDiff(entry: DiffEntry, color: (line: string, kind: 'add' | 'remove' | 'lines') => string): string {
  const a = entry.ansible;
  // a map is written as `json.dumps(sort_keys=True, indent=4)` and a newline (`_serialize_diff`)
  const text = (v: string | Record<string, unknown>): string => (typeof v === 'string' ? v : `${pyJson(v, 4)}\n`);
  const d = a ? { before: text(a.before), after: text(a.after) } : entry;
  if (d.before === d.after) return '';
  const before = lines(d.before);
  const after = lines(d.after);
  const patch = structuredPatch('', '', before, after, '', '', { context: 3 });
  if (patch.hunks.length === 0) return '';
  const head = a
    ? [a.before_header !== undefined ? `--- before: ${a.before_header}` : '--- before', a.after_header !== undefined ? `+++ after: ${a.after_header}` : '+++ after']
    : [`--- before: ${entry.label}`, `+++ after: ${entry.label}`];
  const out = [color(head[0] as string, 'remove'), color(head[1] as string, 'add')];
  const noNl = (orig: string, line: string, last: boolean): string[] => (last && !orig.endsWith('\n') && orig !== '' ? [line, '\\ No newline at end of file'] : [line]);
  for (const h of patch.hunks) {
    out.push(color(`@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@`, 'lines'));
    let oldSeen = h.oldStart - 1;
    let newSeen = h.newStart - 1;
    const oldTotal = before.split('\n').length - 1;
    const newTotal = after.split('\n').length - 1;
    for (const l of h.lines) {
      if (l.startsWith('\\')) continue;
      if (l.startsWith('-')) {
        oldSeen++;
        out.push(...noNl(d.before, color(l, 'remove'), oldSeen === oldTotal));
      } else if (l.startsWith('+')) {
        newSeen++;
        out.push(...noNl(d.after, color(l, 'add'), newSeen === newTotal));
      } else {
        oldSeen++;
        newSeen++;
        const lastOld = oldSeen === oldTotal && !d.before.endsWith('\n');
        const lastNew = newSeen === newTotal && !d.after.endsWith('\n');
        out.push(l);
        if (lastOld || lastNew) out.push('\\ No newline at end of file');
      }
    }
  }
  return `${out.join('\n')}\n\n`;
}

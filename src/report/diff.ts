/** Unified diffs for `--diff` output (jsdiff: a correct Myers diff beats a hand-written one). */
import { createTwoFilesPatch } from 'diff';

/** A unified diff of two texts labelled `label`; '' when they are equal. */
export function unifiedDiff(before: string, after: string, label: string): string {
  if (before === after) return '';
  const patch = createTwoFilesPatch(before ? `before: ${label}` : '/dev/null', after ? `after: ${label}` : '/dev/null', before, after, undefined, undefined, { context: 3 });
  // Drop jsdiff's "====" header line.
  return patch
    .split('\n')
    .filter((l) => !/^={10,}$/.test(l) && !/^Index: /.test(l))
    .join('\n')
    .trimEnd();
}

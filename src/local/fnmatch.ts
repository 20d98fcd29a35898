/**
 * Python's `fnmatch.fnmatchcase` as a RegExp: `*`, `?`, `[seq]`, `[!seq]` over the whole name
 * (dots and slashes included), for the modules that take shell-style patterns (`find`, `setup`).
 * @example fnmatchRegex('ansible_*_mb').test('ansible_memtotal_mb') // true
 */
export function fnmatchRegex(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i] ?? '';
    if (ch === '*') re += '.*';
    else if (ch === '?') re += '.';
    else if (ch === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) {
        re += '\\[';
        continue;
      }
      let body = glob.slice(i + 1, end).replace(/\\/g, '\\\\');
      if (body.startsWith('!')) body = `^${body.slice(1)}`;
      re += `[${body}]`;
      i = end;
    } else re += ch.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 's');
}

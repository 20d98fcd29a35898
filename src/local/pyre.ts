/**
 * Python `re` patterns and replacement templates in JavaScript, for the modules that take them
 * (`wait_for` `search_regex`, `lineinfile` `regexp`/`backrefs`): named groups `(?P<n>…)`,
 * `(?P=n)`, leading inline flags, and `match.expand` (`\1`, `\g<1>`, `\g<name>`, escapes).
 */

/** A Python pattern as a JavaScript RegExp (always multiline: `$` also matches before a final newline, as Python's). */
export function pyRegex(src: string): RegExp {
  let s = src.replace(/\(\?P<(\w+)>/g, '(?<$1>').replace(/\(\?P=(\w+)\)/g, '\\k<$1>');
  let flags = 'm';
  const lead = /^\(\?([aiLmsux]+)\)/.exec(s);
  if (lead) {
    if (lead[1]?.includes('i')) flags += 'i';
    if (lead[1]?.includes('s')) flags += 's';
    s = s.slice(lead[0].length);
  }
  return new RegExp(s, flags);
}

const ESC: Record<string, string> = { n: '\n', t: '\t', r: '\r', f: '\f', v: '\v', a: '\x07', b: '\b', '\\': '\\' };

/**
 * Python's `match.expand(template)`: group references filled in (an unmatched group gives ''),
 * escapes decoded, other backslashes kept.
 * @throws Error `invalid group reference N` when the pattern has no such group.
 */
export function pyExpand(m: RegExpExecArray, template: string): string {
  return template.replace(/\\g<([^>]*)>|\\(\d{1,2})|\\(.)/gs, (all: string, named: string | undefined, num: string | undefined, ch: string | undefined) => {
    if (named !== undefined || num !== undefined) {
      const ref = named ?? (num as string);
      if (/^\d+$/.test(ref)) {
        const i = Number(ref);
        if (i >= m.length) throw new Error(`invalid group reference ${ref}`);
        return m[i] ?? '';
      }
      if (!m.groups || !(ref in m.groups)) throw new Error(`unknown group name '${ref}'`);
      return m.groups[ref] ?? '';
    }
    return ch !== undefined && ch in ESC ? (ESC[ch] as string) : all;
  });
}

/**
 * How ansible-core cuts a host pattern into its terms (`split_host_pattern` in
 * ansible/inventory/manager.py, with `parse_address` of ansible/parsing/utils/addresses.py):
 *
 * - a list: each item is split, the results are concatenated;
 * - a string with a comma: split on commas only (colons stay inside the terms);
 * - otherwise, when the whole string parses as ONE host address — a hostname (with `[x:y]` ranges),
 *   an IPv4 address, an IPv6 address, any of them with a `:port`, or `[...]:port` — it is one term;
 * - otherwise the terms are the runs of characters other than white space, `:`, `[` and `]`, each
 *   run possibly holding complete `[...]` groups (`web[0:2]:db` is `web[0:2]` and `db`);
 * - every term is stripped, and empty terms are dropped.
 *
 * So `c1:c2:c4` (three short hexadecimal-looking names) is three terms: it is no IPv6 address, which
 * needs eight groups or a `::`. `fe80::1` and `::1` are one term each.
 */

/** `[a:b]` or `[a:b:step]` with decimal bounds (IPv4 components). */
const NUMERIC_RANGE = String.raw`\[(?:[0-9]+:[0-9]+)(?::[0-9]+)?\]`;
/** `[a:b]` or `[a:b:step]` with hexadecimal bounds (IPv6 components). */
const HEX_RANGE = String.raw`\[(?:[0-9a-f]+:[0-9a-f]+)(?::[0-9]+)?\]`;
/** `[a:z]` (one letter each) or a numeric range, with an optional step (hostname labels). */
const ALNUM_RANGE = String.raw`\[(?:[a-z]:[a-z]|[0-9]+:[0-9]+)(?::[0-9]+)?\]`;
/** One 16-bit group of an IPv6 address, or a range. */
const V6 = String.raw`(?:[0-9a-f]{1,4}|${HEX_RANGE})`;
/** One octet of an IPv4 address, or a range. */
const V4 = String.raw`(?:[01]?[0-9]{1,2}|2[0-4][0-9]|25[0-5]|${NUMERIC_RANGE})`;
/**
 * A word character as Python's `\w` with re.UNICODE sees it (letters, digits, marks, underscore);
 * for ASCII text the same class is `[A-Za-z0-9_]`, which compiles in a fraction of the time (a
 * Unicode property class under the `iu` flags costs milliseconds to compile, on every start-up).
 */
const WORD = { unicode: String.raw`[\p{L}\p{N}\p{M}_]`, ascii: '[A-Za-z0-9_]' } as const;

/**
 * Python's `$` (no MULTILINE) also matches just before one final newline; the trailing `\n?`
 * keeps the JavaScript forms equivalent for a yes/no test.
 */
const END = String.raw`\n?$`;

/** The address expressions of parse_address, for ASCII text or for any text. */
interface AddressRegexes {
  bracketedHostPort: RegExp;
  hostPort: RegExp;
  ipv4: RegExp;
  ipv6: RegExp;
  hostname: RegExp;
}

function addressRegexes(kind: keyof typeof WORD): AddressRegexes {
  const u = kind === 'unicode' ? 'u' : '';
  const word = WORD[kind];
  /** A hostname label: starts with a word character or a range, may not end with `-` or `_`. */
  const label = String.raw`(?:${word}|${ALNUM_RANGE})(?:${word}|[_-]|${ALNUM_RANGE})*(?<![_-])`;
  return {
    bracketedHostPort: new RegExp(String.raw`^\[(.+)\]:([0-9]+)${END}`, u),
    hostPort: new RegExp(String.raw`^((?:[^:[\]]|\[[^\]]*\])*):([0-9]+)${END}`, u),
    ipv4: new RegExp(String.raw`^(?:${V4}\.){3}${V4}${END}`, `i${u}`),
    ipv6: new RegExp(
      '^(' +
        [
          String.raw`(?:${V6}:){7}${V6}`,
          String.raw`(?:${V6}:){1,6}:`,
          String.raw`(?:${V6}:)(?::${V6}){1,6}`,
          String.raw`(?:${V6}:){2}(?::${V6}){1,5}`,
          String.raw`(?:${V6}:){3}(?::${V6}){1,4}`,
          String.raw`(?:${V6}:){4}(?::${V6}){1,3}`,
          String.raw`(?:${V6}:){5}(?::${V6}){1,2}`,
          String.raw`(?:${V6}:){6}(?::${V6})`,
          String.raw`:(?::${V6}){1,6}`,
          String.raw`${V6}?::`,
          String.raw`(?:0:){6}(?:${V6}\.){3}${V6}`,
          String.raw`::(?:ffff:)?(?:${V6}\.){3}${V6}`,
          String.raw`(?:0:){5}ffff:(?:${V6}\.){3}${V6}`,
        ].join('|') +
        `)${END}`,
      `i${u}`,
    ),
    hostname: new RegExp(String.raw`^${label}(?:\.${label})*${END}`, `i${u}`),
  };
}

/** Compiled on first use, the Unicode set only for text outside ASCII. */
const compiled: { ascii?: AddressRegexes; unicode?: AddressRegexes } = {};
function regexesFor(text: string): AddressRegexes {
  // eslint-disable-next-line no-control-regex
  const kind = /^[\x00-\x7f]*$/.test(text) ? 'ascii' : 'unicode';
  return (compiled[kind] ??= addressRegexes(kind));
}

/** The terms of a pattern that is not one address: runs outside white space, `:` and brackets. */
const COLON_TERMS = /(?:[^\s:[\]]|\[[^\]]*\])+/gu;

/**
 * True when `text` is one host address as ansible-core's `parse_address(text, allow_ranges=True)`
 * accepts it (a hostname, IPv4 or IPv6 address, ranges allowed, with an optional port).
 */
export function isHostAddress(text: string): boolean {
  const re = regexesFor(text);
  let address = text;
  // as parse_address: the bracketed form first, then the plain one on what is left
  for (const form of [re.bracketedHostPort, re.hostPort]) {
    const m = form.exec(address);
    if (m) address = m[1] ?? '';
  }
  return re.ipv4.test(address) || re.ipv6.test(address) || re.hostname.test(address);
}

/** Python's `str.strip()` of white space. */
function strip(s: string): string {
  return s.replace(/^\s+|\s+$/gu, '');
}

/**
 * The terms of a host pattern exactly as ansible-core's `split_host_pattern` finds them (see the
 * module header). Non-string list items are the caller's to reject.
 */
export function splitHostPattern(pattern: string | readonly string[]): string[] {
  if (typeof pattern !== 'string') return pattern.flatMap((p) => splitHostPattern(p));
  let parts: string[];
  if (pattern.includes(',')) parts = pattern.split(',');
  else if (isHostAddress(pattern)) parts = [pattern];
  else parts = pattern.match(COLON_TERMS) ?? [];
  return parts.map(strip).filter((p) => p !== '');
}

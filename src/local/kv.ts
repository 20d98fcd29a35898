/**
 * Ansible's argument-string parsing for the free-form modules (`command`, `shell`): `split_args`,
 * `parse_kv(check_raw=True)` (only the command options are taken out of the string) and Python's
 * `shlex.split` (POSIX rules), as ansible-core 2.19 does them.
 */

/** Options `parse_kv(check_raw=True)` takes out of a free-form string; everything else stays in the command. */
export const FREE_FORM_OPTIONS: readonly string[] = ['creates', 'removes', 'chdir', 'executable', 'warn', 'stdin', 'stdin_add_newline', 'strip_empty_ends'];

/** Depth of `open`/`close` pairs after `token` (ansible's `_count_jinja2_blocks`). */
function depthAfter(token: string, depth: number, open: string, close: string): number {
  const opens = token.split(open).length - 1;
  const closes = token.split(close).length - 1;
  return opens === closes ? depth : Math.max(0, depth + opens - closes);
}

/** The quote still open after `token` (ansible's `_get_quote_state`). */
function quoteAfter(token: string, quote: string | undefined): string | undefined {
  let q = quote;
  for (let i = 0; i < token.length; i++) {
    const c = token[i] as string;
    if ((c === '"' || c === "'") && (i === 0 || token[i - 1] !== '\\')) {
      if (q) {
        if (c === q) q = undefined;
      } else q = c;
    }
  }
  return q;
}

/**
 * Split on whitespace, keeping quoted parts and Jinja blocks together and newlines in place
 * (ansible's `split_args`).
 * @example splitArgs('a=b c="foo bar"') // ['a=b', 'c="foo bar"']
 */
export function splitArgs(args: string): string[] {
  if (!args) return [];
  const params: string[] = [];
  const items = args.split('\n');
  let quote: string | undefined;
  let inside = false;
  let print = 0;
  let block = 0;
  let comment = 0;
  const appendLast = (s: string): void => {
    if (params.length === 0) params.push('');
    params[params.length - 1] += s;
  };
  items.forEach((item, itemIdx) => {
    const tokens = item.split(' ');
    let continuation = false;
    tokens.forEach((token, idx) => {
      if (token.length === 0 && idx !== 0) {
        appendLast(' ');
        return;
      }
      if (token === '\\' && !inside) {
        continuation = true;
        return;
      }
      const wasInside = inside;
      quote = quoteAfter(token, quote);
      inside = quote !== undefined;
      let appended = false;
      if (inside && !wasInside && !(print || block || comment)) {
        params.push(token);
        appended = true;
      } else if (print || block || comment || inside || wasInside) {
        appendLast(idx === 0 && wasInside ? token : `${idx > 0 ? ' ' : ''}${token}`);
        appended = true;
      }
      for (const [open, close] of [['{{', '}}'], ['{%', '%}'], ['{#', '#}']] as const) {
        const before = open === '{{' ? print : open === '{%' ? block : comment;
        const after = depthAfter(token, before, open, close);
        if (open === '{{') print = after;
        else if (open === '{%') block = after;
        else comment = after;
        if (after !== before && !appended) {
          params.push(token);
          appended = true;
        }
      }
      if (!(print || block || comment) && !inside && !appended && token !== '') params.push(token);
    });
    if (items.length > 1 && itemIdx !== items.length - 1 && !continuation) appendLast('\n');
  });
  if (print || block || comment || inside) throw new Error('failed at splitting arguments, either an unbalanced jinja2 block or quotes');
  return params;
}

/** Remove one pair of matching surrounding quotes (ansible's `unquote`). */
export function unquote(s: string): string {
  if (s.length >= 2 && (s[0] === '"' || s[0] === "'") && s[s.length - 1] === s[0] && s[s.length - 2] !== '\\') return s.slice(1, -1);
  return s;
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', v: '\v' };

/** Python's `unicode-escape` of the escape sequences ansible decodes in k=v values. */
function decodeEscapes(s: string): string {
  return s.replace(/\\(U[0-9a-fA-F]{8}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|N\{[^}]+\}|[0-7]{1,3}|[\\'"abfnrtv])/g, (m: string, e: string) => {
    if (e in ESCAPES) return ESCAPES[e] as string;
    if (/^[uUx]/.test(e)) return String.fromCodePoint(parseInt(e.slice(1), 16));
    if (/^[0-7]/.test(e)) return String.fromCodePoint(parseInt(e, 8));
    return m;
  });
}

/** A free-form string split into the command and the options written as `key=value` in it. */
export interface FreeForm {
  /** The command (`_raw_params`), or undefined when the string held only options. */
  raw?: string;
  /** Options found in the string (only {@link FREE_FORM_OPTIONS}). */
  options: Record<string, string>;
}

/**
 * `parse_kv(s, check_raw=True)`: take `creates=…`, `chdir=…` etc. out of a free-form command.
 * @example parseFreeForm('ls -l chdir=/tmp') // { raw: 'ls -l', options: { chdir: '/tmp' } }
 */
export function parseFreeForm(s: string): FreeForm {
  const options: Record<string, string> = {};
  const raw: string[] = [];
  for (const orig of splitArgs(s)) {
    const x = decodeEscapes(orig);
    let pos = -1;
    for (let i = 1; i < x.length; i++) {
      if (x[i] === '=' && x[i - 1] !== '\\') {
        pos = i;
        break;
      }
    }
    if (!x.includes('=')) raw.push(orig);
    else if (pos < 0) raw.push(x.replace(/\\=/g, '='));
    else {
      const k = x.slice(0, pos);
      if (!FREE_FORM_OPTIONS.includes(k)) raw.push(orig);
      else options[k.trim()] = unquote(x.slice(pos + 1).trim());
    }
  }
  let joined = '';
  for (const p of raw) joined += joined.length === 0 || joined.endsWith('\n') ? p : ` ${p}`;
  return raw.length ? { raw: joined, options } : { options };
}

/**
 * Python's `shlex.split(s)` (POSIX mode, no comments): what `command` runs for a command line.
 * @throws Error `No closing quotation` / `No escaped character`, as Python's.
 * @example shlexSplit(`echo "a b" c\\ d 'e'`) // ['echo', 'a b', 'c d', 'e']
 */
export function shlexSplit(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  let has = false;
  let i = 0;
  while (i < s.length) {
    const c = s[i] as string;
    if (/\s/.test(c)) {
      if (has) out.push(cur);
      cur = '';
      has = false;
      i++;
    } else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) throw new Error('No closing quotation');
      cur += s.slice(i + 1, end);
      has = true;
      i = end + 1;
    } else if (c === '"') {
      i++;
      for (;;) {
        if (i >= s.length) throw new Error('No closing quotation');
        const d = s[i] as string;
        if (d === '"') break;
        if (d === '\\' && (s[i + 1] === '"' || s[i + 1] === '\\')) {
          cur += s[i + 1];
          i += 2;
        } else {
          cur += d;
          i++;
        }
      }
      has = true;
      i++;
    } else if (c === '\\') {
      if (i + 1 >= s.length) throw new Error('No escaped character');
      cur += s[i + 1];
      has = true;
      i += 2;
    } else {
      cur += c;
      has = true;
      i++;
    }
  }
  if (has) out.push(cur);
  return out;
}

/**
 * The tokens of an expression (Jinja2's lexical grammar): names, numbers, strings (adjacent
 * strings are joined by the parser), operators and punctuation. Each token keeps its offset.
 */
import { ExprError, mkInt } from './values.js';

/** A token of an expression. */
export type Token =
  | { readonly kind: 'name'; readonly value: string; readonly at: number }
  | { readonly kind: 'int'; readonly value: number | bigint; readonly at: number }
  | { readonly kind: 'float'; readonly value: number; readonly at: number }
  | { readonly kind: 'string'; readonly value: string; readonly at: number }
  | { readonly kind: 'op'; readonly value: string; readonly at: number }
  | { readonly kind: 'end'; readonly value: ''; readonly at: number };

/** Operators, longest first. */
const OPERATORS = ['**', '//', '==', '!=', '<=', '>=', '<>', '..', '+', '-', '*', '/', '%', '~', '<', '>', '=', '(', ')', '[', ']', '{', '}', '.', ',', ':', '|'];

const ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', v: '\v', '0': '\0', '\n': '' };

/** Decode a Python string literal's body (unknown escapes such as `\d` keep their backslash, as Python does). */
function unescape(body: string): string {
  if (!body.includes('\\')) return body;
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] ?? '';
    if (ch !== '\\' || i === body.length - 1) {
      out += ch;
      continue;
    }
    const next = body[i + 1] ?? '';
    const esc = ESCAPES[next];
    if (esc !== undefined) {
      out += esc;
      i++;
    } else if (next === 'x' && /^[0-9a-fA-F]{2}$/.test(body.slice(i + 2, i + 4))) {
      out += String.fromCharCode(parseInt(body.slice(i + 2, i + 4), 16));
      i += 3;
    } else if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(body.slice(i + 2, i + 6))) {
      out += String.fromCharCode(parseInt(body.slice(i + 2, i + 6), 16));
      i += 5;
    } else if (next === 'U' && /^[0-9a-fA-F]{8}$/.test(body.slice(i + 2, i + 10))) {
      out += String.fromCodePoint(parseInt(body.slice(i + 2, i + 10), 16));
      i += 9;
    } else {
      out += ch;
    }
  }
  return out;
}

/**
 * Split an expression into tokens; the last is `end`. With `rawStrings`, string literals keep
 * their backslashes as written: ansible-core doubles backslashes in the string constants of
 * `{{ … }}` before Jinja decodes them, so `'\d+'` in a YAML-loaded template is the regex `\d+`
 * (conditions and `{% … %}` tags decode escapes as Python does).
 */
export function tokenize(src: string, rawStrings = false): Token[] {
  const out: Token[] = [];
  let i = 0;
  const n = src.length;
  while (i < n) {
    const ch = src[i] ?? '';
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r') {
      i++;
      continue;
    }
    const at = i;
    if (/[A-Za-z_]/.test(ch)) {
      let j = i + 1;
      while (j < n && /\w/.test(src[j] ?? '')) j++;
      out.push({ kind: 'name', value: src.slice(i, j), at });
      i = j;
      continue;
    }
    if (ch === '0' && /[xXoObB]/.test(src[i + 1] ?? '')) {
      const m = /^0([xX][\da-fA-F_]+|[oO][0-7_]+|[bB][01_]+)/.exec(src.slice(i));
      if (!m) throw new ExprError(`invalid number literal`, at);
      const body = (m[1] ?? '').replace(/_/g, '');
      if (body.length < 2) throw new ExprError(`invalid number literal`, at);
      out.push({ kind: 'int', value: mkInt(BigInt(`0${body}`)), at });
      i += m[0].length;
      continue;
    }
    if (/\d/.test(ch)) {
      const m = /^(\d[\d_]*)?(\.\d[\d_]*)?([eE][+-]?\d+)?/.exec(src.slice(i));
      let text = m?.[0] ?? '';
      // `1..5` (a Liquid range) and `x.0.1` (attribute access by index) are not floats
      if (m?.[2] !== undefined && (src[i + (m[1]?.length ?? 0) + 1] === '.' || out[out.length - 1]?.value === '.')) text = m[1] ?? '';
      const clean = text.replace(/_/g, '');
      const isFloat = /[.eE]/.test(clean);
      if (!isFloat && clean.length > 1 && clean.startsWith('0') && /[^0]/.test(clean)) throw new ExprError(`invalid integer literal ${text}: leading zeros are not allowed`, at);
      if (isFloat && !Number.isFinite(Number(clean))) throw new ExprError(`float literal ${text} is out of range`, at);
      out.push(isFloat ? { kind: 'float', value: Number(clean), at } : { kind: 'int', value: clean.length > 15 ? mkInt(BigInt(clean)) : Number(clean), at });
      i += text.length;
      continue;
    }
    if (ch === '"' || ch === "'") {
      let j = i + 1;
      while (j < n && src[j] !== ch) j += src[j] === '\\' ? 2 : 1;
      if (j >= n) throw new ExprError('unterminated string', at, `close the string with ${ch}`);
      const body = src.slice(i + 1, j);
      out.push({ kind: 'string', value: rawStrings ? body : unescape(body), at });
      i = j + 1;
      continue;
    }
    const op = OPERATORS.find((o) => src.startsWith(o, i));
    if (op === undefined) throw new ExprError(`unexpected character ${JSON.stringify(ch)}`, at);
    out.push({ kind: 'op', value: op, at });
    i += op.length;
  }
  out.push({ kind: 'end', value: '', at: n });
  return out;
}

/**
 * Python's `json.dumps` and `json.loads` over the value model: the same text as ansible-core's
 * `to_json`/`to_nice_json` (separators, indentation, `ensure_ascii`, `sort_keys`, float reprs,
 * `NaN`/`Infinity`), and Python's parser with its error messages for `from_json`.
 */
import { ExprError, PyFloat, Undef, mkInt, UndefinedError, isMap, typeName } from '../values.js';
import { intStr } from '../pyrepr.js';
import { pyFloatRepr } from './pynum.js';

/** Options of {@link dumps} (Python's keyword arguments). */
export interface DumpOptions {
  /** `None`: one line; a number of spaces or a string per level. */
  readonly indent?: number | string | null;
  /** Sort dict keys. */
  readonly sortKeys?: boolean;
  /** Escape every non-ASCII character as `\uXXXX` (Python's default). */
  readonly ensureAscii?: boolean;
  /** `[item separator, key separator]`; defaults as Python's. */
  readonly separators?: readonly [string, string] | null;
  /** Allow NaN and infinities (Python's default); otherwise an error. */
  readonly allowNan?: boolean;
  /** Leave out keys that are not strings/numbers (irrelevant here: keys are strings). */
  readonly skipKeys?: boolean;
}

/** Compare strings by code point (Python's string order). */
export function codePointCompare(a: string, b: string): number {
  if (a === b) return 0;
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  while (true) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0) ?? 0;
    const cy = y.value.codePointAt(0) ?? 0;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

const ESC: Readonly<Record<string, string>> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/** A JSON string literal as Python writes it. */
export function jsonString(s: string, ensureAscii = true): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i] ?? '';
    const c = s.charCodeAt(i);
    const e = ESC[ch];
    if (e !== undefined) out += e;
    else if (c < 0x20 || (ensureAscii && c > 0x7e)) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function floatText(n: number, allowNan: boolean): string {
  if (!Number.isFinite(n)) {
    if (!allowNan) throw new ExprError(`Out of range float values are not JSON compliant: ${pyFloatRepr(n)}`);
    return Number.isNaN(n) ? 'NaN' : n > 0 ? 'Infinity' : '-Infinity';
  }
  return pyFloatRepr(n);
}

/** Python's `json.dumps(value, **options)`. */
export function dumps(value: unknown, options: DumpOptions = {}): string {
  const indentOpt = options.indent ?? null;
  const indent = indentOpt === null ? null : typeof indentOpt === 'number' ? ' '.repeat(Math.max(0, indentOpt)) : indentOpt;
  const [itemSep, keySep] = options.separators ?? (indent === null ? [', ', ': '] : [',', ': ']);
  const ensureAscii = options.ensureAscii ?? true;
  const allowNan = options.allowNan ?? true;
  const seen = new Set<unknown>();
  const enc = (v: unknown, level: number): string => {
    if (v instanceof Undef) throw new UndefinedError(v.message);
    if (v === null || v === undefined) return 'null';
    if (v === true) return 'true';
    if (v === false) return 'false';
    if (typeof v === 'string') return jsonString(v, ensureAscii);
    if (typeof v === 'number') return Number.isInteger(v) ? intStr(v) : floatText(v, allowNan);
    if (typeof v === 'bigint') return String(v);
    if (v instanceof PyFloat) return floatText(v.value, allowNan);
    const isList = Array.isArray(v);
    if (!isList && !isMap(v)) throw new ExprError(`Object of type ${typeName(v)} is not JSON serializable`);
    if (seen.has(v)) throw new ExprError('Circular reference detected');
    seen.add(v);
    try {
      const nl = indent === null ? '' : `\n${indent.repeat(level + 1)}`;
      const close = indent === null ? '' : `\n${indent.repeat(level)}`;
      if (isList) {
        if (v.length === 0) return '[]';
        return `[${nl}${v.map((x) => enc(x, level + 1)).join(itemSep + nl)}${close}]`;
      }
      const keys = Object.keys(v);
      if (keys.length === 0) return '{}';
      if (options.sortKeys) keys.sort(codePointCompare);
      const items = keys.map((k) => `${jsonString(k, ensureAscii)}${keySep}${enc(v[k], level + 1)}`);
      return `{${nl}${items.join(itemSep + nl)}${close}}`;
    } finally {
      seen.delete(v);
    }
  };
  return enc(value, 0);
}

/** Python's `json.JSONDecodeError` message: `Expecting value: line 1 column 1 (char 0)`. */
function decodeError(msg: string, text: string, pos: number): ExprError {
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const col = pos - (before.lastIndexOf('\n') + 1) + 1;
  return new ExprError(`${msg}: line ${line} column ${col} (char ${pos})`);
}

const WS = /[ \t\n\r]*/y;

/** Python's `json.loads` (floats stay floats: `1.0` is a {@link PyFloat}). */
export function loads(text: string): unknown {
  let i = 0;
  const skip = (): void => {
    WS.lastIndex = i;
    WS.exec(text);
    i = WS.lastIndex;
  };
  const NUM = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;
  const value = (): unknown => {
    const c = text[i];
    if (c === '"') return str();
    if (c === '{') return obj();
    if (c === '[') return arr();
    if (text.startsWith('null', i)) {
      i += 4;
      return null;
    }
    if (text.startsWith('true', i)) {
      i += 4;
      return true;
    }
    if (text.startsWith('false', i)) {
      i += 5;
      return false;
    }
    if (text.startsWith('NaN', i)) {
      i += 3;
      return NaN;
    }
    if (text.startsWith('Infinity', i)) {
      i += 8;
      return Infinity;
    }
    if (text.startsWith('-Infinity', i)) {
      i += 9;
      return -Infinity;
    }
    NUM.lastIndex = i;
    const m = NUM.exec(text);
    if (m) {
      i = NUM.lastIndex;
      const n = Number(m[0]);
      if (m[1] || m[2]) return Number.isInteger(n) ? new PyFloat(n) : n;
      // an int beyond 2**53 stays exact, as Python's json reads it
      return Number.isSafeInteger(n) ? n : mkInt(BigInt(m[0]));
    }
    throw decodeError('Expecting value', text, i);
  };
  const str = (): string => {
    const start = i;
    i++;
    let out = '';
    while (true) {
      const c = text[i];
      if (c === undefined) throw decodeError('Unterminated string starting at', text, start);
      if (c === '"') {
        i++;
        return out;
      }
      if (c === '\\') {
        const e = text[i + 1];
        const simple: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
        if (e !== undefined && simple[e] !== undefined) {
          out += simple[e];
          i += 2;
          continue;
        }
        if (e === 'u') {
          const h = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(h)) throw decodeError('Invalid \\uXXXX escape', text, i + 1);
          out += String.fromCharCode(parseInt(h, 16));
          i += 6;
          continue;
        }
        throw decodeError('Invalid \\escape', text, i);
      }
      if (c.charCodeAt(0) < 0x20) throw decodeError('Invalid control character at', text, i);
      out += c;
      i++;
    }
  };
  const obj = (): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    i++;
    skip();
    if (text[i] === '}') {
      i++;
      return out;
    }
    while (true) {
      if (text[i] !== '"') throw decodeError('Expecting property name enclosed in double quotes', text, i);
      const k = str();
      skip();
      if (text[i] !== ':') throw decodeError("Expecting ':' delimiter", text, i);
      i++;
      skip();
      Object.defineProperty(out, k, { value: value(), enumerable: true, writable: true, configurable: true });
      skip();
      if (text[i] === '}') {
        i++;
        return out;
      }
      if (text[i] !== ',') throw decodeError("Expecting ',' delimiter", text, i);
      i++;
      skip();
    }
  };
  const arr = (): unknown[] => {
    const out: unknown[] = [];
    i++;
    skip();
    if (text[i] === ']') {
      i++;
      return out;
    }
    while (true) {
      out.push(value());
      skip();
      if (text[i] === ']') {
        i++;
        return out;
      }
      if (text[i] !== ',') throw decodeError("Expecting ',' delimiter", text, i);
      i++;
      skip();
    }
  };
  skip();
  const v = value();
  skip();
  if (i !== text.length) throw decodeError('Extra data', text, i);
  return v;
}

/**
 * kplay's own Liquid filters (the ops toolbox), registered on top of Liquid's standard filters.
 *
 * Every filter is a pure function of its input and arguments: no file system, network, clock
 * or environment access. Filters that fail throw a plain `Error`; the engine turns it into an
 * `InputError` naming the template.
 */
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { TokenKind, toValue, type FilterImplOptions } from 'liquidjs';
import { parse as parseYamlText, stringify as stringifyYaml } from 'yaml';

/** `this` of a filter call: what liquidjs hands every filter (only `token` is used here). */
interface FilterThis {
  token?: { input?: string; begin?: number; args?: unknown[] };
}

/** A filter implementation: the input value plus the arguments written after `:`. */
type FilterFn = (this: FilterThis, value: unknown, ...args: unknown[]) => unknown;

/** Keyword arguments (`name: value`) arrive from liquidjs as `[name, value]` pairs. */
function splitArgs(args: unknown[]): { positional: unknown[]; keywords: Map<string, unknown> } {
  const positional: unknown[] = [];
  const keywords = new Map<string, unknown>();
  for (const a of args) {
    if (Array.isArray(a) && a.length === 2 && typeof a[0] === 'string' && isKeywordPair(a)) keywords.set(a[0], a[1]);
    else positional.push(a);
  }
  return { positional, keywords };
}

/** liquidjs marks nothing on keyword pairs; a 2-element array whose first item is a string is ambiguous,
 * so keyword pairs are recognised by the tokenizer shape only for the names a filter declares. */
const KEYWORDS = new Set(['allow_false', 'key_name', 'value_name', 'recursive', 'indent']);
function isKeywordPair(a: unknown[]): boolean {
  return KEYWORDS.has(a[0] as string);
}

/** True for `{}`-like maps (not arrays, not class instances). */
export function isPlainMap(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Set a property safely (also for a key named `__proto__`). */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function str(value: unknown): string {
  const v: unknown = toValue(value);
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function toNumberIndent(v: unknown, fallback: number): number {
  const n = Number(toValue(v));
  return Number.isFinite(n) && n >= 0 ? Math.min(Math.floor(n), 10) : fallback;
}

/** Deep-merge maps: later maps win; lists and scalars are replaced, not merged. */
function deepMerge(a: Record<string, unknown>, b: Record<string, unknown>, recursive: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(a)) setOwn(out, k, v);
  for (const [k, v] of Object.entries(b)) {
    const cur = Object.prototype.hasOwnProperty.call(out, k) ? out[k] : undefined;
    setOwn(out, k, recursive && isPlainMap(cur) && isPlainMap(v) ? deepMerge(cur, v, true) : v);
  }
  return out;
}

/** Best-effort name of the variable a filter is applied to (`x.y | mandatory` → `x.y`). */
function subjectOf(self: FilterThis): string | undefined {
  const input = self.token?.input;
  const begin = self.token?.begin;
  if (typeof input !== 'string' || typeof begin !== 'number') return undefined;
  const m = /([A-Za-z_][\w-]*(?:\.[\w-]+|\[[^\]]*\])*)\s*\|\s*$/.exec(input.slice(0, begin));
  return m?.[1];
}

/**
 * The text of a string-literal argument exactly as written (only the quote character unescaped),
 * so that regular expressions need no double escaping: `regex_replace: "\d+"` means the regex `\d+`.
 * Falls back to the evaluated value for variables and other expressions.
 */
function rawArg(self: FilterThis, index: number, evaluated: unknown): unknown {
  const tok = self.token?.args?.[index] as { kind?: unknown; getText?: () => string } | undefined;
  if (!tok || Array.isArray(tok) || tok.kind !== TokenKind.Quoted || typeof tok.getText !== 'function') return evaluated;
  const text = tok.getText();
  const q = text[0];
  return text.slice(1, -1).split(`\\${q}`).join(q);
}

/** Translate Python/Ansible-style backreferences (`\1`, `\g<1>`, `\g<name>`) to JavaScript (`$1`, `$<name>`). */
function jsReplacement(rep: string): string {
  return rep
    .replace(/\\g<(\d+)>/g, '$$$1')
    .replace(/\\g<([A-Za-z_]\w*)>/g, '$$<$1>')
    .replace(/\\(\d)/g, '$$$1');
}

function regex(pattern: unknown, flags: unknown, extra: string): RegExp {
  const f = typeof flags === 'string' ? flags : '';
  const all = [...new Set((f + extra).split(''))].join('');
  try {
    return new RegExp(String(toValue(pattern)), all);
  } catch (e) {
    throw new Error(`invalid regular expression ${JSON.stringify(String(pattern))}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function isEmptyish(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isPlainMap(v)) return Object.keys(v).length === 0;
  return false;
}

/** kplay filters by name. Each is also documented in the README filter table. */
export const FILTERS: Readonly<Record<string, FilterFn>> = {
  /** `x | to_json` / `x | to_json: 2` — JSON text (optional indent). */
  to_json(value, indent) {
    return JSON.stringify(toValue(value) ?? null, null, toNumberIndent(indent, 0)) ?? 'null';
  },
  /** `x | to_yaml` — YAML text without the trailing newline (optional indent, default 2; `yes`/`on`-like strings quoted for YAML 1.1 readers). */
  to_yaml(value, indent) {
    const opts = { indent: Math.max(toNumberIndent(indent, 2), 1), version: '1.1' as const };
    return stringifyYaml(toValue(value) ?? null, opts).replace(/\n$/, '');
  },
  /** `s | from_json` — parse JSON text into a value. */
  from_json(value) {
    try {
      return JSON.parse(str(value)) as unknown;
    } catch (e) {
      throw new Error(`from_json: ${e instanceof Error ? e.message : String(e)}`);
    }
  },
  /** `s | from_yaml` — parse YAML text (one document; aliases capped) into a value. */
  from_yaml(value) {
    try {
      return parseYamlText(str(value), { maxAliasCount: 100, uniqueKeys: true }) as unknown;
    } catch (e) {
      throw new Error(`from_yaml: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
    }
  },
  /** `s | b64encode` — base64 of the UTF-8 bytes. */
  b64encode(value) {
    return Buffer.from(str(value), 'utf8').toString('base64');
  },
  /** `s | b64decode` — decode base64 to UTF-8 text. */
  b64decode(value) {
    return Buffer.from(str(value), 'base64').toString('utf8');
  },
  /** `s | sha256` — hex SHA-256 of the UTF-8 text. */
  sha256(value) {
    return createHash('sha256').update(str(value), 'utf8').digest('hex');
  },
  /**
   * `x | default: d` — Liquid's `default` (replaces nil, false, "" and []; `allow_false: true` keeps false),
   * plus a second positional argument: `true` also replaces 0 and {} (Ansible `default(d, true)`),
   * `false` replaces only nil/undefined.
   */
  default(value, def, ...rest) {
    const v: unknown = toValue(value);
    const { positional, keywords } = splitArgs(rest);
    const mode = positional[0];
    if (mode === true) return isEmptyish(v) ? def : v;
    if (mode === false) return v === null || v === undefined ? def : v;
    if (Array.isArray(v) || typeof v === 'string') return v.length ? v : def;
    if (v === false && keywords.get('allow_false') === true) return false;
    return v === false || v === null || v === undefined ? def : v;
  },
  /** `x | mandatory` — fail with "mandatory variable … is not set" when x is nil. */
  mandatory(value, msg) {
    const v: unknown = toValue(value);
    if (v === null || v === undefined) {
      if (typeof msg === 'string' && msg) throw new Error(msg);
      const name = subjectOf(this);
      throw new Error(name ? `mandatory variable "${name}" is not set` : 'mandatory variable not set');
    }
    return v;
  },
  /** `s | regex_replace: "pat", "rep", "flags"` — replace every match (`\1`/`$1` backrefs; flags e.g. "i", "m"; literals taken raw). */
  regex_replace(value, pattern, replacement, flags) {
    const r = rawArg(this, 1, replacement);
    const rep = r === undefined || r === null ? '' : String(toValue(r));
    return str(value).replace(regex(rawArg(this, 0, pattern), flags, 'g'), jsReplacement(rep));
  },
  /** `s | regex_search: "pat", "flags"` — first match (or its first group when the pattern has one), nil if none. */
  regex_search(value, pattern, flags) {
    const m = regex(rawArg(this, 0, pattern), flags, '').exec(str(value));
    if (!m) return null;
    return m.length > 1 ? (m[1] ?? null) : m[0];
  },
  /** `s | regex_findall: "pat", "flags"` — every match (first group when the pattern has one). */
  regex_findall(value, pattern, flags) {
    const out: unknown[] = [];
    for (const m of str(value).matchAll(regex(rawArg(this, 0, pattern), flags, 'g'))) out.push(m.length > 1 ? (m[1] ?? null) : m[0]);
    return out;
  },
  /** `s | quote` — quote for a POSIX shell (like Python's shlex.quote). */
  quote(value) {
    const s = str(value);
    if (s === '') return "''";
    if (/^[\w@%+=:,./-]+$/.test(s)) return s;
    return `'${s.replace(/'/g, `'"'"'`)}'`;
  },
  /** `x | bool` — true for true, 1, "true", "yes", "on", "y", "1" (any case); false otherwise. */
  bool(value) {
    const v: unknown = toValue(value);
    if (typeof v === 'boolean') return v;
    if (typeof v === 'number') return v === 1;
    if (typeof v === 'string') return ['true', 'yes', 'on', 'y', '1'].includes(v.trim().toLowerCase());
    return false;
  },
  /** `x | int` — integer value (0 when not a number, like Ansible). */
  int(value) {
    const v: unknown = toValue(value);
    const n = typeof v === 'number' ? Math.trunc(v) : parseInt(String(v ?? ''), 10);
    return Number.isFinite(n) ? n : 0;
  },
  /** `x | to_int` — same as `int`. */
  to_int(value) {
    return (FILTERS.int as FilterFn).call(this, value);
  },
  /** `x | string` — text form (maps and lists as JSON, nil as ""). */
  string(value) {
    return str(value);
  },
  /** `m | keys` — the keys of a map. */
  keys(value) {
    const v: unknown = toValue(value);
    return isPlainMap(v) ? Object.keys(v) : [];
  },
  /** `m | values` — the values of a map. */
  values(value) {
    const v: unknown = toValue(value);
    return isPlainMap(v) ? Object.values(v) : [];
  },
  /** `m | dict2items` — `[{key, value}, …]` (names configurable: `key_name: "k", value_name: "v"`). */
  dict2items(value, ...args) {
    const v: unknown = toValue(value);
    if (!isPlainMap(v)) throw new Error('dict2items expects a map');
    const { positional, keywords } = splitArgs(args);
    const k = String(keywords.get('key_name') ?? positional[0] ?? 'key');
    const val = String(keywords.get('value_name') ?? positional[1] ?? 'value');
    return Object.entries(v).map(([key, value]) => {
      const item: Record<string, unknown> = {};
      setOwn(item, k, key);
      setOwn(item, val, value);
      return item;
    });
  },
  /** `l | items2dict` — inverse of dict2items (names configurable: `key_name: "k", value_name: "v"`). */
  items2dict(value, ...args) {
    const v: unknown = toValue(value);
    if (!Array.isArray(v)) throw new Error('items2dict expects a list of maps');
    const { positional, keywords } = splitArgs(args);
    const k = String(keywords.get('key_name') ?? positional[0] ?? 'key');
    const val = String(keywords.get('value_name') ?? positional[1] ?? 'value');
    const out: Record<string, unknown> = {};
    for (const item of v) {
      if (!isPlainMap(item) || !Object.prototype.hasOwnProperty.call(item, k)) throw new Error(`items2dict: every item needs a "${k}"`);
      setOwn(out, String(item[k]), Object.prototype.hasOwnProperty.call(item, val) ? item[val] : null);
    }
    return out;
  },
  /** `a | combine: b, c` — deep merge of maps (later wins; lists replaced); `recursive: false` for a shallow merge. */
  combine(value, ...args) {
    const { positional, keywords } = splitArgs(args);
    const recursive = keywords.get('recursive') !== false;
    let out: Record<string, unknown> = {};
    for (const m of [value, ...positional]) {
      const v: unknown = toValue(m);
      if (v === null || v === undefined) continue;
      if (!isPlainMap(v)) throw new Error('combine expects maps');
      out = deepMerge(out, v, recursive);
    }
    return out;
  },
  /** `p | basename` — last path component. */
  basename(value) {
    return posix.basename(str(value));
  },
  /** `p | dirname` — path without its last component. */
  dirname(value) {
    return posix.dirname(str(value));
  },
  /** `s | lower` — lowercase (alias of Liquid's `downcase`). */
  lower(value) {
    return str(value).toLowerCase();
  },
  /** `s | upper` — uppercase (alias of Liquid's `upcase`). */
  upper(value) {
    return str(value).toUpperCase();
  },
  /** `x | length` — number of items of a list/map or characters of a string. */
  length(value) {
    const v: unknown = toValue(value);
    if (Array.isArray(v) || typeof v === 'string') return v.length;
    if (isPlainMap(v)) return Object.keys(v).length;
    return 0;
  },
};

/** The filters in the shape liquidjs' `registerFilter` takes. */
export function filterEntries(): [string, FilterImplOptions][] {
  return Object.entries(FILTERS);
}

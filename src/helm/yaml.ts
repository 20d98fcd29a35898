/**
 * YAML as helm reads a chart's files (`sigs.k8s.io/yaml` over go-yaml v2, then JSON): YAML 1.1
 * booleans (`yes`, `on`, `y`, also as keys), merge keys (`<<`), a later duplicate key winning, and
 * plain scalars resolved as go-yaml v2 resolves them — integers as Go's `ParseInt(s, 0, 64)`
 * after removing `_` (`0x1F`, `0o17`, `0b101`, `0777` octal), then `uint64`, then decimal floats;
 * a float out of range (`1e400`), a timestamp (`2001-12-14`) or a sexagesimal (`1:20`) stays the
 * text it is. Values come out as helm stores them in a release (JSON types).
 */
import YAML, { type ScalarTag, type Tags } from 'yaml';
import { withoutBom } from '../load/bom.js';

const INT = 'tag:yaml.org,2002:int';
const FLOAT = 'tag:yaml.org,2002:float';
const TIMESTAMP = 'tag:yaml.org,2002:timestamp';

/** go-yaml v2's float syntax (after `_` removal). */
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;
const SPECIAL_FLOATS: Record<string, number> = {
  '.inf': Infinity, '.Inf': Infinity, '.INF': Infinity, '+.inf': Infinity, '+.Inf': Infinity, '+.INF': Infinity,
  '-.inf': -Infinity, '-.Inf': -Infinity, '-.INF': -Infinity, '.nan': NaN, '.NaN': NaN, '.NAN': NaN,
};

/** Go's `strconv.ParseInt(s, 0, bits)` digits part: the value, or undefined when not an integer. */
function goInt(s: string, signed: boolean): bigint | undefined {
  let t = s;
  let neg = false;
  if (signed && (t[0] === '+' || t[0] === '-')) {
    neg = t[0] === '-';
    t = t.slice(1);
  }
  let digits: string;
  let radix: string;
  if (/^0[xX]/.test(t)) [radix, digits] = ['0x', t.slice(2)];
  else if (/^0[oO]/.test(t)) [radix, digits] = ['0o', t.slice(2)];
  else if (/^0[bB]/.test(t)) [radix, digits] = ['0b', t.slice(2)];
  else if (/^0./.test(t)) [radix, digits] = ['0o', t.slice(1)];
  else [radix, digits] = ['', t];
  const valid = radix === '0x' ? /^[0-9a-fA-F]+$/ : radix === '0o' ? /^[0-7]+$/ : radix === '0b' ? /^[01]+$/ : /^[0-9]+$/;
  if (!valid.test(digits)) return undefined;
  const v = BigInt(`${radix}${digits}`) * (neg ? -1n : 1n);
  if (signed ? v < INT64_MIN || v > INT64_MAX : v > UINT64_MAX) return undefined;
  return v;
}

/**
 * A plain scalar that starts like a number (`+`, `-`, `.`, a digit), resolved as go-yaml v2 does.
 * @example goNumber('0o17') // 15
 * @example goNumber('1:20') // '1:20'
 */
export function goNumber(text: string): unknown {
  if (text in SPECIAL_FLOATS) return SPECIAL_FLOATS[text];
  if (text.startsWith('.')) {
    const f = /^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(text) ? Number(text) : NaN;
    return Number.isFinite(f) ? f : text;
  }
  if (TIMESTAMP_RE.test(text)) return text;
  const plain = text.replace(/_/g, '');
  const i = goInt(plain, true) ?? goInt(plain, false);
  if (i !== undefined) return Number(i);
  if (YAML_STYLE_FLOAT.test(plain)) {
    const f = Number(plain);
    if (Number.isFinite(f)) return f;
  }
  if (/^-?0[bB][01]+$/.test(plain)) return text; // out of range
  return text;
}

/**
 * Go's `strconv.FormatFloat(f, 'g', -1, 32)`: the shortest float32 digits, in `%e` form when the
 * exponent is below -4 or at least 6.
 * @example goFloat32String(12345678.9) // '1.2345679e+07'
 */
export function goFloat32String(f: number): string {
  const x = Math.fround(f);
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'NaN' : x > 0 ? '+Inf' : '-Inf';
  let p = 1;
  while (p < 9 && Math.fround(Number(x.toPrecision(p))) !== x) p++;
  const [mant = '', e = '0'] = Math.abs(x).toExponential(p - 1).split('e');
  const digits = mant.replace('.', '').replace(/0+$/, '') || '0';
  const exp = Number(e);
  const sign = x < 0 ? '-' : '';
  if (exp < -4 || exp >= 6) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  const dp = exp + 1;
  if (dp <= 0) return `${sign}0.${'0'.repeat(-dp)}${digits}`;
  if (dp >= digits.length) return `${sign}${digits}${'0'.repeat(dp - digits.length)}`;
  return `${sign}${digits.slice(0, dp)}.${digits.slice(dp)}`;
}

const TRUE_WORDS = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']);
const FALSE_WORDS = new Set(['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']);
const NULL_WORDS = new Set(['', '~', 'null', 'Null', 'NULL']);

/**
 * What helm reads into a string field of `Chart.yaml` (`appVersion`, `version`, `name`) from a
 * plain (unquoted) scalar: sigs.k8s.io/yaml turns a resolved boolean into `true`/`false`, an
 * integer into its decimal digits and a float into `FormatFloat(f, 'g', -1, 32)`.
 * @example chartStringOf('1.10') // '1.1'
 * @example chartStringOf('010') // '8'
 */
export function chartStringOf(plain: string): string {
  if (TRUE_WORDS.has(plain)) return 'true';
  if (FALSE_WORDS.has(plain)) return 'false';
  if (NULL_WORDS.has(plain)) return '';
  if (!/^[-+.0-9]/.test(plain) || TIMESTAMP_RE.test(plain)) return plain;
  const clean = plain.replace(/_/g, '');
  const i = plain.startsWith('.') ? undefined : goInt(clean, true) ?? goInt(clean, false);
  if (i !== undefined) return i.toString();
  const f = goNumber(plain);
  return typeof f === 'number' ? goFloat32String(f) : plain;
}

/** go-yaml v2's timestamp forms (kept as text when decoded into an untyped value). */
const TIMESTAMP_RE = /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?$/;

const goNumberTag: ScalarTag = {
  tag: INT,
  default: true,
  test: /^[-+.0-9]/,
  resolve: (s: string): unknown => goNumber(s),
  identify: (): boolean => false,
};

/** The YAML 1.1 tags without its number and timestamp tags, plus {@link goNumberTag}. */
function helmTags(tags: Tags): Tags {
  const kept = tags.filter((t) => typeof t === 'string' ? !['int', 'intHex', 'intOct', 'intTime', 'float', 'floatExp', 'floatNaN', 'floatTime', 'timestamp'].includes(t) : t.tag !== INT && t.tag !== FLOAT && t.tag !== TIMESTAMP);
  return [...kept, goNumberTag];
}

/** Parsed documents of a chart YAML text (`documents`: how many non-empty ones it has). */
export interface HelmYaml {
  /** The first document's value (`null` for an empty text). */
  value: unknown;
  documents: number;
}

/**
 * Parse a chart's YAML text as helm does (see the module comment).
 * @throws Error with YAML's message (line and column) for invalid YAML.
 */
export function parseHelmYaml(text: string): HelmYaml {
  const docs = YAML.parseAllDocuments(withoutBom(text), { version: '1.1', schema: 'yaml-1.1', customTags: helmTags, merge: true, uniqueKeys: false });
  const list = Array.isArray(docs) ? docs : [docs];
  for (const d of list) if (d.errors.length) throw new Error(d.errors[0]?.message ?? 'invalid YAML');
  const values = list.map((d) => d.toJS({ maxAliasCount: 1000 }) as unknown).filter((v) => v !== null && v !== undefined);
  // a JSON round trip: the types helm stores (no undefined, -0 → 0, NaN/Infinity → null)
  const first: unknown = values.length ? JSON.parse(JSON.stringify(values[0])) : null;
  return { value: first, documents: values.length };
}

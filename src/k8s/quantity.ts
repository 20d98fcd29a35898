/**
 * Kubernetes resource quantities (`500m`, `0.5`, `1Gi`, `1e3`): the form the API server stores
 * (k8s.io/apimachinery `resource.Quantity`), so a manifest's `cpu: 0.1` or `memory: 1024Mi` is
 * known to equal the live `100m` / `1Gi` without asking the server (a dry-run).
 */
import { splitApiVersion } from './discovery.js';

const DECIMAL_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIX).map(([s, e]) => [e, s]));
const BINARY_BY_EXPONENT = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
/** apimachinery's parseQuantityString: sign, leading zeros, numerator, `.` denominator, suffix. */
const QUANTITY = /^([+-]?)0*(\d*)(?:\.(\d*))?([eEinumkKMGTP]*(?:[+-]?\d+)?)$/;
const MAX_INT64 = 2n ** 63n - 1n;

const pow = (b: bigint, e: number): bigint => b ** BigInt(e);

/**
 * The string the API server stores for quantity `v` (a string, or a number as JSON sends it),
 * or `undefined` when `v` is not a quantity or takes a path this does not model (negative
 * values, values beyond the suffixes): the caller then cannot tell and asks the server.
 * Mirrors `resource.ParseQuantity` + `Quantity.String()`: a value written in a form the parser
 * takes for canonical is stored as written (`1500`, `1E-3`, `+1`), any other in canonical form.
 * @example storedQuantity(0.1) // '100m'
 * @example storedQuantity('1024Mi') // '1Gi'
 */
export function storedQuantity(v: unknown): string | undefined {
  const str = typeof v === 'number' ? (Number.isFinite(v) ? JSON.stringify(v) : '') : typeof v === 'string' ? v.trim() : '';
  if (str === '0') return str;
  const m = QUANTITY.exec(str);
  if (!m) return undefined;
  const [, sign = '', numDigits = '', denom = '', suffix = ''] = m;
  if (sign === '-' || (numDigits === '' && denom === '' && !/^[+-]?0/.test(str))) return undefined;
  const num = numDigits || '0';
  let format: 'binary' | 'decimal' | 'exponent';
  let exponent: number;
  if (suffix in DECIMAL_SUFFIX) {
    format = 'decimal';
    exponent = DECIMAL_SUFFIX[suffix] ?? 0;
  } else if (suffix in BINARY_SUFFIX) {
    format = 'binary';
    exponent = BINARY_SUFFIX[suffix] ?? 0;
  } else if (/^[eE][+-]?\d+$/.test(suffix)) {
    format = 'exponent';
    exponent = Number(suffix.slice(1));
    if (Math.abs(exponent) > 1000) return undefined;
  } else return undefined;
  const shifted = num + denom;
  // The parser's fast path keeps the text when it looks canonical.
  if (format !== 'binary') {
    const scale = exponent - denom.length;
    if (num.length + denom.length <= 18 && scale >= -9 && scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0' && BigInt(shifted) <= MAX_INT64) return str;
  } else if (denom === '' && 15 - num.length - Math.trunc((exponent * 3) / 10) - 1 >= 0) {
    const value = BigInt(num);
    if ((value & 7n) !== 0n && value * 2n ** BigInt(exponent) <= MAX_INT64) return str;
  }
  // value = mantissa × 10^e10 (× 2^exponent for binary suffixes)
  let mantissa = BigInt(shifted) * (format === 'binary' ? 2n ** BigInt(exponent) : 1n);
  let e10 = (format === 'binary' ? 0 : exponent) - denom.length;
  // Precision below 1n is rounded up.
  if (e10 < -9) {
    const d = pow(10n, -9 - e10);
    mantissa = (mantissa + d - 1n) / d;
    e10 = -9;
  }
  if (mantissa === 0n) return '0';
  if (format === 'binary') {
    // Whole values of at least 1024 stay binary; smaller or fractional ones are shown as decimal.
    const whole = e10 >= 0 ? mantissa * pow(10n, e10) : mantissa % pow(10n, -e10) === 0n ? mantissa / pow(10n, -e10) : undefined;
    if (whole !== undefined && whole >= 1024n) {
      let n = whole;
      let e2 = 0;
      while (n % 1024n === 0n) {
        n /= 1024n;
        e2++;
      }
      const s = BINARY_BY_EXPONENT[e2];
      return s === undefined ? undefined : `${n}${s}`;
    }
    format = 'decimal';
  }
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    e10++;
  }
  const r = ((e10 % 3) + 3) % 3;
  mantissa *= pow(10n, r);
  e10 -= r;
  if (format === 'exponent') return e10 === 0 ? `${mantissa}` : `${mantissa}e${e10}`;
  const s = DECIMAL_BY_EXPONENT.get(e10);
  return s === undefined ? undefined : `${mantissa}${s}`;
}

/**
 * Keys whose values are quantities in the built-in APIs: the resource lists of containers, pod
 * overhead, quotas, limit ranges, node capacity and PVC storage, and emptyDir's `sizeLimit`.
 */
const QUANTITY_MAPS = new Set(['requests', 'limits', 'hard', 'used', 'capacity', 'allocatable', 'overhead', 'default', 'defaultRequest', 'max', 'min', 'maxLimitRequestRatio']);
const QUANTITY_KEYS = new Set(['sizeLimit']);

/** API groups whose objects hold quantities the server rewrites (core, apps, batch, node); custom resources keep what was sent. */
const QUANTITY_GROUPS = new Set(['', 'apps', 'batch', 'node.k8s.io']);

/** True when objects of `apiVersion` have their quantities rewritten by the server (see {@link sameQuantity}). */
export function normalisesQuantities(apiVersion: string): boolean {
  return QUANTITY_GROUPS.has(splitApiVersion(apiVersion).group);
}

/**
 * True when the API server stores `want` (from a manifest) as `live` at a field named `key`
 * inside a map named `parent` because both are the same quantity: `cpu: 0.1` and `100m`.
 * Only for objects of {@link normalisesQuantities} groups.
 */
export function sameQuantity(live: unknown, want: unknown, key: string | undefined, parent: string | undefined): boolean {
  if (typeof live !== 'string' || (typeof want !== 'string' && typeof want !== 'number')) return false;
  if (!(key !== undefined && QUANTITY_KEYS.has(key)) && !(parent !== undefined && QUANTITY_MAPS.has(parent))) return false;
  const stored = storedQuantity(want);
  return stored !== undefined && stored === live;
}
